"""The probe registry: every probe registered once, in code order, documented and tested."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import datavet
import datavet.probes
from datavet import PROBES, Severity, UsageError
from datavet.probes.base import Probe
from datavet.probes.registry import BY_CODE, lookup, lookup_probe, select_probes
from datavet.rules import RULES
from datavet.rules import lookup as rule_lookup

TESTS = Path(__file__).resolve().parent
SECTIONS = ("**What it checks**", "**Why it matters**", "**How to fix**")
# The contract: code -> (name, default severity, who runs it). Codes are never reused.
CONTRACT = {
    "M001": ("initial-loss-mismatch", Severity.WARNING, "model"),
    "M002": ("cannot-overfit-batch", Severity.ERROR, "model"),
    "M003": ("double-softmax", Severity.ERROR, "model"),
    "M004": ("nonfinite-forward", Severity.ERROR, "model"),
    "M005": ("nonfinite-backward", Severity.ERROR, "model"),
    "M006": ("saturated-activations", Severity.WARNING, "model"),
    "M007": ("vanishing-activations", Severity.WARNING, "model"),
    "M008": ("eval-nondeterminism", Severity.WARNING, "model"),
    "M009": ("batch-size-dependent-loss", Severity.WARNING, "model"),
    "M010": ("stale-gradients", Severity.ERROR, "model"),
    "M011": ("gradient-spike", Severity.WARNING, "monitor"),
    "M012": ("nonfinite-training-step", Severity.ERROR, "monitor"),
    "M013": ("future-leakage", Severity.WARNING, "model"),
    "M014": ("padding-in-loss", Severity.ERROR, "model"),
    "M015": ("parameters-without-gradient", Severity.WARNING, "model"),
    "M016": ("fp16-gradient-underflow", Severity.WARNING, "model"),
    "M017": ("eval-pass-changes-model", Severity.ERROR, "model"),
    "M018": ("zero-gradient-layer", Severity.WARNING, "monitor"),
    "M019": ("amp-without-grad-scaler", Severity.WARNING, "model"),
    "M020": ("update-ratio-out-of-range", Severity.WARNING, "monitor"),
    "M021": ("fp16-range-limits", Severity.WARNING, "monitor"),
}


def probe_classes() -> list[type[Probe]]:
    """Every concrete Probe subclass defined in a datavet.probes.* module."""
    found = []
    for info in pkgutil.iter_modules(datavet.probes.__path__):
        module = importlib.import_module(f"datavet.probes.{info.name}")
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, Probe) and obj is not Probe and obj.__module__ == module.__name__:
                found.append(obj)
    return found


def test_every_probe_class_is_registered_exactly_once():
    classes = probe_classes()
    assert len(classes) == len(CONTRACT)
    assert [c.__name__ for c in classes if c not in PROBES] == []
    assert len(set(PROBES)) == len(PROBES)
    assert set(PROBES) <= set(classes)
    assert datavet.PROBES is PROBES


def test_codes_names_severities_match_the_contract_in_code_order():
    assert [p.code for p in PROBES] == sorted(CONTRACT)
    for p in PROBES:
        assert (p.name, p.severity, p.needs) == CONTRACT[p.code], p.code


def test_codes_and_names_are_well_formed_and_disjoint_from_the_rules():
    for p in PROBES:
        assert re.fullmatch(r"M[0-9]{3}", p.code)
        assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", p.name)
    assert len({p.name for p in PROBES}) == len(PROBES)
    assert not {p.code for p in PROBES} & {r.code for r in RULES}
    assert not {p.name for p in PROBES} & {r.name for r in RULES}


@pytest.mark.parametrize("probe", PROBES, ids=lambda p: p.code)
def test_docstring_has_the_three_sections_in_order(probe):
    doc = inspect.getdoc(probe) or ""
    positions = [doc.find(s) for s in SECTIONS]
    assert all(p > 0 for p in positions), f"{probe.code} lacks {SECTIONS}"
    assert positions == sorted(positions)
    bodies = re.split("|".join(re.escape(s) for s in SECTIONS), doc)[1:]
    assert all(len(b.strip()) > 20 for b in bodies)
    first_line = doc.splitlines()[0]
    assert first_line.strip() and not first_line.startswith("**")


@pytest.mark.parametrize("probe", PROBES, ids=lambda p: p.code)
def test_probe_class_attributes(probe):
    assert isinstance(probe.severity, Severity)
    assert isinstance(probe.summary, str) and probe.summary
    assert all(isinstance(v, (int, float)) for v in probe.thresholds.values())
    assert probe.__module__.startswith("datavet.probes.")
    assert probe.needs in ("model", "monitor")


@pytest.mark.parametrize("probe", PROBES, ids=lambda p: p.code)
def test_each_probe_has_a_test_module(probe):
    module = probe.__module__.rsplit(".", 1)[-1]
    assert (TESTS / f"test_{module}.py").is_file(), module


def test_unknown_thresholds_are_usage_errors():
    with pytest.raises(UsageError, match="M001 has no threshold"):
        PROBES[0](thresholds={"nope": 1})


def test_lookup_by_code_or_name_and_through_the_rule_lookup():
    assert lookup("m002") is BY_CODE["M002"]
    assert lookup("double-softmax").code == "M003"
    assert lookup_probe("V001") is None
    assert rule_lookup("M006") is BY_CODE["M006"]  # `datavet rule M006` finds probes
    assert rule_lookup("stale-gradients").code == "M010"
    with pytest.raises(UsageError):
        lookup("nope")
    with pytest.raises(UsageError):
        rule_lookup("M999")


def test_select_probes_by_prefix_name_and_ignore():
    model = [p.code for p in PROBES if p.needs == "model"]
    assert [p.code for p in select_probes()] == model
    assert [p.code for p in select_probes("M00")] == model[:9]
    assert [p.code for p in select_probes("M", ignore="M002,nonfinite-forward")] == [
        c for c in model if c not in ("M002", "M004")
    ]
    assert [p.code for p in select_probes(needs="monitor")] == [
        "M011",
        "M012",
        "M018",
        "M020",
        "M021",
    ]
    with pytest.raises(UsageError):
        select_probes("X")
