"""Concise: one line per finding, ``path: CODE name [split] message``, and a summary line."""

from __future__ import annotations

import os
import re

from datavet import Finding, Report, Severity
from datavet.findings import Outcome, Status
from datavet.output import FORMATS, render, render_many
from datavet.outputs import is_datavet_output

from .ci_reports import check_golden, clean_report, sample_report

UPDATE = os.environ.get("DATAVET_UPDATE_GOLDEN") == "1"
LINE = re.compile(r"^\S[^\n]*: [A-Z]\d{3} [a-z0-9-]+( \[[a-z]+\])? \S")


def test_registered():
    assert "concise" in FORMATS


def test_golden():
    check_golden("concise_sample.txt", render(sample_report(), "concise"), UPDATE)


def test_one_line_per_finding_then_the_summary():
    lines = render(sample_report(), "concise").splitlines()
    assert len(lines) == 5 + 1 + 1  # findings, the crashed rule, the summary
    for line in lines[:5]:
        assert LINE.match(line), line
    assert lines[0] == (
        "data/test.csv: S001 train-test-overlap [test] 5 of 50 test rows (10.0%) also appear "
        "in train (identical features)."
    )
    assert "crashed" in lines[5]
    assert lines[-1] == (
        "datavet: 3 error, 1 warning, 1 info, 1 ignored; could not finish: a rule crashed (exit 2)"
    )


def test_a_clean_report_is_the_summary_line_and_is_recognised(tmp_path):
    assert render(clean_report(), "concise") == (
        "datavet: 0 error, 0 warning, 0 info; passed at fail-on 'error' (exit 0)\n"
    )
    path = tmp_path / "out.txt"
    path.write_text(render(sample_report(), "concise"))
    assert is_datavet_output(path)


def test_a_hostile_source_path_cannot_start_a_workflow_command():
    report = Report(
        findings=[
            Finding(
                code="V001",
                name="nan-values",
                severity=Severity.ERROR,
                message="Column 'x' has NaN\n::error::again",
                split="train",
                columns=("x",),
            )
        ],
        outcomes=[Outcome("V001", "nan-values", Status.FAILED, n_findings=1)],
        datasets={"train": {"source": "::error::x.csv", "format": "csv", "rows": 1}},
    )
    out = render(report, "concise")
    assert len(out.splitlines()) == 2
    assert not any(line.lstrip().startswith("::") for line in out.splitlines())
    assert out.startswith("./::error::x.csv: V001 nan-values [train] Column 'x' has NaN\\n")


def test_several_datasets_are_labelled():
    out = render_many([("a", sample_report(), None), ("b", clean_report(), None)], "concise")
    lines = out.splitlines()
    assert lines[0].startswith("data/test.csv: [a] S001 ")
    assert lines[-1].startswith("datavet b: 0 error")
