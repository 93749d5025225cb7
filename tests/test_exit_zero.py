"""``--exit-zero``: the process exits 0 on findings, and every human line says so (the report's
verdict, ``exit_code`` in JSON, stays 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from datavet.cli import main
from datavet.output import render
from datavet.output.json import schema

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
AUDIT = [
    "audit",
    str(SAMPLE / "planted_train.csv"),
    "--test",
    str(SAMPLE / "planted_test.csv"),
    "--target",
    "label",
]


def _run(capsys, argv):
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("fmt", ["text", "concise", "github"])
def test_the_verdict_line_names_the_exit_code_the_process_used(capsys, fmt):
    code, out = _run(capsys, [*AUDIT, "--format", fmt])
    assert code == 1 and "(exit 1)" in out and "--exit-zero" not in out
    code, out = _run(capsys, [*AUDIT, "--format", fmt, "--exit-zero"])
    assert code == 0
    assert "(exit 0 with --exit-zero)" in out and "(exit 1)" not in out


def test_json_keeps_the_verdict_and_says_exit_zero(capsys):
    code, out = _run(capsys, [*AUDIT, "--format", "json", "--exit-zero"])
    data = json.loads(out)
    assert code == 0 and data["exit_code"] == 1 and data["exit_zero"] is True
    assert not list(Draft202012Validator(schema()).iter_errors(data))
    _, plain = _run(capsys, [*AUDIT, "--format", "json"])
    assert "exit_zero" not in json.loads(plain)
    # a saved report rendered later keeps what the process did
    assert "(exit 0 with --exit-zero)" in render(_Saved(data), "text")


class _Saved:
    def __init__(self, data):
        self.data = data

    def to_dict(self):
        return self.data


def test_a_report_written_with_exit_zero_is_still_datavets_own(tmp_path, capsys):
    out = tmp_path / "report.txt"
    code, _ = _run(capsys, [*AUDIT, "--exit-zero", "--output", out])
    assert code == 0 and out.read_text().rstrip().endswith("(exit 0 with --exit-zero)")
    # writing over it again is allowed without --force: the file is recognised as a report
    code, _ = _run(capsys, [*AUDIT, "--output", out])
    assert code == 1 and out.read_text().rstrip().endswith("(exit 1)")
    code, _ = _run(capsys, [*AUDIT, "--exit-zero", "--format", "concise", "--output", out])
    assert code == 0
    code, _ = _run(capsys, [*AUDIT, "--format", "concise", "--output", out])
    assert code == 1


def test_curves_exit_zero(tmp_path, capsys):
    log = tmp_path / "log.csv"
    log.write_text("step,loss\n" + "".join(f"{i},{1.0 if i < 50 else 'nan'}\n" for i in range(80)))
    code, out = _run(capsys, ["curves", log])
    assert code == 1 and "(exit 1)" in out
    code, out = _run(capsys, ["curves", log, "--exit-zero"])
    assert code == 0 and "(exit 0 with --exit-zero)" in out
