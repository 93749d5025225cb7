"""The rule registry: one line per rule of every family, in code order.

Codes are a contract: never reuse or renumber one. Adding a rule of any family is its module,
one line in :data:`REGISTRY` and its test; ``datavet rules``, ``datavet rule CODE``, the
generated docs, selection and every renderer read the rules from here. ``RULES`` (the tabular
and tensor rules that :func:`datavet.audit` runs), ``datavet.PROBES`` and
``datavet.CURVE_RULES`` are views of it, by family.
"""

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
from datavet.curves.base import CurveRule
from datavet.curves.generalisation import (
    Overfitting,
    SuspiciouslyGoodValidation,
    ValBetterThanTrain,
)
from datavet.curves.gradients import GradientSpikes
from datavet.curves.learning_rate import LearningRateCollapse, LossDivergence, LossOscillation
from datavet.curves.nonfinite import NonFiniteLoss
from datavet.curves.plateau import LossBarelyMoves, NoLearningPlateau
from datavet.curves.validation_mode import ValidationInTrainMode
from datavet.errors import UsageError
from datavet.framework import NEEDS, Rule, choose, split_selectors
from datavet.framework import match_selector as _match_selector
from datavet.probes.activations import SaturatedActivations, VanishingActivations
from datavet.probes.amp_scaler import AmpWithoutGradScaler
from datavet.probes.base import Probe
from datavet.probes.determinism import EvalNondeterminism
from datavet.probes.double_softmax import DoubleSoftmax
from datavet.probes.eval_pass import EvalPassChangesModel
from datavet.probes.fp16_underflow import Fp16GradientUnderflow
from datavet.probes.future_leakage import FutureLeakage
from datavet.probes.initial_loss import InitialLoss
from datavet.probes.loss_reduction import BatchSizeDependentLoss
from datavet.probes.monitor import (
    Fp16RangeLimits,
    GradientSpike,
    NonFiniteStep,
    UpdateRatioOutOfRange,
    ZeroGradientLayer,
)
from datavet.probes.no_gradient import ParametersWithoutGradient
from datavet.probes.nonfinite import NonFiniteBackward, NonFiniteForward
from datavet.probes.overfit import OverfitBatch
from datavet.probes.padding_loss import PaddingInLoss
from datavet.probes.stale_gradients import StaleGradients

REGISTRY: tuple[type[Rule], ...] = (
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
    InitialLoss,  # M001
    OverfitBatch,  # M002
    DoubleSoftmax,  # M003
    NonFiniteForward,  # M004
    NonFiniteBackward,  # M005
    SaturatedActivations,  # M006
    VanishingActivations,  # M007
    EvalNondeterminism,  # M008
    BatchSizeDependentLoss,  # M009
    StaleGradients,  # M010
    GradientSpike,  # M011 (GradientMonitor)
    NonFiniteStep,  # M012 (GradientMonitor)
    FutureLeakage,  # M013
    PaddingInLoss,  # M014
    ParametersWithoutGradient,  # M015
    Fp16GradientUnderflow,  # M016
    EvalPassChangesModel,  # M017
    ZeroGradientLayer,  # M018 (GradientMonitor)
    AmpWithoutGradScaler,  # M019
    UpdateRatioOutOfRange,  # M020 (GradientMonitor)
    Fp16RangeLimits,  # M021 (GradientMonitor)
    NonFiniteLoss,  # C001
    LossDivergence,  # C002
    LossOscillation,  # C003
    NoLearningPlateau,  # C004
    LossBarelyMoves,  # C005
    Overfitting,  # C006
    ValBetterThanTrain,  # C007
    SuspiciouslyGoodValidation,  # C008
    GradientSpikes,  # C009
    LearningRateCollapse,  # C010
    ValidationInTrainMode,  # C011
)

CODES: dict[str, type[Rule]] = {r.code: r for r in REGISTRY}
NAMES: dict[str, type[Rule]] = {r.name: r for r in REGISTRY}

