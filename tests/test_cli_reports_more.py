"""Saved reports and the journal from the command line: ``diff`` compares only reports of one
kind and never a file with itself, ``render`` and ``diff`` name the first bad field of a report,
a directory is called a directory, the journal is never written into a file that is not one, and
L004 survives targets near 1e300."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hardening.helpers import assert_one_line_error, run_cli

import datavet
from datavet.cli import main
from datavet.output import FORMATS

ROOT = Path(__file__).resolve().parents[1]
PLANTED = ROOT / "sample_data" / "planted_train.csv"
LOG = ROOT / "sample_data" / "curves" / "grad_spikes.csv"


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, Path]:
    """An audit report and a curves report, as ``--format json`` writes them."""
    folder = tmp_path_factory.mktemp("saved")
    audit, curves = folder / "audit.json", folder / "curves.json"
    assert main(["audit", str(PLANTED), "--format", "json", "-o", str(audit)]) == 1
    assert main(["curves", str(LOG), "--format", "json", "-o", str(curves)]) in (0, 1)
    return {"audit": audit, "curves": curves}


# --------------------------------------------------------------------------------------------
# CL-4: diff compares two reports of one kind, never a file with itself


@pytest.mark.parametrize("order", ["audit-curves", "curves-audit"])
def test_diff_refuses_reports_of_different_kinds(saved, capsys, order):
    old, new = (saved[k] for k in order.split("-"))
    code, out, err = run_cli(capsys, ["diff", old, new])
    assert_one_line_error(code, out, err, names=old.name, problem=["audit", "curves", "one kind"])


def test_diff_refuses_one_file_as_old_and_new(saved, tmp_path, capsys):
    link = tmp_path / "latest.json"
    link.symlink_to(saved["audit"])
    for new in (saved["audit"], link):
        code, out, err = run_cli(capsys, ["diff", saved["audit"], new])
        assert_one_line_error(code, out, err, names=str(new), problem=["same file"])


def test_diff_of_a_copy_still_works(saved, tmp_path, capsys):
    copied = tmp_path / "copy.json"
    copied.write_bytes(saved["audit"].read_bytes())
    code, out, err = run_cli(capsys, ["diff", saved["audit"], copied])
    assert code == 0, err
    assert "unchanged: " in out


# --------------------------------------------------------------------------------------------
# CL-10: one check of a report read back, naming the first bad field, for every format


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("columns", None, "findings[0].columns: expected a list"),
        ("n_affected", -5, "findings[0].n_affected: expected a whole number >= 0"),
        ("metrics", {"p": "x"}, "findings[0].metrics: expected an object of numbers"),
        ("examples", None, "findings[0].examples: expected a list"),
    ],
)
def test_render_and_diff_name_the_bad_field(saved, tmp_path, capsys, field, value, problem):
    report = json.loads(saved["audit"].read_text())
    report["findings"][0][field] = value
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(report))
    for fmt in sorted(FORMATS):
        code, out, err = run_cli(capsys, ["render", bad, "--format", fmt])
        assert_one_line_error(code, out, err, names="bad.json", problem=[re.escape(problem)])
    code, out, err = run_cli(capsys, ["diff", saved["audit"], bad])
    assert_one_line_error(code, out, err, names="bad.json", problem=[re.escape(problem)])


def test_a_missing_finding_field_is_named(saved, tmp_path, capsys):
    report = json.loads(saved["audit"].read_text())
    del report["findings"][1]["hint"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(report))
    code, out, err = run_cli(capsys, ["render", bad, "--format", "text"])
    assert_one_line_error(code, out, err, problem=[r"findings\[1\].hint: missing"])


# --------------------------------------------------------------------------------------------
# CL-14: a directory where a file is expected is called a directory, before the output checks


def test_render_of_a_directory_says_so_before_the_output_clash(saved, tmp_path, capsys):
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "today.json").write_bytes(saved["audit"].read_bytes())
    code, out, err = run_cli(capsys, ["render", folder, "-o", folder / "today.sarif"])
    assert_one_line_error(code, out, err, names="reports", problem=["is a directory"])
    assert not (folder / "today.sarif").exists()


def test_curves_of_a_directory_says_so_before_the_output_clash(tmp_path, capsys):
    code, out, err = run_cli(capsys, ["curves", tmp_path, "-o", tmp_path / "diag.txt"])
    assert_one_line_error(code, out, err, problem=["is a directory, not a training log"])


def test_diff_of_a_directory_says_so_before_the_output_clash(saved, tmp_path, capsys):
    code, out, err = run_cli(capsys, ["diff", tmp_path, saved["audit"], "-o", tmp_path / "d.txt"])
    assert_one_line_error(code, out, err, problem=["is a directory"])


# --------------------------------------------------------------------------------------------
# CL-1: a journal command never writes into a file that is not a journal, --force or not

ADD = ["journal", "add", "--hypothesis", "h", "--change", "c"]


def test_journal_never_writes_into_a_report_even_with_force(saved, tmp_path, capsys):
    report = tmp_path / "report.json"
    report.write_bytes(saved["audit"].read_bytes())
    code, out, err = run_cli(capsys, [*ADD, "--journal", report, "--force"])
    assert_one_line_error(code, out, err, names="report.json", problem=["not a datavet journal"])
    assert report.read_bytes() == saved["audit"].read_bytes()
    assert not (tmp_path / "report.md").exists()


def test_journal_view_never_replaces_a_report_even_with_force(saved, tmp_path, capsys):
    view = tmp_path / "j.md"
    view.write_bytes(saved["audit"].read_bytes())
    code, out, err = run_cli(capsys, [*ADD, "--journal", tmp_path / "j.jsonl", "--force"])
    assert_one_line_error(code, out, err, names="j.md", problem=["report"])
    assert view.read_bytes() == saved["audit"].read_bytes()
    assert not (tmp_path / "j.jsonl").exists()


def test_journal_is_still_written_and_appended_to(tmp_path, capsys):
    journal = tmp_path / "j.jsonl"
    for _ in range(2):
        code, _, err = run_cli(capsys, [*ADD, "--journal", journal, "--force"])
        assert code == 0, err
    assert [json.loads(x)["id"] for x in journal.read_text().splitlines()] == [1, 2]


# --------------------------------------------------------------------------------------------
# CL-15: reading a journal whose folder does not exist is the error `add` gives


@pytest.mark.parametrize("argv", [["list"], ["search", "diverges"], ["show"]])
def test_reading_a_journal_in_a_missing_folder_is_an_error(tmp_path, capsys, argv):
    journal = tmp_path / "note" / "j.jsonl"
    code, out, err = run_cli(capsys, ["journal", *argv, "--journal", journal])
    assert_one_line_error(code, out, err, problem=["folder", "does not exist"])


def test_reading_a_journal_not_yet_written_notes_it(tmp_path, capsys):
    journal = tmp_path / "j.jsonl"
    code, out, err = run_cli(capsys, ["journal", "list", "--journal", journal])
    assert code == 0 and out == ""
    assert "no journal at" in err and str(journal) in err
    assert not journal.exists()


# --------------------------------------------------------------------------------------------
# CL-6: L004 on a regression target near 1e300


def test_label_shift_survives_targets_near_1e300():
    rng = np.random.default_rng(0)
    train = pd.DataFrame({"x": rng.normal(size=300), "y": rng.normal(size=300) * 1e300})
    same = pd.DataFrame({"x": rng.normal(size=50), "y": rng.normal(size=50) * 1e300})
    moved = pd.DataFrame({"x": rng.normal(size=50), "y": (rng.normal(size=50) + 1) * 1e300})
    quiet = datavet.audit(train, same, target="y", task="regression", select=["L004"])
    assert not quiet.crashed and not quiet.findings
    found = datavet.audit(train, moved, target="y", task="regression", select=["L004"])
    assert not found.crashed
    assert [f.code for f in found.findings] == ["L004"]
