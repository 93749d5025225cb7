"""The curve-rule registry: every rule registered once, in code order, documented, its causes
in the source chapter's order, tested; ``datavet rule`` finds them."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import datavet
import datavet.curves
from datavet.curves.base import CurveRule
from datavet.curves.causes import CAUSES, ORDER, check_order
from datavet.curves.registry import CURVE_RULES, select_curve_rules
from datavet.rules import lookup

SECTIONS = ("**What it checks**", "**Why it matters**", "**How to fix**")
TESTS = Path(__file__).resolve().parent


def rule_classes():
    found = []
    for info in pkgutil.iter_modules(datavet.curves.__path__):
        module = importlib.import_module(f"datavet.curves.{info.name}")
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(obj, CurveRule)
                and obj is not CurveRule
                and obj.__module__ == module.__name__
            ):
                found.append(obj)
    return found


def test_every_rule_is_registered_once_in_code_order():
    classes = rule_classes()
    assert len(classes) == 11
    assert set(classes) == set(CURVE_RULES) and len(set(CURVE_RULES)) == len(CURVE_RULES)
    codes = [r.code for r in CURVE_RULES]
    assert codes == sorted(codes) and codes == [f"C{i:03d}" for i in range(1, 12)]
    assert datavet.CURVE_RULES is CURVE_RULES


@pytest.mark.parametrize("rule", CURVE_RULES, ids=lambda r: r.code)
def test_rule_is_documented(rule):
    doc = inspect.cleandoc(rule.__doc__ or "")
    positions = [doc.find(s) for s in SECTIONS]
    assert all(p > 0 for p in positions) and positions == sorted(positions)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
    assert rule.summary and rule.thresholds is not None
    for key in rule.thresholds:  # every threshold is explained where it is used
        assert f"``{key}``" in doc, key


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


def test_every_rule_module_has_a_test_module():
    modules = {r.__module__.rsplit(".", 1)[1] for r in CURVE_RULES}
    for m in modules:
        assert (TESTS / f"test_{m}.py").exists(), m


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
