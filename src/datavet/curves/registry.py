"""The curve-rule registry: one line per rule, in code order. Codes are a contract."""

from __future__ import annotations

from datavet.curves.base import CurveRule
from datavet.curves.generalisation import (
    Overfitting,
    SuspiciouslyGoodValidation,
    ValBetterThanTrain,
)
from datavet.curves.gradients import GradientSpikes
from datavet.curves.learning_rate import LossDivergence, LossOscillation
from datavet.curves.nonfinite import NonFiniteLoss
from datavet.curves.plateau import LossBarelyMoves, NoLearningPlateau
from datavet.errors import UsageError

CURVE_RULES: tuple[type[CurveRule], ...] = (
    NonFiniteLoss,  # C001
    LossDivergence,  # C002
    LossOscillation,  # C003
    NoLearningPlateau,  # C004
    LossBarelyMoves,  # C005
    Overfitting,  # C006
    ValBetterThanTrain,  # C007
    SuspiciouslyGoodValidation,  # C008
    GradientSpikes,  # C009
)

BY_CODE: dict[str, type[CurveRule]] = {r.code: r for r in CURVE_RULES}
BY_NAME: dict[str, type[CurveRule]] = {r.name: r for r in CURVE_RULES}


def find(key: str) -> type[CurveRule] | None:
    """A curve rule by code (``C002``) or name (``loss-divergence``), or None."""
    return BY_CODE.get(key.strip().upper()) or BY_NAME.get(key.strip().lower())


def _matches(selector: str) -> list[type[CurveRule]]:
    sel = selector.strip()
    if not sel:
        return []
    if sel.upper() == "ALL":
        return list(CURVE_RULES)
    if sel.lower() in BY_NAME:
        return [BY_NAME[sel.lower()]]
    found = [r for r in CURVE_RULES if r.code.startswith(sel.upper())]
    if not found:
        raise UsageError(
            f"unknown curve rule selector {selector!r}: use a code (C002), a prefix (C, C00) or "
            "a name (loss-divergence); `datavet rules` lists them"
        )
    return found


def select_curve_rules(select=None, ignore=None) -> list[type[CurveRule]]:
    """Curve rules chosen by ``select`` (default: all) minus ``ignore``, in code order."""
    select, ignore = _split(select), _split(ignore)
    chosen = set(CURVE_RULES) if not select else {r for s in select for r in _matches(s)}
    dropped = {r for s in ignore for r in _matches(s)}
    return [r for r in CURVE_RULES if r in chosen and r not in dropped]


def _split(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    return [part for item in value for part in str(item).split(",") if part.strip()]