# The rules datavet.audit runs (tabular and tensor inputs): a view of the registry.
RULES: tuple[type[Auditor], ...] = tuple(r for r in REGISTRY if issubclass(r, Auditor))
BY_CODE: dict[str, type[Auditor]] = {r.code: r for r in RULES}
BY_NAME: dict[str, type[Auditor]] = {r.name: r for r in RULES}

__all__ = [
    "BY_CODE",
    "BY_NAME",
    "CODES",
    "CURVE_RULES",
    "PROBES",
    "NAMES",
    "REGISTRY",
    "RULES",
    "choose",
    "find",
    "family",
    "in_section",
    "lookup",
    "elsewhere",
    "match_selector",
    "find_curve_rule",
    "lookup_probe",
    "probe_by_key",
    "select_curve_rules",
    "select_probes",
    "select_rules",
    "split_selectors",
]


def find(key: str) -> type[Rule] | None:
    """A rule of any family by code (``V001``, ``M002``) or name (``nan-values``), or None."""
    key = str(key).strip()
    return CODES.get(key.upper()) or NAMES.get(key.lower())


def lookup(key: str) -> type[Rule]:
    """A rule of any family by code (``V001``) or name (``nan-values``)."""
    rule = find(key)
    if rule is None:
        raise UsageError(f"unknown rule {key!r}; `datavet rules` lists them")
    return rule


def in_section(code: str, section: str) -> bool:
    """Whether rule ``code`` declares report section ``section`` (framework.SECTIONS)."""
    rule = CODES.get(code)
    return rule is not None and section in rule.sections


def family(base: type[Rule]) -> tuple[type[Rule], ...]:
    """The registry's rules of one family (``Auditor``, ``Probe``, ``CurveRule``), in order."""
    return tuple(r for r in REGISTRY if issubclass(r, base))


def select_rules(
    select: list[str] | tuple[str, ...] | str | None = None,
    ignore: list[str] | tuple[str, ...] | str | None = None,
) -> list[type[Auditor]]:
    """Rules chosen by ``select`` (default: all) minus ``ignore``, in code order.

    Selectors are codes, code prefixes (a family: ``L``, ``S00``) or names, as in ruff.
    """
    return choose(RULES, select, ignore, lambda sel: match_selector(sel, RULES))


# The model probes (M): datavet.probe runs those that need a model, a GradientMonitor's report
# those that need its history.
PROBES: tuple[type[Probe], ...] = tuple(r for r in REGISTRY if issubclass(r, Probe))
_PROBE_CODES: dict[str, type[Probe]] = {p.code: p for p in PROBES}
_PROBE_NAMES: dict[str, type[Probe]] = {p.name: p for p in PROBES}


def lookup_probe(key: str) -> type[Probe] | None:
    """A probe by code (``M002``) or name (``cannot-overfit-batch``); None when unknown."""
    return _PROBE_CODES.get(key.strip().upper()) or _PROBE_NAMES.get(key.strip().lower())


def probe_by_key(key: str) -> type[Probe]:
    """A probe by code or name; a UsageError when there is none."""
    probe = lookup_probe(key)
    if probe is None:
        raise UsageError(f"unknown probe {key!r}; `datavet rules` lists them")
    return probe


def _probe_matches(selector: str, pool: list[type[Probe]], runner: str) -> list[type[Probe]]:
    sel = selector.strip()
    if not sel:
        return []
    if sel.upper() == "ALL":
        return list(pool)
    by_name = _PROBE_NAMES.get(sel.lower())
    if by_name is not None and by_name in pool:
        return [by_name]
    found = [p for p in pool if p.code.startswith(sel.upper())]
    others = [
        p for p in PROBES if p not in pool and (p.code.startswith(sel.upper()) or p is by_name)
    ]
    if not found and others:
        need = next(n for n in others[0].needs if n != runner and n in ("model", "monitor"))
        raise UsageError(
            f"{', '.join(p.code for p in others)} cannot be selected here: they need {NEEDS[need]}"
        )
    if not found:  # no probe at all: another command's rule, or unknown
        return match_selector(
            selector,
            pool,
            what="probe",
            example="a code (M002), a prefix (M00) or a name (cannot-overfit-batch)",
        )
    return found


