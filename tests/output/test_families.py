"""Every renderer shows every family's rules right: a training-curve report (C rules) and a
gradient-monitor report (M rules) carry their rules' names and default severities into SARIF,
JUnit, GitHub, GitLab and HTML, as the tabular rules do."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

import datavet
from datavet.output import html, render
from datavet.rules import lookup

LEVEL = {"error": "error", "warning": "warning", "info": "note"}


@pytest.fixture(scope="module")
def curve_report():
    loss = [1.4 * 0.99**i for i in range(100)] + [3.0 * 1.5**i for i in range(20)]
    return datavet.diagnose_curves([{"step": i, "loss": v} for i, v in enumerate(loss)])


def test_the_curve_report_fires_an_error_rule(curve_report):
    assert [(f.code, f.severity) for f in curve_report.findings] == [("C002", "error")]


def test_sarif_descriptors_of_every_outcome_come_from_the_registry(curve_report):
    log = json.loads(render(curve_report, "sarif"))
    for rule in log["runs"][0]["tool"]["driver"]["rules"]:
        known = lookup(rule["id"])
        assert rule["name"] == known.name
        assert rule["defaultConfiguration"]["level"] == LEVEL[known.severity.label]
        assert rule["shortDescription"]["text"] == known.summary
    (result,) = log["runs"][0]["results"]
    assert (result["ruleId"], result["level"]) == ("C002", "error")


def test_junit_github_gitlab_and_html_name_the_curve_rule(curve_report):
    suite = ET.fromstring(render(curve_report, "junit")).find("testsuite")
    names = [c.get("name") for c in suite.iter("testcase")]
    assert names == [f"{r.code} {r.name}" for r in datavet.CURVE_RULES]
    failed = [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]
    assert failed == ["C002 loss-divergence"]
    github = render(curve_report, "github")
    assert "::error " in github and "C002 loss-divergence" in github
    (issue,) = json.loads(render(curve_report, "gitlab"))
    assert (issue["check_name"], issue["severity"]) == ("C002", "major")
    page = html.render(curve_report)
    assert "C002" in page and "loss-divergence" in page


def test_monitor_rules_keep_their_default_levels_in_sarif_and_junit():
    report = datavet.GradientMonitor().report()  # nothing recorded: every rule skipped
    log = json.loads(render(report, "sarif"))
    levels = {
        r["id"]: r["defaultConfiguration"]["level"]
        for r in log["runs"][0]["tool"]["driver"]["rules"]
    }
    assert levels == {
        "M011": "warning",
        "M012": "error",
        "M018": "warning",
        "M020": "warning",
        "M021": "warning",
    }
    suite = ET.fromstring(render(report, "junit")).find("testsuite")
    skipped = [c.get("name") for c in suite.iter("testcase") if c.find("skipped") is not None]
    assert skipped == [
        "M011 gradient-spike",
        "M012 nonfinite-training-step",
        "M018 zero-gradient-layer",
        "M020 update-ratio-out-of-range",
        "M021 fp16-range-limits",
    ]
