"""The curve-rule registry: one line per rule, in code order. Codes are a contract."""

from __future__ import annotations

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
from datavet.rules import choose, match_selector

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
    LearningRateCollapse,  # C010
    ValidationInTrainMode,  # C011
)

BY_CODE: dict[str, type[CurveRule]] = {r.code: r for r in CURVE_RULES}
BY_NAME: dict[str, type[CurveRule]] = {r.name: r for r in CURVE_RULES}


def find(key: str) -> type[CurveRule] | None:
    """A curve rule by code (``C002``) or name (``loss-divergence``), or None."""
    return BY_CODE.get(key.strip().upper()) or BY_NAME.get(key.strip().lower())


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
