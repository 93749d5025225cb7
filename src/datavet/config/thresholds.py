"""The range of every rule threshold, and the checks of the rule and threshold settings the
config file and :func:`datavet.audit` share (one check for both ways in)."""

from __future__ import annotations

import difflib
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


def audit_rule(key: str) -> type[Rule]:
    """The audit rule a ``severity`` / ``thresholds`` key names (a code or a name, any case).
    UsageError for a rule of another command (``M001``: ``datavet probe`` runs it) or an
    unknown one (with the closest code)."""
    from datavet.rules import BY_CODE, BY_NAME, RULES, elsewhere

    text = str(key)
    rule = BY_CODE.get(text.strip().upper()) or BY_NAME.get(text.strip().lower())
    if rule is not None:
        return rule
    from datavet.errors import UsageError

    other = elsewhere(text, RULES) if text.strip() else None
    if other is not None:
        raise UsageError(other)
    close = difflib.get_close_matches(text.upper(), list(BY_CODE), n=1)
    maybe = f" (did you mean {close[0]!r}?)" if close else ""
    raise UsageError(f"unknown rule {text!r}{maybe}; `datavet rules` lists them")


def threshold_name_problem(name: Any, rule: type[Rule]) -> str | None:
    """Why ``name`` is not a threshold of ``rule`` (None when it is), whether or not the rule
    is selected: a typo must never be found only when the rule happens to run."""
    known = list(rule.thresholds)
    if not known:
        return f"{rule.code} has no thresholds"
    if name in known:
        return None
    close = difflib.get_close_matches(str(name).replace("-", "_"), known, n=1)
    maybe = f" (did you mean {close[0]!r}?)" if close else ""
    return f"{rule.code} has no threshold {name!r}{maybe}; its thresholds: {', '.join(known)}"
