"""The one rule registry: every rule of every family (V/F/L/S/B/T auditors, M probes, C curve
rules) registered once, in code order, documented, declared and tested; and the selection."""

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
import datavet.curves
import datavet.probes
from datavet import RULES, Severity, UsageError
from datavet.auditors.base import Auditor
from datavet.curves.base import CurveRule
from datavet.framework import NEEDS, SECTIONS, Rule
from datavet.probes.base import Probe
from datavet.rules import BY_CODE, REGISTRY, family, find, lookup, select_rules

TESTS = Path(__file__).resolve().parent
DOC_SECTIONS = ("**What it checks**", "**Why it matters**", "**How to fix**")
# Family order of DESIGN.md's rule table: "in code order" means this, then the number.
FAMILIES = "VFLSBTMC"
# Each family's base class and the package its rule modules (and their tests) live in.
BASES = {Auditor: "auditors", Probe: "probes", CurveRule: "curves"}
# The contract, for the rules it names: code -> (name, default severity). Codes are never
# reused or renumbered; names and default severities change only on purpose.
CONTRACT = {
    "V001": ("nan-values", Severity.ERROR),
    "V002": ("inf-values", Severity.ERROR),
    "V003": ("missing-labels", Severity.ERROR),
    "V004": ("mixed-types", Severity.WARNING),
    "V007": ("sentinel-values", Severity.WARNING),
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
    "T002": ("near-duplicate-tensors", Severity.WARNING),
    "M001": ("initial-loss-mismatch", Severity.WARNING),
    "M002": ("cannot-overfit-batch", Severity.ERROR),
    "M003": ("double-softmax", Severity.ERROR),
    "M004": ("nonfinite-forward", Severity.ERROR),
    "M005": ("nonfinite-backward", Severity.ERROR),
    "M006": ("saturated-activations", Severity.WARNING),
    "M007": ("vanishing-activations", Severity.WARNING),
    "M008": ("eval-nondeterminism", Severity.WARNING),
    "M009": ("batch-size-dependent-loss", Severity.WARNING),
    "M010": ("stale-gradients", Severity.ERROR),
    "M011": ("gradient-spike", Severity.WARNING),
    "M012": ("nonfinite-training-step", Severity.ERROR),
    "M013": ("future-leakage", Severity.WARNING),
    "M014": ("padding-in-loss", Severity.ERROR),
    "M015": ("parameters-without-gradient", Severity.WARNING),
    "M016": ("fp16-gradient-underflow", Severity.WARNING),
    "M017": ("eval-pass-changes-model", Severity.ERROR),
    "M018": ("zero-gradient-layer", Severity.WARNING),
    "M019": ("amp-without-grad-scaler", Severity.WARNING),
    "M020": ("update-ratio-out-of-range", Severity.WARNING),
    "M021": ("fp16-range-limits", Severity.WARNING),
    "C001": ("nonfinite-loss", Severity.ERROR),
    "C002": ("loss-divergence", Severity.ERROR),
}
# Who runs a probe: datavet.probe (a model and a batch) or a GradientMonitor.
MONITOR_PROBES = ("M011", "M012", "M018", "M020", "M021")


def base_of(rule: type[Rule]) -> type[Rule]:
    (base,) = [b for b in BASES if issubclass(rule, b)]
    return base


def rule_classes() -> list[type[Rule]]:
    """Every concrete rule class defined in a rule module of any family."""
    found = []
    for base, package in BASES.items():
        path = importlib.import_module(f"datavet.{package}").__path__
        for info in pkgutil.iter_modules(path):
            module = importlib.import_module(f"datavet.{package}.{info.name}")
            for _, obj in inspect.getmembers(module, inspect.isclass):
                if issubclass(obj, base) and obj is not base and obj.__module__ == module.__name__:
                    found.append(obj)
    return found


def test_there_are_rules_of_every_family_to_check():
    for base in BASES:
        assert len(family(base)) >= 10, base.__name__


def test_every_rule_class_is_registered_exactly_once():
    classes = rule_classes()
    assert [c.__name__ for c in classes if c not in REGISTRY] == []
    assert len(set(REGISTRY)) == len(REGISTRY)
    assert set(REGISTRY) <= set(classes)  # nothing registered from outside the rule packages


def test_the_family_tuples_are_views_of_the_one_registry():
    assert datavet.RULES is RULES and RULES == family(Auditor)
    assert datavet.PROBES == family(Probe) and datavet.CURVE_RULES == family(CurveRule)
    assert (*RULES, *datavet.PROBES, *datavet.CURVE_RULES) == REGISTRY


def test_codes_are_unique_and_well_formed():
    codes = [r.code for r in REGISTRY]
    assert len(set(codes)) == len(codes)
    for rule in REGISTRY:
        assert re.fullmatch(r"[A-Z][0-9]{3}", rule.code), rule.code
        prefixes = {Auditor: "VFLSBT", Probe: "M", CurveRule: "C"}[base_of(rule)]
        assert rule.code[0] in prefixes, rule.code


