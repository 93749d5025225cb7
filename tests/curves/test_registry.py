"""The curve rules' view of the one registry: their causes in order, their selection, and
``datavet rule`` finds them (the meta-tests over every rule of every family are in
tests/test_rules_registry.py)."""

from __future__ import annotations

import pytest

import datavet
from datavet.curves.causes import CAUSES, ORDER, check_order
from datavet.rules import CURVE_RULES, lookup, select_curve_rules


@pytest.mark.parametrize("rule", CURVE_RULES, ids=lambda r: r.code)
def test_causes_follow_the_source_order_and_have_a_check(rule):
    assert rule.causes, rule.code
    check_order(rule.causes)
    for key, why in rule.causes:
        assert key in CAUSES and why
    assert [k for k in ORDER[:8]] == [
        "data",
        "normalisation",
        "learning_rate",
        "initialisation",
        "mask",
        "eval_mode",
        "aggregation",
        "loop_order",
    ]


def test_check_order_rejects_a_shuffled_list():
    with pytest.raises(ValueError):
        check_order((("learning_rate", "x"), ("data", "y")))


def test_data_causes_are_checked_by_audit_and_wiring_by_probe():
    assert CAUSES["data"].check.startswith("datavet audit")
    for key in ("initialisation", "eval_mode", "aggregation", "loop_order"):
        assert "datavet probe" in CAUSES[key].check


@pytest.mark.parametrize("key", ["C003", "loss-oscillation", "c003"])
def test_lookup_finds_curve_rules(key):
    assert lookup(key).code == "C003"


def test_select_and_ignore():
    assert [r.code for r in select_curve_rules("C00", "C002,overfitting")] == [
        "C001",
        "C003",
        "C004",
        "C005",
        "C007",
        "C008",
        "C009",
    ]
    with pytest.raises(datavet.UsageError):
        select_curve_rules("X9")
