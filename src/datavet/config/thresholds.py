"""The range of every rule threshold, and the check of a threshold value."""

from __future__ import annotations

import math
from typing import Any

from datavet.config.text import short_repr

# The range of every rule threshold, by its name: (low, high, bounds included, whole number).
# A threshold outside it would make a rule fire on everything or on nothing (max_ratio = -5
# calls a 1:1 split imbalanced). A test checks that every rule's thresholds are listed here.
_UNIT = (0.0, 1.0, "[]", False)
_COUNT = (1.0, math.inf, "[]", True)
_ABOVE_ONE = (1.0, math.inf, "[]", False)
_POSITIVE = (0.0, math.inf, "(]", False)
_NOT_NEGATIVE = (0.0, math.inf, "[]", False)
THRESHOLD_RANGES: dict[str, tuple[float, float, str, bool]] = {
    "alpha": (0.0, 1.0, "()", False),  # a p-value cut-off: 0 < alpha < 1
    "min_count": _COUNT,
    "min_rows": _COUNT,
    "min_groups": _COUNT,
    "groups": _COUNT,
    "max_classes": _COUNT,
    "digits": _COUNT,
    "min_numeric": _UNIT,
    "min_fraction": _UNIT,
    "max_unique_fraction": _UNIT,
    "min_shared": _UNIT,
    "max_auto_older": _UNIT,
    "min_score": _UNIT,
    "min_order": _UNIT,
    "min_auc": _UNIT,
    "min_tvd": _UNIT,
    "min_v": _UNIT,
    "min_gain": _UNIT,
    "min_rho": _UNIT,
    "max_ratio": _ABOVE_ONE,  # majority:minority, 1 = balanced
    "min_ratio": _ABOVE_ONE,
    "outlier_ratio": _ABOVE_ONE,
    "min_effect": _NOT_NEGATIVE,
    "min_d": _NOT_NEGATIVE,
    "max_abs_mean": _POSITIVE,
    "max_std": _POSITIVE,
    "min_std": _NOT_NEGATIVE,
    "near_constant": _UNIT,
    "min_agree": _UNIT,
    "min_columns": _COUNT,
    "confidence": (0.0, 1.0, "()", False),
    "min_share": _UNIT,  # V007 sentinel-values
    "min_rest": _COUNT,
    "min_distinct": _COUNT,
    "min_z": _POSITIVE,
    "min_gap_iqr": _NOT_NEGATIVE,
    "max_zero_share": _UNIT,
    "min_zero_gap": _UNIT,
    "max_bits": (0.0, 64.0, "[]", True),  # T002 near-duplicate-tensors: of a 64-bit key
    "min_corr": _UNIT,
    "min_detail": _UNIT,
    "min_matches": _COUNT,
}


def threshold_problem(name: str, value: Any) -> str | None:
    """Why ``value`` cannot be the threshold ``name`` (None when it can): a finite number in
    the threshold's range, a whole number for counts."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return f"expected a number, got {short_repr(value)}"
    low, high, bounds, whole = THRESHOLD_RANGES.get(name, (-math.inf, math.inf, "[]", False))
    if whole and float(value) != int(value):
        return f"expected a whole number, got {short_repr(value)}"
    below = value < low or (value == low and bounds[0] == "(")
    above = value > high or (value == high and bounds[1] == ")")
    if below or above:
        return f"{short_repr(value)} is out of range {bounds[0]}{low:g}, {high:g}{bounds[1]}"
    return None
