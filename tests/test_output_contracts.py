"""Report formats, `datavet render` and `datavet diff` under hostile reports and data: finding
identity by column set, bidirectional controls, SARIF URIs, the step summary budget, unique run
names, verdicts checked against findings, and output paths."""

from __future__ import annotations

import copy
import json
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest

import datavet
from datavet.cli import main
from datavet.diff import check_report, diff
from datavet.errors import InputError
from datavet.output import github, gitlab, junit, sarif
from datavet.output.html import render as html_page
from datavet.output.text import clean, render_dict

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
RLO = "\u202e"
BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", RLO, "\u2066", "\u2067", "\u2068", "\u2069"]
BIDI += ["\u200e", "\u200f"]


def run(capsys, argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def planted() -> dict:
    report = datavet.audit(
        SAMPLE / "planted_train.csv", SAMPLE / "planted_test.csv", target="label"
    )
    return report.to_dict()


def with_finding(data: dict, columns: list[str]) -> dict:
    """``data`` plus a warning about ``columns``, its counts kept true."""
    out = copy.deepcopy(data)
    out["findings"].append(
        {
            "code": "S010",
            "name": "feature-drift",
            "severity": "warning",
            "message": "Features drift between train and test.",
            "split": "test",
            "columns": columns,
            "n_affected": None,
            "examples": [],
            "metrics": {},
            "hint": None,
        }
    )
    out["counts"]["warning"] += 1
    return out


@pytest.fixture
def data(tmp_path, monkeypatch):
    for name in ("planted_train.csv", "planted_test.csv"):
        shutil.copy(SAMPLE / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return tmp_path


AUDIT = ["audit", "planted_train.csv", "--test", "planted_test.csv", "--target", "label"]


# --------------------------------------------------------------------------------------------
# the same columns in another order are the same finding


def test_diff_keys_on_the_column_set(planted):
    old, new = with_finding(planted, ["a", "b"]), with_finding(planted, ["b", "a"])
    d = diff(old, new)
    assert d.appeared == [] and d.resolved == []
    assert d.exit_code("warning") == 0


def test_fingerprints_do_not_depend_on_column_order(planted):
    old, new = with_finding(planted, ["a", "b"]), with_finding(planted, ["b", "a"])
    prints = []
    for data in (old, new):
        run_ = json.loads(sarif.render(data, name="daily"))["runs"][0]
        issues = json.loads(gitlab.render(data, name="daily"))
        prints.append(
            (
                [r["partialFingerprints"]["datavetFinding/v1"] for r in run_["results"]],
                [i["fingerprint"] for i in issues],
            )
        )
    assert prints[0] == prints[1]
    # the order shown is the rule's own
    shown = json.loads(sarif.render(new, name="daily"))["runs"][0]["results"]
    assert [r["properties"]["columns"] for r in shown if r["ruleId"] == "S010"] == [["b", "a"]]


# --------------------------------------------------------------------------------------------
# bidirectional controls and tabs are shown, not obeyed


def test_clean_shows_bidi_controls_and_tabs():
    for c in BIDI:
        assert c not in clean(f"x{c}y")
    assert clean(f"x{RLO}y\tz") == "x\\u202ey\\tz"


def test_text_notes_show_bidi_and_tab(planted):
    data = copy.deepcopy(planted)
    data["notes"] = [f"NaN imputed in: a{RLO}evil\tx"]
    text = render_dict(data)
    assert RLO not in text and "\t" not in text
    assert "a\\u202eevil\\tx" in text


@pytest.fixture(scope="module")
def bidi_report():
    df = pd.DataFrame(
        {
            f"x{RLO}_gnp.exe": [float("nan"), 1.0, 2.0, 3.0, 4.0, 5.0] * 5,
            "y": [float(i) for i in range(30)],
            "label": [0, 1] * 15,
        }
    )
    return datavet.audit(df, target="label")


def test_html_summary_and_junit_show_bidi_controls(bidi_report):
    assert any(RLO in c for f in bidi_report.findings for c in f.columns)
    page = html_page(bidi_report)
    assert RLO not in page and "x\\u202e_gnp.exe" in page
    summary = github.summary(bidi_report, name=f"set{RLO}")
    assert RLO not in summary
    xml = junit.render(bidi_report)
    assert RLO not in xml and "#x202E" in xml


def test_junit_names_do_not_collide_after_escaping():
    assert junit.xml_text("a\x01") != junit.xml_text("a#x01")


# --------------------------------------------------------------------------------------------
# locations


def test_sarif_relative_uri_is_percent_encoded(planted):
    name = "data/sp ace#frag?q=1%41.csv"
    log = json.loads(sarif.render(planted, locations={"train": (name, 1), "test": (name, 1)}))
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert uri["uri"] == "data/sp%20ace%23frag%3Fq%3D1%2541.csv"
    absolute = "file:///tmp/a%20b.csv"
    log = json.loads(sarif.render(planted, locations={"train": (absolute, 1)}))
    loc = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == absolute


def test_github_annotation_leaves_out_a_file_outside_the_workspace(planted):
    out = github.render(planted, locations={"train": ("file:///tmp/x.csv", 1)})
    annotations = [line for line in out.splitlines() if line.startswith("::error")]
    assert annotations and not any("file=" in line for line in annotations)
    inside = github.render(planted, locations={"train": ("data/x.csv", 1)})
    assert "file=data/x.csv,line=1" in inside


# --------------------------------------------------------------------------------------------
# the step summary keeps every dataset's verdict


def test_summary_caps_a_huge_row_and_keeps_later_datasets(planted):
    huge = with_finding(planted, [("N" * 100_000) + str(i) for i in range(12)])
    md = github.summary_many([("big", huge, None), ("second", planted, None)])
    assert len(md.encode("utf-8")) < github.SUMMARY_LIMIT
    assert "### datavet: big: FAILED" in md and "### datavet: second: FAILED" in md
    assert md.count("| error | V001 nan-values |") == 4  # both datasets' small rows
    assert "Summary cut here" not in md


def test_summary_cut_counts_what_it_left_out(planted):
    many = copy.deepcopy(planted)
    many["findings"] = many["findings"] * 40
    many["counts"] = {k: v * 40 for k, v in many["counts"].items()}
    full = github.summary_many([("a", many, None)], limit=10**9)
    md = github.summary_many([("a", many, None), ("b", planted, None)], limit=6000)
    assert len(md.encode("utf-8")) <= 6000
    assert "### datavet: b: FAILED" in md  # the later dataset keeps its verdict
    first, _ = md.split("### datavet: b")
    kept = [line for line in first.splitlines() if line and "Summary cut here" not in line]
    left = int(first.split("Summary cut here: ")[1].split(" ")[0])
    assert 0 < len(kept) and left == len([line for line in full.splitlines() if line]) - len(kept)


def test_summary_budget_counts_what_the_step_already_wrote(data, capsys, monkeypatch):
    summary = data / "summary.md"
    summary.write_text("x" * (github.SUMMARY_LIMIT - 1200), encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, _, err = run(capsys, [*AUDIT, "--format", "github"])
    assert code == 1, err
    assert summary.stat().st_size <= github.SUMMARY_LIMIT
    assert "FAILED" in summary.read_text()


# --------------------------------------------------------------------------------------------
# datavet render


def test_render_names_reports_with_one_stem_apart(data, capsys):
    assert run(capsys, [*AUDIT, "--format", "json", "-o", "h.json"])[0] == 1
    (data / "sub").mkdir()
    shutil.copy(data / "h.json", data / "sub" / "h.json")
    code, out, err = run(capsys, ["render", "h.json", "sub/h.json", "--format", "sarif"])
    assert code == 0, err
    ids = [r["automationDetails"]["id"] for r in json.loads(out)["runs"]]
    assert ids == ["datavet/h/", "datavet/h-2/"]
    code, out, err = run(capsys, ["render", "h.json", "sub/h.json", "--format", "junit"])
    assert code == 0 and 'name="h"' in out and 'name="h-2"' in out


def test_render_github_writes_the_step_summary(data, capsys, monkeypatch):
    assert run(capsys, [*AUDIT, "--format", "json", "-o", "h.json"])[0] == 1
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(data / "s.md"))
    code, _, err = run(capsys, ["render", "h.json", "--format", "github"])
    assert code == 0, err
    assert "### datavet audit: FAILED" in (data / "s.md").read_text()


# --------------------------------------------------------------------------------------------
# a report read back is checked, the same for every format


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d.update(passed=True, exit_code=0),
        lambda d: d.update(counts={"error": 0, "warning": 0, "info": 0}),
        lambda d: d["outcomes"][0].update(status="crashed"),  # exit_code left at 1
        lambda d: d["findings"][0].update(columns=[1, 2]),
        lambda d: d["findings"][0].update(examples=["<x>"]),
        lambda d: d["outcomes"][0].update(status="skipped", reason=7),
        lambda d: d.update(baselines={"x": 1}),
    ],
)
def test_an_inconsistent_report_is_refused(planted, edit):
    bad = copy.deepcopy(planted)
    edit(bad)
    with pytest.raises(InputError, match="not a complete datavet JSON report"):
        check_report(bad)


