"""GitLab Code Quality: the issue list GitLab's merge request widget reads."""

from __future__ import annotations

import json
import os

from datavet.output import FORMATS, render, render_many
from datavet.outputs import is_datavet_output

from .ci_reports import EVIL, check_golden, clean_report, sample_report

UPDATE = os.environ.get("DATAVET_UPDATE_GOLDEN") == "1"
SEVERITIES = {"info", "minor", "major", "critical", "blocker"}


def test_registered():
    assert "gitlab" in FORMATS


def test_golden():
    check_golden("gitlab_sample.json", render(sample_report(), "gitlab"), UPDATE)


def test_every_issue_has_the_fields_gitlab_reads():
    issues = json.loads(render(sample_report(), "gitlab"))
    assert isinstance(issues, list) and len(issues) == 6  # 5 findings + 1 crashed rule
    for issue in issues:
        assert isinstance(issue["description"], str) and issue["description"]
        assert isinstance(issue["check_name"], str)
        assert isinstance(issue["fingerprint"], str) and issue["fingerprint"]
        assert issue["severity"] in SEVERITIES
        assert isinstance(issue["location"]["path"], str)
        assert isinstance(issue["location"]["lines"]["begin"], int)
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    by_code = {}
    for i in issues:
        by_code.setdefault(i["check_name"], []).append(i["severity"])
    assert by_code["S001"] == ["major"] and by_code["F003"] == ["minor"]
    assert by_code["F002"] == ["info"] and by_code["L002"] == ["blocker"]  # crashed
    assert "F001" not in by_code  # ignored by a per-column ignore


def test_the_data_comes_back_exactly():
    issues = json.loads(render(sample_report(), "gitlab"))
    assert any(EVIL in i["description"] for i in issues)


def test_fingerprints_are_stable_and_unique_for_repeated_findings():
    report = sample_report()
    twice = render_many([("a", report, None), ("a", report, None)], "gitlab")
    prints = [i["fingerprint"] for i in json.loads(twice)]
    assert len(set(prints)) == len(prints)
    assert json.loads(render(report, "gitlab", name="a"))[0]["fingerprint"] == prints[0]


def test_config_locations_are_used():
    locations = {"dataset": ("pyproject.toml", 12, 30), "train": ("pyproject.toml", 13, 20)}
    issues = json.loads(render(sample_report(), "gitlab", name="d", locations=locations))
    assert {i["location"]["path"] for i in issues} == {"pyproject.toml"}
    assert {i["location"]["lines"]["begin"] for i in issues} == {12, 13}
    assert issues[0]["description"].startswith("[d] ")


def test_clean_report_is_an_empty_list_and_recognised(tmp_path):
    assert json.loads(render(clean_report(), "gitlab")) == []
    for report in (clean_report(), sample_report()):
        path = tmp_path / "gl-code-quality-report.json"
        path.write_text(render(report, "gitlab"))
        assert is_datavet_output(path)
    other = tmp_path / "other.json"
    other.write_text('[{"type": "issue", "engine_name": "eslint"}]')
    assert not is_datavet_output(other)
