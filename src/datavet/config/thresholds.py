"""The range of every rule threshold, and the check of a threshold value."""

from __future__ import annotations

import math
from typing import Any

from datavet.config.text import short_repr
from datavet.framework import RANGES, Rule

THRESHOLD_RANGES = RANGES  # the names several rules share (a rule's own: ``Rule.ranges``)


def threshold_problem(name: str, value: Any, rule: type[Rule] | None = None) -> str | None:
    """Why ``value`` cannot be the threshold ``name`` of ``rule`` (None when it can): a finite
    number in the threshold's range, a whole number for counts."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return f"expected a number, got {short_repr(value)}"
    found = rule.range_of(name) if rule is not None else RANGES.get(name)
    low, high, bounds, whole = found or (-math.inf, math.inf, "[]", False)
    if whole and float(value) != int(value):
        return f"expected a whole number, got {short_repr(value)}"
    below = value < low or (value == low and bounds[0] == "(")
    above = value > high or (value == high and bounds[1] == ")")
    if below or above:
        return f"{short_repr(value)} is out of range {bounds[0]}{low:g}, {high:g}{bounds[1]}"
    return None