def test_render_and_diff_refuse_a_lying_report(data, capsys, planted):
    lie = copy.deepcopy(planted)
    lie.update(passed=True, exit_code=0)
    (data / "lie.json").write_text(json.dumps(lie), encoding="utf-8")
    (data / "ok.json").write_text(json.dumps(planted), encoding="utf-8")
    for fmt in ("text", "github", "json"):
        code, out, err = run(capsys, ["render", "lie.json", "--format", fmt])
        assert code == 2 and out == "" and "exit_code" in err
    crashed = copy.deepcopy(planted)
    crashed["outcomes"][0]["status"] = "crashed"
    (data / "crashed.json").write_text(json.dumps(crashed), encoding="utf-8")
    assert run(capsys, ["diff", "ok.json", "crashed.json"])[0] == 2


def test_diff_exits_2_on_a_crashed_outcome(planted):
    new = copy.deepcopy(planted)
    new["outcomes"][0]["status"] = "crashed"
    new["exit_code"], new["passed"] = 2, False
    d = diff(planted, new)
    new["exit_code"] = 1  # a Diff built on a report as stored: the outcome decides
    d.new = new
    assert d.exit_code("error") == 2


def test_nan_in_a_report_is_refused_and_a_bom_accepted(data, capsys, planted):
    text = json.dumps(planted).replace('"duration_s": ', '"duration_s": NaN, "x": ')
    (data / "nan.json").write_text(text, encoding="utf-8")
    code, out, err = run(capsys, ["render", "nan.json", "--format", "text"])
    assert code == 2 and "NaN" in err and len(err.strip().splitlines()) == 1
    (data / "bom.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(planted).encode())
    code, out, err = run(capsys, ["render", "bom.json", "--format", "concise"])
    assert code == 0, err


# --------------------------------------------------------------------------------------------
# output paths and standard output


@pytest.mark.parametrize("path", ["newdir/", ""])
def test_output_path_naming_no_file_is_refused(data, capsys, path):
    code, out, err = run(capsys, [*AUDIT, "--format", "json", "-o", path])
    assert code == 2 and out == "" and err.startswith("datavet: error: ")
    assert not (data / "newdir").exists()


class _Full:
    """Standard output on a full disk."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        raise OSError(28, "No space left on device")

    def fileno(self) -> int:
        raise ValueError("no file descriptor")

    def isatty(self) -> bool:
        return False


def test_a_failed_write_to_stdout_is_a_clean_error(data, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdout", _Full())
    code = main([*AUDIT, "--format", "concise"])
    err = capsys.readouterr().err
    assert code == 2
    assert "internal error" not in err
    assert "datavet: error: standard output: cannot be written (No space left on device)" in err