def select_probes(select=None, ignore=None, *, needs: str = "model") -> list[type[Probe]]:
    """Probes chosen by ``select`` (default: all that ``needs`` this runner) minus ``ignore``."""
    pool = [p for p in PROBES if needs in p.needs]
    return choose(pool, select, ignore, lambda sel: _probe_matches(sel, pool, needs))


# The training-curve rules (C): datavet.diagnose_curves runs them on a training log.
CURVE_RULES: tuple[type[CurveRule], ...] = tuple(r for r in REGISTRY if issubclass(r, CurveRule))


def find_curve_rule(key: str) -> type[CurveRule] | None:
    """A curve rule by code (``C002``) or name (``loss-divergence``), or None."""
    rule = find(key)
    return rule if rule in CURVE_RULES else None


def select_curve_rules(select=None, ignore=None) -> list[type[CurveRule]]:
    """Curve rules chosen by ``select`` (default: all) minus ``ignore``, in code order."""
    return choose(
        CURVE_RULES,
        select,
        ignore,
        lambda sel: match_selector(
            sel,
            CURVE_RULES,
            what="curve rule",
            example="a code (C002), a prefix (C, C00) or a name (loss-divergence)",
        ),
    )


# Who runs each family of rules: its kind, who runs it, and the short name a message uses for
# the command at hand (a probe that needs a GradientMonitor's history is never run by
# ``datavet probe``).
_RUNNERS = {
    "audit": ("data-audit", "`datavet audit`", "audit"),
    "model": ("model-probe", "`datavet probe`", "probe"),
    "monitor": ("gradient-monitor", "datavet.GradientMonitor", "GradientMonitor"),
    "curves": ("training-curve", "`datavet curves`", "curves"),
}


def _family(rule) -> str:
    if rule in CURVE_RULES:
        return "curves"
    if rule in PROBES:
        return "monitor" if "monitor" in rule.needs else "model"
    return "audit"


def elsewhere(selector: str, pool) -> str | None:
    """The message for a selector that names only rules another command runs (``M001`` in an
    audit): which command runs them, and which rules the command at hand runs. None when the
    selector names no rule of any family."""
    sel = selector.strip()
    by_name = NAMES.get(sel.lower())
    others = [by_name] if by_name else [r for r in REGISTRY if r.code.startswith(sel.upper())]
    others = [r for r in others if r not in pool]
    if not others or not pool:
        return None
    families = [_RUNNERS[f] for f in dict.fromkeys(_family(r) for r in others)]
    if len(others) == 1:
        kind, runner, _ = families[0]
        head = f"{others[0].code} ({others[0].name}) is a {kind} rule: {runner} runs it"
    else:
        head = f"{sel!r} names " + " and ".join(f"{k} rules (run by {r})" for k, r, _ in families)
    prefixes = list(dict.fromkeys(r.code.rstrip("0123456789") for r in pool))
    taken = ", ".join(prefixes[:-1]) + " and " + prefixes[-1] if len(prefixes) > 1 else prefixes[0]
    here = _RUNNERS[_family(next(iter(pool)))][2]
    return f"{head}; {here} runs {taken} rules"


def match_selector(selector: str, pool, **kwargs) -> list:
    """:func:`datavet.framework.match_selector`, and for a selector that names only rules of
    another command (``M001`` in an audit), a message that says which command runs them."""
    try:
        return _match_selector(selector, pool, **kwargs)
    except UsageError:
        other = elsewhere(selector, pool)
        if other is None:
            raise
        raise UsageError(other) from None
