"""``datavet curves LOG`` on the command line: the audit's contract. Exit 0 with nothing at or
above --fail-on, 1 with findings at or above it, 2 when the log cannot be read (one line naming
the file); text, JSON, JUnit, SARIF and GitHub output; --html; --output written atomically."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from datavet.cli import main

from .conftest import CURVES, load_make_curves

mc = load_make_curves()


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name", sorted(mc.EXPECTED))
def test_exit_code_follows_the_findings_of_each_sample(capsys, name):
    extra = []
    for key, value in mc.OPTIONS.get(name, {}).items():
        extra += [f"--{key}", value]
    code, out, err = run_cli(capsys, "curves", CURVES / name, "--format", "json", *extra)
    payload = json.loads(out)
    found = sorted({f["code"] for f in payload["findings"]})
    assert found == mc.EXPECTED[name]
    errors = [f for f in payload["findings"] if f["severity"] == "error"]
    assert code == payload["exit_code"] == (1 if errors else 0)
    # --fail-on warning: every finding of these samples is a warning or an error
    code_w, _, _ = run_cli(
        capsys, "curves", CURVES / name, "--fail-on", "warning", "--format", "json", *extra
    )
    assert code_w == (1 if found else 0)


def test_text_names_the_symptom_the_onset_and_the_causes_in_order(capsys):
    code, out, err = run_cli(capsys, "curves", CURVES / "lr_too_high.csv", "--classes", "4")
    assert code == 1 and err == ""
    assert "C002 loss-divergence" in out and "began climbing at step 201" in out
    causes = [line.strip() for line in out.splitlines() if line.strip()[:2] in ("1.", "2.", "3.")]
    assert causes[0].startswith("1. data or label errors")
    assert causes[2].startswith("3. learning rate")
    assert "exit 1" in out.splitlines()[-1]


def test_fail_on_and_exit_zero(capsys):
    # val_better.csv has one warning (C007): exit 0 at the default fail-on, 1 at warning
    assert run_cli(capsys, "curves", CURVES / "val_better.csv")[0] == 0
    assert run_cli(capsys, "curves", CURVES / "val_better.csv", "--fail-on", "warning")[0] == 1
    assert run_cli(capsys, "curves", CURVES / "lr_too_high.csv", "--exit-zero")[0] == 0
    assert run_cli(capsys, "curves", CURVES / "healthy.csv", "--fail-on", "info")[0] == 0


def test_select_and_ignore(capsys):
    code, out, _ = run_cli(
        capsys, "curves", CURVES / "lr_too_high.csv", "--ignore", "C002", "--format", "json"
    )
    payload = json.loads(out)
    assert code == 0 and payload["findings"] == []
    assert "C002" not in {o["code"] for o in payload["outcomes"]}
    code, out, _ = run_cli(
        capsys, "curves", CURVES / "grad_spikes.csv", "--select", "C009", "--format", "json"
    )
    assert [o["code"] for o in json.loads(out)["outcomes"]] == ["C009"]


def test_column_mapping_on_the_command_line(tmp_path, capsys):
    log = tmp_path / "run.csv"
    rows = ["it,nll"] + [
        f"{i},{1.4 * 0.99**i if i < 100 else 3.0 * 1.5 ** (i - 100)}" for i in range(120)
    ]
    log.write_text("\n".join(rows) + "\n")
    code, _, err = run_cli(capsys, "curves", log)
    assert code == 2 and str(log) in err and "--column train_loss=NAME" in err
    code, out, _ = run_cli(
        capsys,
        "curves",
        log,
        "--column",
        "train_loss=nll",
        "--column",
        "step=it",
        "--format",
        "json",
    )
    payload = json.loads(out)
    assert code == 1 and [f["code"] for f in payload["findings"]] == ["C002"]
    assert payload["findings"][0]["metrics"]["onset_step"] == 100


@pytest.mark.parametrize(
    "content, problem",
    [
        (None, "no such file"),
        (b"", "is empty"),
        (b"a,b\n1,2\n", "has no loss or gradient-norm column"),
        (b'{"step": 1, "loss": 2}\n{broken\n', "line 2 is not JSON"),
        (b'{"a": 1}', "without a list of records"),
    ],
)
def test_a_log_that_cannot_be_read_is_exit_2_with_one_line_naming_it(
    tmp_path, capsys, content, problem
):
    log = tmp_path / ("run.jsonl" if content and content.startswith(b"{") else "run.csv")
    if content and content.startswith(b'{"a"'):
        log = tmp_path / "run.json"
    if content is not None:
        log.write_bytes(content)
    code, out, err = run_cli(capsys, "curves", log)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("datavet: error: ")
    assert str(log) in lines[0] and problem in lines[0]


@pytest.mark.parametrize(
    "argv, problem",
    [
        (["--column", "loss_of_train=x"], "unknown curve column"),
        (["--column", "train_loss=nll"], "has no column 'nll'"),
        (["--select", "X9"], "unknown curve rule selector"),
        (["--prior", "abc"], "is not a list of numbers"),
        (["--classes", "1"], "classes must be a whole number >= 2"),
        (["--classes", "3", "--prior", "0.5,0.5"], "prior has 2 classes"),
    ],
)
def test_bad_options_are_exit_2_with_one_line(capsys, argv, problem):
    code, out, err = run_cli(capsys, "curves", CURVES / "healthy.csv", *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and problem in err


def test_html_and_output_are_written_and_stdout_stays_empty(tmp_path, capsys):
    page, result = tmp_path / "out" / "curves.html", tmp_path / "out" / "curves.json"
    code, out, err = run_cli(
        capsys,
        "curves",
        CURVES / "grad_spikes.csv",
        "--format",
        "json",
        "--html",
        page,
        "--output",
        result,
    )
    assert code == 0 and out == ""
    assert f"wrote {page}" in err and f"wrote {result}" in err
    assert json.loads(result.read_text())["findings"][0]["code"] == "C009"
    html = page.read_text()
    assert "<svg" in html and 'data-test-causes="C009"' in html
    assert [p.name for p in result.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_output_replaces_the_old_file_only_when_done(tmp_path, capsys, monkeypatch):
    import datavet._io as io

    result = tmp_path / "curves.txt"
    old = (
        "log: old.csv (10 steps, csv; columns loss=loss)\n\n0 findings (0 errors, 0 warnings, "
        "0 info) from 8 curve rules. passed at fail-on 'error' (exit 0)\n"
    )
    result.write_text(old)

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(io.os, "replace", broken_replace)
    code, out, err = run_cli(capsys, "curves", CURVES / "healthy.csv", "--output", result)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith(f"datavet: error: {result}: cannot be written") and "disk full" in err
    assert result.read_text() == old
    assert [p.name for p in tmp_path.iterdir()] == ["curves.txt"]


def test_ci_formats(capsys):
    code, out, _ = run_cli(capsys, "curves", CURVES / "lr_too_high.csv", "--format", "junit")
    root = ET.fromstring(out)
    assert code == 1 and root.get("failures") == "1"
    failed = [c.get("name") for c in root.iter("testcase") if c.find("failure") is not None]
    assert failed == ["C002 loss-divergence"]
    code, out, _ = run_cli(capsys, "curves", CURVES / "lr_too_high.csv", "--format", "sarif")
    results = json.loads(out)["runs"][0]["results"]
    assert code == 1 and [r["ruleId"] for r in results] == ["C002"]
    code, out, _ = run_cli(capsys, "curves", CURVES / "grad_spikes.csv", "--format", "github")
    assert code == 0 and out.startswith("::warning title=datavet C009 gradient-spikes::")


def test_the_installed_entry_point_runs_curves():
    done = subprocess.run(
        [sys.executable, "-m", "datavet", "curves", str(CURVES / "nonfinite.csv")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "C001 nonfinite-loss" in done.stdout
    assert "NaN at step 150" in done.stdout


@pytest.mark.parametrize("option", ["--output", "--html"])
def test_the_report_is_never_written_over_the_log(tmp_path, capsys, option):
    log = tmp_path / "run.csv"
    log.write_bytes((CURVES / "lr_too_high.csv").read_bytes())
    before = log.read_bytes()
    code, out, err = run_cli(capsys, "curves", log, option, tmp_path / "." / "run.csv")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "run.csv" in err and "over it" in err
    assert log.read_bytes() == before
