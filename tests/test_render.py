"""One audit, several outputs: ``--output-format FORMAT=PATH`` on audit/check, and ``datavet
render REPORT.json`` that renders a saved report in any format without auditing again."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

import datavet.api
from datavet.cli import main
from datavet.output import FORMATS

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


def run_cli(capsys, argv) -> tuple[int, str, str]:
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's own errors
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, out, err, *, names=None, problem=()) -> None:
    assert "Traceback" not in err, err
    assert code == 2 and out == "", (code, out[:300], err)
    (line,) = err.splitlines()
    assert line.startswith("datavet: error:"), line
    if names is not None:
        assert names in line, line
    for pattern in problem:
        assert re.search(pattern, line, re.IGNORECASE), (pattern, line)


def sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture
def data(tmp_path, monkeypatch):
    for name in ("planted_train.csv", "planted_test.csv"):
        shutil.copy(SAMPLE / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    return tmp_path


AUDIT = ["audit", "planted_train.csv", "--test", "planted_test.csv", "--target", "label"]


@pytest.fixture
def counted(monkeypatch):
    calls = []
    real = datavet.api.audit

    def audit(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(datavet.api, "audit", audit)
    return calls


# --------------------------------------------------------------------------------------------
# --output-format


def test_one_audit_writes_every_format(data, capsys, counted):
    argv = [*AUDIT, "--format", "github"]
    for fmt in sorted(FORMATS):
        argv += ["--output-format", f"{fmt}=out/report.{fmt}"]
    (data / "out").mkdir()
    code, out, err = run_cli(capsys, [*argv, "--output-format", "html=out/report.html"])
    assert code == 1, err
    assert len(counted) == 1  # the data was audited once
    assert out.splitlines()[-1].startswith("datavet: 3 error")  # --format github on stdout
    for fmt in FORMATS:
        assert f"datavet: wrote out/report.{fmt}" in err
    assert "<!DOCTYPE html>" in (data / "out" / "report.html").read_text()
    # each file is what --format FMT alone prints (json carries the audit's duration)
    for fmt in ("text", "concise", "gitlab", "sarif", "github"):
        _, alone, _ = run_cli(capsys, [*AUDIT, "--format", fmt])
        assert (data / "out" / f"report.{fmt}").read_text() == alone, fmt
    report = json.loads((data / "out" / "report.json").read_text())
    assert report["tool"] == "datavet" and report["counts"]["error"] == 3


def test_output_formats_are_rewritten_on_the_next_run(data, capsys):
    argv = [*AUDIT, "--output-format", "gitlab=gl.json", "--output-format", "concise=c.txt"]
    for _ in range(2):
        code, _, err = run_cli(capsys, argv)
        assert code == 1, err


def test_an_output_format_onto_an_input_is_refused_before_reading(data, capsys, counted):
    victim = data / "planted_train.csv"
    before = sha(victim)
    code, out, err = run_cli(capsys, [*AUDIT, "--output-format", "sarif=planted_train.csv"])
    assert_one_line_error(code, out, err, names="planted_train.csv", problem=["train input"])
    assert sha(victim) == before and counted == []


def test_an_output_format_over_a_file_not_ours_needs_force(data, capsys, counted):
    notes = data / "notes.txt"
    notes.write_text("precious\n")
    code, out, err = run_cli(capsys, [*AUDIT, "--output-format", "concise=notes.txt"])
    assert_one_line_error(code, out, err, names="notes.txt", problem=["--force"])
    assert notes.read_text() == "precious\n" and counted == []
    code, _, err = run_cli(capsys, [*AUDIT, "--output-format", "concise=notes.txt", "--force"])
    assert code == 1 and notes.read_text().startswith("planted_")


@pytest.mark.parametrize(
    "extra",
    [
        ["--output-format", "sarif=r.out", "--output-format", "junit=r.out"],
        ["--output", "r.out", "--output-format", "junit=r.out"],
        ["--output-format", "sarif=-"],  # the result goes to stdout too
        ["--html", "a.html", "--output-format", "html=b.html"],
    ],
)
def test_clashing_outputs_are_refused(data, capsys, counted, extra):
    code, out, err = run_cli(capsys, [*AUDIT, *extra])
    assert_one_line_error(code, out, err)
    assert counted == []


def test_an_unknown_format_is_a_usage_error(data, capsys):
    code, out, err = run_cli(capsys, [*AUDIT, "--output-format", "yaml=r.yaml"])
    assert code == 2 and "unknown format 'yaml'" in err
    code, out, err = run_cli(capsys, [*AUDIT, "--output-format", "sarif"])
    assert code == 2 and "FORMAT=PATH" in err


def test_json_of_several_datasets_is_refused_before_auditing(data, capsys, counted):
    (data / "pyproject.toml").write_text(
        "[tool.datavet.datasets.a]\ntrain = 'planted_train.csv'\ntarget = 'label'\n"
        "[tool.datavet.datasets.b]\ntrain = 'planted_test.csv'\ntarget = 'label'\n"
    )
    code, out, err = run_cli(capsys, ["audit", "--output-format", "json=r.json"])
    assert_one_line_error(code, out, err, problem=["holds one report"])
    assert counted == []
    code, _, err = run_cli(capsys, ["audit", "--output-format", "sarif=r.sarif"])
    assert code == 1, err
    assert len(counted) == 2 and len(json.loads((data / "r.sarif").read_text())["runs"]) == 2


def test_step_summary_is_written_once_when_github_is_an_output_format(data, capsys, monkeypatch):
    summary = data / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, _, err = run_cli(
        capsys, [*AUDIT, "--format", "github", "--output-format", "github=gh.txt"]
    )
    assert code == 1, err
    assert summary.read_text().count("### datavet audit") == 1
    summary.unlink()
    code, _, err = run_cli(capsys, [*AUDIT, "--output-format", "github=gh.txt"])
    assert code == 1 and summary.read_text().count("### datavet audit") == 1


def test_check_takes_output_formats_too(data, capsys):
    code, _, err = run_cli(
        capsys, ["check", "planted_train.csv", "--target", "label", "--output-format", "gitlab=g"]
    )
    assert code == 1, err
    assert json.loads((data / "g").read_text())[0]["location"]["path"] == "planted_train.csv"


# --------------------------------------------------------------------------------------------
# datavet render


@pytest.fixture
def saved(data, capsys):
    code, _, err = run_cli(capsys, [*AUDIT, "--format", "json", "--output", "report.json"])
    assert code == 1, err
    return data / "report.json"


@pytest.mark.parametrize("fmt", ["text", "concise", "github", "gitlab", "sarif", "junit"])
def test_render_gives_what_the_audit_would_have_printed(saved, capsys, fmt):
    code, rendered, err = run_cli(capsys, ["render", saved, "--format", fmt])
    assert code == 0, err
    _, printed, _ = run_cli(capsys, [*AUDIT, "--format", fmt])
    if fmt == "junit":  # the time attributes come from the audit's duration
        assert rendered.count("<testcase") == printed.count("<testcase")
    else:
        assert rendered == printed


def test_render_json_round_trips(saved, capsys):
    code, out, _ = run_cli(capsys, ["render", saved, "--format", "json"])
    assert code == 0 and json.loads(out) == json.loads(saved.read_text())


def test_render_writes_outputs_under_the_policy(saved, capsys, data):
    code, out, err = run_cli(
        capsys,
        ["render", saved, "--format", "sarif", "-o", "r.sarif", "--output-format", "junit=r.xml",
         "--html", "r.html"],
    )  # fmt: skip
    assert code == 0 and out == "", err
    assert json.loads((data / "r.sarif").read_text())["runs"][0]["results"]
    assert (data / "r.xml").read_text().lstrip().startswith("<?xml")
    assert "<!DOCTYPE html>" in (data / "r.html").read_text()
    before = sha(saved)
    code, out, err = run_cli(capsys, ["render", saved, "--format", "text", "-o", saved])
    assert_one_line_error(code, out, err, names="report.json", problem=["report being read"])
    assert sha(saved) == before


def test_render_several_reports_names_each(saved, capsys, data):
    shutil.copy(saved, data / "other.json")
    code, out, err = run_cli(capsys, ["render", saved, data / "other.json", "--format", "sarif"])
    assert code == 0, err
    ids = [r["automationDetails"]["id"] for r in json.loads(out)["runs"]]
    assert ids == ["datavet/report/", "datavet/other/"]
    code, out, err = run_cli(capsys, ["render", saved, data / "other.json", "--format", "json"])
    assert_one_line_error(code, out, err, problem=["one report"])


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("not json", "not JSON"),
        ('{"tool": "other"}', "not a datavet JSON report"),
        ('{"schema_version": 1, "tool": "datavet", "findings": []}', "not a complete"),
        ("[" * 100_000, "nests deeper"),
    ],
)
def test_render_bad_reports_are_one_line_errors(data, capsys, content, problem):
    bad = data / "bad.json"
    bad.write_text(content)
    code, out, err = run_cli(capsys, ["render", bad, "--format", "sarif"])
    assert_one_line_error(code, out, err, names="bad.json", problem=[problem])


def test_render_a_missing_file_or_a_folder(data, capsys):
    for path in (data / "nope.json", data):
        code, out, err = run_cli(capsys, ["render", path])
        assert_one_line_error(code, out, err)


def test_main_is_the_entry_point(saved, capsys):
    assert main(["render", str(saved), "--format", "concise"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("datavet: 3 error")


RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
HOSTILE = "a\x1b[2J\x9b31m\r\n::error::pwned\n  ::add-mask::s"
CHECKED = {"tool", "code", "name", "status", "severity", "format", "fail_on", "task", "split"}


def _poison(value, key=None):
    if isinstance(value, str) and key not in CHECKED:
        return value + HOSTILE
    if isinstance(value, dict):
        return {k: _poison(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_poison(v, key) for v in value]
    return value


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_hostile_saved_report_renders_inert(saved, capsys, data, fmt):
    """A report read back is input: every string in it (messages, hints, sources, baselines,
    reasons, tracebacks) carries escapes and workflow commands, and every format stays inert:
    no raw control character, no line GitHub would run as a command (but github's own)."""
    report = json.loads(saved.read_text())
    report["outcomes"].append(
        {"code": "L002", "name": "positional-label-drift", "status": "crashed",
         "reason": "boom", "traceback": "Traceback\n  File 'x'\nValueError: boom"}
    )  # fmt: skip
    report["exit_code"] = 2
    hostile = data / "hostile.json"
    hostile.write_text(json.dumps(_poison(report)))
    code, out, err = run_cli(capsys, ["render", hostile, "--format", fmt])
    assert code == 0, err
    assert not RAW_CONTROL.search(out) and "\r" not in out
    for line in out.splitlines():
        if line.lstrip().startswith("::"):
            head = re.match(r"::(error|warning|notice)( [^\n]*?)?::", line.lstrip())
            assert fmt == "github" and head, line
            assert "::" not in (head.group(2) or "") and "::" not in line.lstrip()[head.end() :]
    if fmt in ("json", "sarif", "gitlab"):
        json.loads(out)
    if fmt == "json":  # inert, not lost
        assert json.loads(out) == _poison(report)


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("findings", 0, "code"), "V001\n::error::x"),
        (("findings", 0, "name"), "nan values"),
        (("outcomes", 0, "status"), "odd"),
        (("datasets", "train", "format"), "csv\n::error::x"),
        (("datasets", "train", "rows"), "many"),
        (("counts", "error"), "3"),
        (("exit_code",), 7),
        (("fail_on",), "fatal"),
    ],
)
def test_render_checks_the_fields_printed_as_they_are(saved, capsys, data, where, value):
    report = json.loads(saved.read_text())
    parent = report
    for key in where[:-1]:
        parent = parent[key]
    parent[where[-1]] = value
    bad = data / "bad.json"
    bad.write_text(json.dumps(report))
    code, out, err = run_cli(capsys, ["render", bad, "--format", "text"])
    assert_one_line_error(code, out, err, names="bad.json", problem=["not a complete"])
