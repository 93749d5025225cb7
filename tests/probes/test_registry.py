"""Selecting probes: the probes' view of the one registry (the meta-tests over every rule of
every family are in tests/test_rules_registry.py)."""

from __future__ import annotations

import pytest

from datavet import PROBES, UsageError
from datavet.rules import CODES as BY_CODE
from datavet.rules import lookup as rule_lookup
from datavet.rules import lookup_probe, select_probes
from datavet.rules import probe_by_key as lookup


def test_lookup_by_code_or_name_and_through_the_rule_lookup():
    assert lookup("m002") is BY_CODE["M002"]
    assert lookup("double-softmax").code == "M003"
    assert lookup_probe("V001") is None
    assert rule_lookup("M006") is BY_CODE["M006"]  # `datavet rule M006` finds probes
    with pytest.raises(UsageError):
        lookup("nope")


def test_select_probes_by_prefix_name_and_ignore():
    model = [p.code for p in PROBES if "model" in p.needs]
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


def test_a_monitor_probe_cannot_be_selected_for_datavet_probe():
    with pytest.raises(UsageError, match="M011 cannot be selected here.*GradientMonitor"):
        select_probes("M011")
