"""SARIF 2.1.0: golden file, the official JSON schema (vendored), what GitHub code scanning
requires, rules with help text, locations at the config line that names the dataset."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from jsonschema import Draft4Validator

import datavet
from datavet.cli import main
from datavet.output import render, sarif

from .ci_reports import DATA, EVIL, check_golden, clean_report, sample_report

ROOT = DATA.parents[1]
SAMPLE = ROOT / "sample_data"
UPDATE = os.environ.get("DATAVET_UPDATE_GOLDEN") == "1"


@pytest.fixture(scope="module")
def validator():
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    Draft4Validator.check_schema(schema)
    return Draft4Validator(schema)


def errors(validator, log: dict) -> list[str]:
    return [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(log)]


def test_golden():
    # Rule descriptions come from the auditors' docstrings, which change on their own; the golden
    # file holds placeholders for them (test_rule_help_is_the_rule_documentation checks them).
    log = json.loads(render(sample_report(), "sarif"))
    for rule in log["runs"][0]["tool"]["driver"]["rules"]:
        for key in ("shortDescription", "fullDescription"):
            rule[key]["text"] = f"<{key} of {rule['id']}>"
        rule["help"] = {
            "text": f"<help of {rule['id']}>",
            "markdown": f"<markdown of {rule['id']}>",
        }
    text = json.dumps(log, indent=2) + "\n"  # ASCII: the golden file holds no raw control
    check_golden("sarif_sample.sarif.json", text, UPDATE)


def test_golden_validates(validator):
    for report in (sample_report(), clean_report()):
        log = json.loads(render(report, "sarif"))
        assert errors(validator, log) == []


def test_schema_is_not_vacuous(validator):
    log = json.loads(render(sample_report(), "sarif"))
    log["runs"][0]["results"][0]["level"] = "fatal"
    assert errors(validator, log)
    log = json.loads(render(sample_report(), "sarif"))
    del log["runs"][0]["tool"]["driver"]["name"]
    assert errors(validator, log)


def test_github_required_properties():
    log = json.loads(render(sample_report(), "sarif"))
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["V001", "F001", "F002", "F003", "L001", "L002", "S001"]
    for r in rules:
        for key in ("shortDescription", "fullDescription", "help"):
            assert r[key]["text"].strip(), (r["id"], key)
            assert len(r[key]["text"]) <= 1024 or key == "help"
        assert r["defaultConfiguration"]["level"] in ("note", "warning", "error")
        assert r["properties"]["problem.severity"] in ("error", "warning", "recommendation")
    for res in run["results"]:
        assert res["message"]["text"].strip()
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert 1 <= len(res["locations"]) <= 10
        assert res["partialFingerprints"]
        region = res["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1


def test_rule_help_is_the_rule_documentation():
    desc = sarif.rule_descriptor("V001", "nan-values")
    doc = datavet.RULES[0].__doc__
    assert "Why it matters" in desc["help"]["text"] and "How to fix" in desc["help"]["text"]
    assert "**How to fix**" in desc["help"]["markdown"]
    assert desc["shortDescription"]["text"] == datavet.RULES[0].summary
    assert desc["fullDescription"]["text"].startswith("Every feature column")
    assert "``" not in desc["help"]["text"] and "nan" in doc


def test_levels_and_suppressed_ignores():
    run = json.loads(render(sample_report(), "sarif"))["runs"][0]
    levels = {(r["ruleId"], r["properties"]["split"]): r["level"] for r in run["results"]}
    assert levels[("V001", "train")] == "error"
    assert levels[("F003", "train")] == "warning"
    assert levels[("F002", "train")] == "note"
    suppressed = [r for r in run["results"] if "suppressions" in r]
    assert len(suppressed) == 1
    assert suppressed[0]["ruleId"] == "F001"
    assert suppressed[0]["suppressions"] == [
        {
            "kind": "external",
            "status": "accepted",
            "justification": "x3 is a bias input, constant on purpose",
        }
    ]
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is False  # L002 crashed
    assert invocation["toolExecutionNotifications"][0]["descriptor"]["id"] == "L002"


def test_data_in_messages_stays_data():
    text = render(sample_report(), "sarif")
    assert "\x1b" not in text and "\x7f" not in text  # escaped in JSON as \u001b / \u007f
    run = json.loads(text)["runs"][0]
    evil = [r for r in run["results"] if EVIL in r["properties"]["columns"]]
    assert len(evil) == 1 and EVIL in evil[0]["message"]["text"]  # round-trips exactly


def test_fingerprints_are_stable_and_ignore_counts():
    a = sarif.fingerprint("ds", {"code": "V001", "split": "train", "columns": ["x"]})
    b = sarif.fingerprint("ds", {"code": "V001", "split": "train", "columns": ["x"], "n": 9})
    c = sarif.fingerprint("ds", {"code": "V001", "split": "test", "columns": ["x"]})
    assert a == b != c and len(a) == 32


def test_locations_point_at_the_config_line():
    locations = {
        "dataset": ("pyproject.toml", 12, 30),
        "train": ("pyproject.toml", 13, 40),
        "test": ("pyproject.toml", 14, 38),
    }
    run = json.loads(sarif.render(sample_report(), name="ds", locations=locations))["runs"][0]
    by = {(r["ruleId"], r["properties"]["split"]): r for r in run["results"]}
    loc = by[("V001", "train")]["locations"][0]["physicalLocation"]
    assert loc == {
        "artifactLocation": {"uri": "pyproject.toml"},
        "region": {"startLine": 13, "startColumn": 1, "endLine": 13, "endColumn": 40},
    }
    assert by[("S001", "test")]["locations"][0]["physicalLocation"]["region"]["startLine"] == 14
    assert run["automationDetails"]["id"] == "datavet/ds/"


def test_without_config_points_at_the_data_file_and_never_invents_one(validator):
    run = json.loads(render(sample_report(), "sarif"))["runs"][0]
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
    }
    assert uris == {"data/train.csv", "data/test.csv"}
    df = pd.DataFrame({"x": [1.0, None, 3.0, 4.0], "label": [0, 1, 0, 1]})
    log = json.loads(render(datavet.audit(df, target="label", select="V001"), "sarif"))
    assert errors(validator, log) == []
    (result,) = log["runs"][0]["results"]
    assert "physicalLocation" not in result["locations"][0]  # an in-memory frame has no file
    assert result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "train.x"


def test_cli_config_dataset_points_at_its_pyproject_line(tmp_path, monkeypatch, capsys, validator):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname = 'demo'\n\n[tool.datavet]\nfail-on = 'error'\n\n"
        "[tool.datavet.datasets.planted]\n"
        f"train = {json.dumps(str(SAMPLE / 'planted_train.csv'))}\n"
        f"test = {json.dumps(str(SAMPLE / 'planted_test.csv'))}\n"
        "target = 'label'\n",
        encoding="utf-8",
    )
    sub = tmp_path / "pipelines"
    sub.mkdir()
    monkeypatch.chdir(sub)  # found by walking up; the URI is relative to the repository root
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    code = main(["audit", "--format", "sarif"])
    out = capsys.readouterr().out
    assert code == 1
    log = json.loads(out)
    assert errors(validator, log) == []
    run = log["runs"][0]
    assert run["automationDetails"]["id"] == "datavet/planted/"
    lines = {
        r["properties"]["split"]: r["locations"][0]["physicalLocation"]["region"]["startLine"]
        for r in run["results"]
    }
    assert lines == {"train": 8, "test": 9}
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
    }
    assert uris == {"pyproject.toml"}


def test_several_datasets_are_several_runs(validator):
    log = json.loads(sarif.render_many([("a", sample_report(), None), ("b", clean_report(), None)]))
    assert errors(validator, log) == []
    assert [r["automationDetails"]["id"] for r in log["runs"]] == ["datavet/a/", "datavet/b/"]
    assert log["runs"][1]["results"] == []


def test_planted_audit_validates(validator):
    report = datavet.audit(
        SAMPLE / "planted_train.csv", SAMPLE / "planted_test.csv", target="label"
    )
    log = json.loads(render(report, "sarif"))
    assert errors(validator, log) == []
    assert len(log["runs"][0]["results"]) == len(report.findings)
    assert Path(SAMPLE / "planted_train.csv").is_file()


def _levels(report) -> dict[str, str]:
    log = json.loads(render(report, "sarif"))
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    return {r["id"]: r["defaultConfiguration"]["level"] for r in rules}


def test_curve_rules_carry_their_own_default_severity(validator):
    """C001 and C002 default to error: the descriptors come from the one registry, not the
    tabular rules' alone (which gave every C rule "warning")."""
    loss = [1.4 * 0.99**i for i in range(100)] + [3.0 * 1.5**i for i in range(20)]
    report = datavet.diagnose_curves([{"step": i, "loss": v} for i, v in enumerate(loss)])
    levels = _levels(report)
    assert levels["C001"] == "error" and levels["C002"] == "error"
    for rule in datavet.CURVE_RULES:
        assert (
            levels[rule.code]
            == {"error": "error", "warning": "warning", "info": "note"}[rule.severity.label]
        ), rule.code
    log = json.loads(render(report, "sarif"))
    assert errors(validator, log) == []
    c002 = next(r for r in log["runs"][0]["tool"]["driver"]["rules"] if r["id"] == "C002")
    assert "datavet rule C002" in c002["help"]["text"]
    assert c002["shortDescription"]["text"] == datavet.CURVE_RULES[1].summary


def test_probe_rules_carry_their_own_default_severity(validator):
    """A probe report's M rules: error where the probe defaults to error (M004, M005),
    warning where it defaults to warning (M001)."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    batch = (torch.randn(16, 4), torch.randint(0, 3, (16,)))
    report = datavet.probe(
        model, batch, loss_fn=torch.nn.CrossEntropyLoss(), select="M001,M004,M005"
    )
    levels = _levels(report)
    assert levels == {"M001": "warning", "M004": "error", "M005": "error"}
    assert errors(validator, json.loads(render(report, "sarif"))) == []
    monitor = datavet.GradientMonitor().report()  # M011, M012, M018, M020, M021: nothing recorded
    assert _levels(monitor) == {
        "M011": "warning",
        "M012": "error",
        "M018": "warning",
        "M020": "warning",
        "M021": "warning",
    }