def test_names_are_unique_kebab_case_across_families():
    names = [r.name for r in REGISTRY]
    assert len(set(names)) == len(names)
    for name in names:
        assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", name), name


def test_registry_is_in_code_order():
    def key(rule):
        assert rule.code[0] in FAMILIES, rule.code
        return FAMILIES.index(rule.code[0]), int(rule.code[1:])

    assert list(REGISTRY) == sorted(REGISTRY, key=key)


def test_codes_names_and_severities_match_the_contract():
    for rule in REGISTRY:
        if rule.code in CONTRACT:
            assert (rule.name, rule.severity) == CONTRACT[rule.code], rule.code
    assert set(CONTRACT) <= {r.code for r in REGISTRY}


@pytest.mark.parametrize("rule", REGISTRY, ids=lambda r: r.code)
def test_docstring_has_the_three_sections_in_order(rule):
    doc = inspect.getdoc(rule) or ""
    positions = [doc.find(s) for s in DOC_SECTIONS]
    assert all(p > 0 for p in positions), f"{rule.code} lacks {DOC_SECTIONS}"
    assert positions == sorted(positions)
    # each section says something
    bodies = re.split("|".join(re.escape(s) for s in DOC_SECTIONS), doc)[1:]
    assert all(len(b.strip()) > 20 for b in bodies)
    first_line = doc.splitlines()[0]
    assert first_line.strip() and not first_line.startswith("**")


@pytest.mark.parametrize("rule", REGISTRY, ids=lambda r: r.code)
def test_every_threshold_is_documented(rule):
    """``datavet rule CODE`` lists the thresholds; the docstring says what each one does."""
    doc = inspect.getdoc(rule) or ""
    for key in rule.thresholds:
        assert re.search(rf"\b{re.escape(key)}\b", doc), f"{rule.code}: {key}"


@pytest.mark.parametrize("rule", REGISTRY, ids=lambda r: r.code)
def test_rule_class_attributes(rule):
    assert isinstance(rule.severity, Severity)
    assert isinstance(rule.summary, str) and rule.summary
    assert all(isinstance(v, (int, float)) for v in rule.thresholds.values())
    assert rule.__module__.startswith(f"datavet.{BASES[base_of(rule)]}.")
    assert isinstance(rule.needs, tuple) and set(rule.needs) <= set(NEEDS)
    assert set(rule.sections) <= set(SECTIONS)
    assert set(rule.per_column) <= {"train", "test"}


@pytest.mark.parametrize("rule", REGISTRY, ids=lambda r: r.code)
def test_each_rule_says_who_runs_it(rule):
    runners = {Auditor: set(), Probe: {"model", "monitor"}, CurveRule: {"training_log"}}
    declared = set(rule.needs) & {"model", "monitor", "training_log"}
    if base_of(rule) is Probe:
        assert declared == ({"monitor"} if rule.code in MONITOR_PROBES else {"model"})
    else:
        assert declared == runners[base_of(rule)]


@pytest.mark.parametrize("rule", REGISTRY, ids=lambda r: r.code)
def test_each_rule_has_a_test_module(rule):
    module = rule.__module__.rsplit(".", 1)[-1]
    folder = BASES[base_of(rule)]
    assert (TESTS / folder / f"test_{module}.py").is_file(), f"{folder}/{module}"


@pytest.mark.parametrize("rule", REGISTRY, ids=lambda r: r.code)
def test_unknown_thresholds_are_usage_errors(rule):
    with pytest.raises(UsageError, match=f"{rule.code} has no threshold"):
        rule(thresholds={"no_such_threshold": 1})
    assert rule().options == dict(rule.thresholds)
    assert rule(severity=Severity.INFO).level is Severity.INFO


@pytest.mark.parametrize("rule", REGISTRY, ids=lambda r: r.code)
def test_lookup_by_code_or_name_in_any_case(rule):
    """``datavet rule CODE``, severity and threshold overrides find every family's rules."""
    assert lookup(rule.code) is rule and lookup(rule.code.lower()) is rule
    assert lookup(rule.name) is rule and lookup(f" {rule.name.upper()} ") is rule
    assert find(rule.code) is rule


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
    with pytest.raises(datavet.UsageError, match="no rule left to run"):
        select_rules("S001", ignore="S")


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


def test_lookup_of_an_unknown_rule_is_a_usage_error():
    assert lookup("v001") is BY_CODE["V001"]
    assert find("nope") is None
    for key in ("nope", "M999", "C999"):
        with pytest.raises(UsageError, match="unknown rule"):
            lookup(key)


def test_every_selected_rule_gets_an_outcome():
    train = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "label": [0, 1, 0, 1]})
    report = datavet.audit(train, target="label")
    assert [o.code for o in report.outcomes] == [r.code for r in RULES]
    assert {o.status.value for o in report.outcomes} <= {"passed", "failed", "skipped"}
    report = datavet.audit(train, target="label", select="L")
    assert [o.code for o in report.outcomes] == ["L001", "L002", "L003", "L004", "L005"]
