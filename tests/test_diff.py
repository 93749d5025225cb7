"""`datavet diff OLD.json NEW.json`: what appeared, went away or changed between two audits of
a refreshed dataset, and its exit code rule (0 nothing new, 1 new at fail-on, 2 could not)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import datavet
from datavet.cli import main
from datavet.diff import diff, render_text

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"


def frame(nans: int = 0, infs: int = 0, rows: int = 40) -> pd.DataFrame:
    df = pd.DataFrame(
        {
            "x": [float(i % 7) for i in range(rows)],
            "y": [float(i % 5) * 2 for i in range(rows)],
            "label": [i % 2 for i in range(rows)],
        }
    )
    if nans:
        df.loc[: nans - 1, "x"] = float("nan")
    if infs:
        df.loc[rows - infs :, "y"] = float("inf")
    return df


def report(**kw):
    return datavet.audit(frame(**kw), target="label", select=["V001", "V002", "F001"])


def save(tmp_path: Path, name: str, r) -> Path:
    path = tmp_path / name
    path.write_text(r.to_json(), encoding="utf-8")
    return path


def run(capsys, argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_identical_reports_have_nothing_new():
    d = diff(report(nans=2), report(nans=2))
    assert d.appeared == [] and d.resolved == [] and d.changed == []
    assert d.unchanged == 1
    assert d.exit_code("error") == 0


def test_a_new_error_appears_and_fails():
    d = diff(report(), report(infs=3))
    assert [f["code"] for f in d.appeared] == ["V002"]
    assert d.exit_code("error") == 1
    assert "V002" in render_text(d, "error")


def test_a_fixed_problem_goes_away_and_passes():
    d = diff(report(nans=2, infs=1), report(infs=1))
    assert [f["code"] for f in d.resolved] == ["V001"]
    assert d.appeared == [] and d.unchanged == 1
    assert d.exit_code("error") == 0  # the persisting V002 does not fail the diff


def test_counts_change_is_the_same_finding():
    d = diff(report(nans=2), report(nans=5))
    assert d.appeared == [] and d.resolved == []
    ((old, new),) = d.changed
    assert (old["n_affected"], new["n_affected"]) == (2, 5)
    assert d.exit_code("error") == 0
    assert "affected 2 -> 5" in render_text(d, "error")


def test_severity_rising_to_fail_on_fails():
    old = datavet.audit(frame(nans=2), target="label", select="V001", severity={"V001": "warning"})
    new = datavet.audit(frame(nans=2), target="label", select="V001")
    d = diff(old, new)
    assert len(d.changed) == 1
    assert d.exit_code("error") == 1
    assert d.exit_code("warning") == 0  # it already failed at warning: nothing new there
    assert diff(new, old).exit_code("error") == 0  # getting milder never fails


def test_fail_on_decides_what_counts():
    old = datavet.audit(frame(), target="label", select="F001")
    df = frame()
    df["c"] = 1.0  # a constant feature: F001 is a warning
    new = datavet.audit(df, target="label", select="F001")
    d = diff(old, new)
    assert [f["code"] for f in d.appeared] == ["F001"]
    assert d.exit_code("error") == 0 and d.exit_code("warning") == 1


def test_cli_diff_text_and_json(tmp_path, capsys):
    old = save(tmp_path, "old.json", report(nans=2))
    new = save(tmp_path, "new.json", report(infs=3))
    code, out, err = run(capsys, ["diff", old, new])
    assert code == 1 and err == ""
    assert "appeared (1):" in out and "resolved (1):" in out
    assert " ! error    V002 inf-values train: Column 'y' has 3 +inf" in out
    code, out, _ = run(capsys, ["diff", old, new, "--format", "json"])
    payload = json.loads(out)
    assert payload["kind"] == "diff" and payload["exit_code"] == 1
    assert [f["code"] for f in payload["appeared"]] == ["V002"]
    assert [f["code"] for f in payload["resolved"]] == ["V001"]
    code, out, _ = run(capsys, ["diff", new, save(tmp_path, "fixed.json", report())])
    assert code == 0 and "nothing new at or above 'error': exit 0" in out


def test_cli_fail_on_default_is_the_new_reports(tmp_path, capsys):
    df = frame()
    df["c"] = 1.0
    old = save(tmp_path, "old.json", datavet.audit(frame(), target="label", select="F001"))
    new = save(
        tmp_path,
        "new.json",
        datavet.audit(df, target="label", select="F001", fail_on="warning"),
    )
    assert run(capsys, ["diff", old, new])[0] == 1
    assert run(capsys, ["diff", old, new, "--fail-on", "error"])[0] == 0


def test_cli_output_file(tmp_path, capsys):
    old = save(tmp_path, "old.json", report())
    new = save(tmp_path, "new.json", report())
    code, out, err = run(capsys, ["diff", old, new, "-o", tmp_path / "d" / "diff.txt"])
    assert code == 0 and out == ""
    assert "unchanged: 0" in (tmp_path / "d" / "diff.txt").read_text()


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "file not found"),
        ("{not json", "not JSON"),
        ('{"tool": "ruff"}', "not a datavet JSON report"),
        ('{"tool": "datavet", "schema_version": 7, "findings": []}', "schema_version 7"),
        ('{"tool": "datavet", "schema_version": 1, "findings": [{"code": 1}]}', "malformed"),
    ],
)
def test_cli_bad_input_is_exit_2_naming_the_file(tmp_path, capsys, content, problem):
    good = save(tmp_path, "good.json", report())
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content, encoding="utf-8")
    code, out, err = run(capsys, ["diff", good, bad])
    assert code == 2 and out == ""
    assert err.startswith(f"datavet: error: {bad}: ") and problem in err
    assert len(err.strip().splitlines()) == 1


def test_new_audit_that_crashed_is_exit_2(tmp_path, capsys):
    new = report().to_dict()
    new["exit_code"] = 2
    new["passed"] = False  # a report must agree with itself (render and diff check it)
    new["outcomes"][0]["status"] = "crashed"
    path = tmp_path / "new.json"
    path.write_text(json.dumps(new), encoding="utf-8")
    code, out, _ = run(capsys, ["diff", save(tmp_path, "old.json", report()), path])
    assert code == 2 and "did not finish" in out


def test_planted_vs_clean_real_files(tmp_path, capsys):
    planted = datavet.audit(
        SAMPLE / "planted_train.csv", SAMPLE / "planted_test.csv", target="label"
    )
    clean = datavet.audit(SAMPLE / "clean_train.csv", SAMPLE / "clean_test.csv", target="label")
    d = diff(clean, planted)
    assert {f["code"] for f in d.appeared} == {f.code for f in planted.findings}
    assert d.exit_code("error") == 1
    assert diff(planted, clean).exit_code("error") == 0
