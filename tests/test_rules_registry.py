"""The rule registry: every auditor registered once, in code order, documented and tested."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pandas as pd
import pytest

import datavet
import datavet.auditors
from datavet import RULES, Severity, UsageError
from datavet.auditors.base import Auditor
from datavet.rules import BY_CODE, lookup, select_rules

TESTS = Path(__file__).resolve().parent
SECTIONS = ("**What it checks**", "**Why it matters**", "**How to fix**")
# Family order of DESIGN.md's rule table: "in code order" means this, then the number.
FAMILIES = "VFLSBTMC"
# The contract from DESIGN.md's table, for the rules that exist: code -> (name, default severity).
CONTRACT = {
    "V001": ("nan-values", Severity.ERROR),
    "V002": ("inf-values", Severity.ERROR),
    "V003": ("missing-labels", Severity.ERROR),
    "V004": ("mixed-types", Severity.WARNING),
    "F001": ("constant-feature", Severity.WARNING),
    "F002": ("near-constant-feature", Severity.INFO),
    "F003": ("scale-mismatch", Severity.WARNING),
    "L001": ("class-imbalance", Severity.WARNING),
    "L002": ("positional-label-drift", Severity.WARNING),
    "L003": ("unseen-test-class", Severity.ERROR),
    "L004": ("label-shift", Severity.WARNING),
    "S001": ("train-test-overlap", Severity.ERROR),
    "S002": ("duplicate-rows", Severity.WARNING),
    "S003": ("conflicting-labels", Severity.WARNING),
    "S004": ("schema-mismatch", Severity.ERROR),
    "B001": ("no-signal", Severity.WARNING),
    "B002": ("suspiciously-good", Severity.WARNING),
    "B003": ("single-feature-leakage", Severity.ERROR),
    "T001": ("unnormalized-inputs", Severity.WARNING),
}


def auditor_classes() -> list[type[Auditor]]:
    """Every concrete Auditor subclass defined in a datavet.auditors.* module."""
    found = []
    for info in pkgutil.iter_modules(datavet.auditors.__path__):
        module = importlib.import_module(f"datavet.auditors.{info.name}")
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(obj, Auditor)
                and obj is not Auditor
                and obj.__module__ == module.__name__
            ):
                found.append(obj)
    return found


def test_there_are_auditors_to_check():
    assert len(auditor_classes()) >= 11 and len(RULES) >= 11


def test_every_auditor_class_is_registered_exactly_once():
    classes = auditor_classes()
    missing = [c.__name__ for c in classes if c not in RULES]
    assert missing == []
    assert len(set(RULES)) == len(RULES)
    assert set(RULES) <= set(classes)  # nothing registered from outside datavet.auditors
    assert datavet.RULES is RULES


def test_codes_are_unique_and_well_formed():
    codes = [r.code for r in RULES]
    assert len(set(codes)) == len(codes)
    for code in codes:
        assert re.fullmatch(r"[A-Z][0-9]{3}", code), code


def test_names_are_unique_kebab_case():
    names = [r.name for r in RULES]
    assert len(set(names)) == len(names)
    for name in names:
        assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", name), name


def test_registry_is_in_code_order():
    def key(rule):
        assert rule.code[0] in FAMILIES, rule.code
        return FAMILIES.index(rule.code[0]), int(rule.code[1:])

    assert list(RULES) == sorted(RULES, key=key)


def test_codes_names_and_severities_match_the_design_table():
    for rule in RULES:
        if rule.code in CONTRACT:
            assert (rule.name, rule.severity) == CONTRACT[rule.code], rule.code


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_docstring_has_the_three_sections_in_order(rule):
    doc = inspect.getdoc(rule) or ""
    positions = [doc.find(s) for s in SECTIONS]
    assert all(p > 0 for p in positions), f"{rule.code} lacks {SECTIONS}"
    assert positions == sorted(positions)
    # each section says something
    bodies = re.split("|".join(re.escape(s) for s in SECTIONS), doc)[1:]
    assert all(len(b.strip()) > 20 for b in bodies)
    first_line = doc.splitlines()[0]
    assert first_line.strip() and not first_line.startswith("**")


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_class_attributes(rule):
    assert isinstance(rule.severity, Severity)
    assert isinstance(rule.summary, str) and rule.summary
    assert all(isinstance(v, (int, float)) for v in rule.thresholds.values())
    assert rule.__module__.startswith("datavet.auditors.")


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_each_rule_has_a_test_module(rule):
    module = rule.__module__.rsplit(".", 1)[-1]
    assert (TESTS / "auditors" / f"test_{module}.py").is_file(), module


def codes_of(rules) -> list[str]:
    return [r.code for r in rules]


def test_select_all_by_default():
    assert select_rules() == list(RULES)
    assert select_rules("ALL") == list(RULES)


def test_family_prefix_selects_the_family():
    assert codes_of(select_rules("L")) == ["L001", "L002", "L003", "L004", "L005"]
    assert codes_of(select_rules("l")) == ["L001", "L002", "L003", "L004", "L005"]
    assert codes_of(select_rules("B00")) == ["B001", "B002", "B003", "B004"]
    assert codes_of(select_rules("V")) == [r.code for r in RULES if r.code.startswith("V")]
    assert codes_of(select_rules("S00")) == [r.code for r in RULES if r.code.startswith("S00")]


def test_ignore_removes_from_the_selection():
    assert codes_of(select_rules("L", ignore="L002")) == ["L001", "L003", "L004", "L005"]
    assert codes_of(select_rules(ignore=["F", "S"])) == [
        r.code for r in RULES if r.code[0] not in "FS"
    ]
    assert select_rules("S001", ignore="S") == []


def test_names_codes_lists_and_commas_and_code_order():
    assert codes_of(select_rules("nan-values")) == ["V001"]
    assert codes_of(select_rules(["S001", "constant-feature"])) == ["F001", "S001"]
    assert codes_of(select_rules("S004,V002")) == ["V002", "S004"]
    assert codes_of(select_rules("F", ignore="near-constant-feature")) == ["F001", "F003"]


@pytest.mark.parametrize(
    "select, ignore", [("X", None), ("Z999", None), ("nan-value", None), (None, "Q001")]
)
def test_unknown_selector_raises_usage_error(select, ignore):
    with pytest.raises(UsageError):
        select_rules(select, ignore)


def test_audit_rejects_an_unknown_selector():
    with pytest.raises(UsageError):
        datavet.audit(pd.DataFrame({"x": [1.0, 2.0]}), select="V9")


def test_lookup_by_code_or_name():
    assert lookup("v001") is BY_CODE["V001"]
    assert lookup("duplicate-rows").code == "S002"
    with pytest.raises(UsageError):
        lookup("nope")


def test_every_selected_rule_gets_an_outcome():
    train = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "label": [0, 1, 0, 1]})
    report = datavet.audit(train, target="label")
    assert [o.code for o in report.outcomes] == [r.code for r in RULES]
    assert {o.status.value for o in report.outcomes} <= {"passed", "failed", "skipped"}
    report = datavet.audit(train, target="label", select="L")
    assert [o.code for o in report.outcomes] == ["L001", "L002", "L003", "L004", "L005"]
