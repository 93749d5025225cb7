"""The rule registry: one line per rule, in code order. Codes are a contract; never reuse one."""

from __future__ import annotations

from datavet.auditors.base import Auditor
from datavet.auditors.class_imbalance import ClassImbalance
from datavet.auditors.conflicting_labels import ConflictingLabels
from datavet.auditors.constant_feature import ConstantFeature
from datavet.auditors.duplicate_rows import DuplicateRows
from datavet.auditors.feature_drift import FeatureDrift
from datavet.auditors.group_leakage import GroupLeakage
from datavet.auditors.high_cardinality_label import HighCardinalityLabel
from datavet.auditors.id_column_overlap import IdColumnOverlap
from datavet.auditors.inf_values import InfValues
from datavet.auditors.label_shift import LabelShift
from datavet.auditors.missing_labels import MissingLabels
from datavet.auditors.mixed_types import MixedTypes
from datavet.auditors.nan_values import NanValues
from datavet.auditors.near_constant_feature import NearConstantFeature
from datavet.auditors.near_duplicate_tensors import NearDuplicateTensors
from datavet.auditors.near_duplicates import NearDuplicates
from datavet.auditors.no_signal import NoSignal
from datavet.auditors.numbers_as_text import NumbersAsText
from datavet.auditors.order_feature_leakage import OrderFeatureLeakage
from datavet.auditors.positional_label_drift import PositionalLabelDrift
from datavet.auditors.scale_mismatch import ScaleMismatch
from datavet.auditors.schema_mismatch import SchemaMismatch
from datavet.auditors.sentinel_values import SentinelValues
from datavet.auditors.single_feature_leakage import SingleFeatureLeakage
from datavet.auditors.split_distinguishable import SplitDistinguishable
from datavet.auditors.suspiciously_good import SuspiciouslyGood
from datavet.auditors.time_order_leakage import TimeOrderLeakage
from datavet.auditors.too_few_rows import TooFewRows
from datavet.auditors.train_test_overlap import TrainTestOverlap
from datavet.auditors.unnormalized_inputs import UnnormalizedInputs
from datavet.auditors.unseen_test_category import UnseenTestCategory
from datavet.auditors.unseen_test_class import UnseenTestClass
from datavet.errors import UsageError

RULES: tuple[type[Auditor], ...] = (
    NanValues,  # V001
    InfValues,  # V002
    MissingLabels,  # V003
    MixedTypes,  # V004
    UnseenTestCategory,  # V005
    NumbersAsText,  # V006
    SentinelValues,  # V007
    ConstantFeature,  # F001
    NearConstantFeature,  # F002
    ScaleMismatch,  # F003
    ClassImbalance,  # L001
    PositionalLabelDrift,  # L002
    UnseenTestClass,  # L003
    LabelShift,  # L004
    HighCardinalityLabel,  # L005
    TrainTestOverlap,  # S001
    DuplicateRows,  # S002
    ConflictingLabels,  # S003
    SchemaMismatch,  # S004
    GroupLeakage,  # S005
    IdColumnOverlap,  # S006
    NearDuplicates,  # S007
    TimeOrderLeakage,  # S008
    TooFewRows,  # S009
    FeatureDrift,  # S010
    SplitDistinguishable,  # S011
    NoSignal,  # B001
    SuspiciouslyGood,  # B002
    SingleFeatureLeakage,  # B003
    OrderFeatureLeakage,  # B004
    UnnormalizedInputs,  # T001
    NearDuplicateTensors,  # T002
)

BY_CODE: dict[str, type[Auditor]] = {r.code: r for r in RULES}
BY_NAME: dict[str, type[Auditor]] = {r.name: r for r in RULES}


def lookup(key: str) -> type[Auditor]:
    """A rule by code (``V001``) or name (``nan-values``)."""
    rule = BY_CODE.get(key.strip().upper()) or BY_NAME.get(key.strip().lower())
    if rule is None:  # the model probes (M codes) share the rule namespace
        from datavet.probes.registry import lookup_probe

        rule = lookup_probe(key)
    if rule is None:  # the curve rules (C codes) too
        from datavet.curves.registry import find as lookup_curve

        rule = lookup_curve(key)
    if rule is None:
        raise UsageError(f"unknown rule {key!r}; `datavet rules` lists them")
    return rule


def match_selector(
    selector: str,
    pool,
    *,
    what: str = "rule",
    example: str = "a code (V001), a prefix (V, F00) or a name (nan-values)",
) -> list:
    """The rules of ``pool`` that one selector means: ``ALL``, a name, or a code prefix."""
    sel = selector.strip()
    if not sel:
        return []
    if sel.upper() == "ALL":
        return list(pool)
    named = [r for r in pool if r.name == sel.lower()]
    if named:
        return named
    found = [r for r in pool if r.code.startswith(sel.upper())]
    if not found:
        raise UsageError(
            f"unknown {what} selector {selector!r}: use {example}; `datavet rules` lists them"
        )
    return found


def choose(pool, select, ignore, matches=None) -> list:
    """The members of ``pool`` chosen by ``select`` (default: all) minus ``ignore``, in pool
    order; ``matches(selector)`` resolves one selector (default: ``match_selector`` on ``pool``)."""
    if matches is None:
        matches = lambda sel: match_selector(sel, pool)  # noqa: E731
    select, ignore = split_selectors(select), split_selectors(ignore)
    chosen = set(pool) if not select else {r for s in select for r in matches(s)}
    dropped = {r for s in ignore for r in matches(s)}
    return [r for r in pool if r in chosen and r not in dropped]


def select_rules(
    select: list[str] | tuple[str, ...] | str | None = None,
    ignore: list[str] | tuple[str, ...] | str | None = None,
) -> list[type[Auditor]]:
    """Rules chosen by ``select`` (default: all) minus ``ignore``, in code order.

    Selectors are codes, code prefixes (a family: ``L``, ``S00``) or names, as in ruff.
    """
    return choose(RULES, select, ignore)


def split_selectors(value) -> list[str]:
    """``"V001,F"`` or ``["V001", "F"]`` -> ``["V001", "F"]``."""
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    return [part for item in value for part in str(item).split(",") if part.strip()]
