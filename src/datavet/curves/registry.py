"""The curve rules' view of the one registry (:data:`datavet.rules.REGISTRY`), and their
selection. A curve rule is listed once, in :mod:`datavet.rules`."""

from __future__ import annotations

from datavet.curves.base import CurveRule
from datavet.framework import choose, match_selector
from datavet.rules import family

CURVE_RULES: tuple[type[CurveRule], ...] = family(CurveRule)

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
