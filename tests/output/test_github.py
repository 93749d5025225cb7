"""GitHub Actions: workflow-command annotations (escaped, capped at GitHub's limits, with a
summary line) and the Markdown job summary for $GITHUB_STEP_SUMMARY."""

from __future__ import annotations

import os
import re

from datavet import Finding, Report, Severity
from datavet.cli import main
from datavet.findings import Outcome, Status
from datavet.output import github, render

from .ci_reports import DATA, EVIL, check_golden, clean_report, sample_report

SAMPLE = DATA.parents[1] / "sample_data"
UPDATE = os.environ.get("DATAVET_UPDATE_GOLDEN") == "1"
COMMAND = re.compile(r"^::(error|warning|notice)( [^:]*)?::")


def unescape_data(text: str) -> str:
    """What the Actions runner does to a message (ActionCommand.UnescapeData)."""
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def test_golden():
    check_golden("github_sample.txt", render(sample_report(), "github"), UPDATE)


def test_golden_summary():
    check_golden("github_summary_sample.md", github.summary(sample_report()), UPDATE)


def test_every_line_is_one_command_or_the_summary_line():
    out = render(sample_report(), "github")
    lines = out.splitlines()
    assert lines[-1].startswith("datavet: ")
    for line in lines[:-1]:
        assert COMMAND.match(line), line
        # exactly one command per line: the message part cannot hold another "::"
        assert "::" not in line[COMMAND.match(line).end() :], line


def test_a_column_name_cannot_inject_a_command():
    out = render(sample_report(), "github")
    assert "\n::error::pwned" not in out
    assert not any(line.startswith("::error::pwned") for line in out.splitlines())
    (line,) = [ln for ln in out.splitlines() if "pwned" in ln]
    message = line[COMMAND.match(line).end() :]
    # the runner turns %0A back into a newline inside the one annotation; :: is broken up and
    # the terminal escape is shown, not executed
    shown = unescape_data(message)
    assert "\n: :error: :pwned" in shown
    assert "\x1b" not in shown and "\\x1b[31m" in shown
    assert "%,col" in shown


def test_escaping_follows_the_actions_toolkit():
    assert github.escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert github.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert github.escape_data("x::y:::z") == "x: :y: : :z"
    assert github.escape_data("bell\x07") == "bell\\x07"


def test_annotations_point_at_the_location():
    locations = {"train": ("pyproject.toml", 13, 40), "test": ("pyproject.toml", 14, 38)}
    out = github.render(sample_report(), name="ds", locations=locations)
    first = out.splitlines()[1]  # after the crash annotation
    assert first.startswith("::error title=datavet [ds] ")
    assert "file=pyproject.toml,line=" in first and "col=1,endColumn=" in first


def _many(n_error: int, n_warning: int, n_info: int) -> Report:
    findings = []
    for sev, n in (
        (Severity.ERROR, n_error),
        (Severity.WARNING, n_warning),
        (Severity.INFO, n_info),
    ):
        for i in range(n):
            findings.append(
                Finding(
                    code="V001",
                    name="nan-values",
                    severity=sev,
                    message=f"{sev.label} finding {i}",
                    split="train",
                    columns=(f"c{i}",),
                )
            )
    return Report(
        findings=findings,
        outcomes=[Outcome("V001", "nan-values", Status.FAILED, n_findings=len(findings))],
        datasets={"train": {"source": "t.csv", "format": "csv", "rows": 1, "columns": []}},
    )


def test_caps_at_githubs_limits_with_a_summary_annotation():
    lines = render(_many(25, 15, 12), "github").splitlines()
    kinds = [COMMAND.match(ln).group(1) for ln in lines if COMMAND.match(ln)]
    assert kinds.count("error") == 10
    assert kinds.count("warning") == 10
    assert kinds.count("notice") == 10  # 9 findings + the "more" notice
    more = [ln for ln in lines if "more findings not shown" in ln]
    assert len(more) == 1 and "23 more findings" in more[0]  # 15 + 5 + 3
    assert lines[-1] == "datavet: 25 error, 15 warning, 12 info; FAILED at fail-on 'error' (exit 1)"


def test_no_more_notice_under_the_caps():
    lines = render(_many(10, 10, 10), "github").splitlines()
    assert not any("more findings" in ln for ln in lines)
    assert len(lines) == 31


def test_most_severe_shown_first():
    lines = render(_many(3, 3, 3), "github").splitlines()
    kinds = [COMMAND.match(ln).group(1) for ln in lines if COMMAND.match(ln)]
    assert kinds == ["error"] * 3 + ["warning"] * 3 + ["notice"] * 3


def test_summary_markdown_escapes_data():
    md = github.summary(sample_report())
    assert "<b>" not in md and "&lt;b&gt;" in md
    assert "\x1b" not in md and "\x7f" not in md
    # every table row stays one row: the newline in the column name is flattened
    for line in md.splitlines():
        if line.startswith("|"):
            assert line.endswith("|")
    assert "x3 is a bias input, constant on purpose" in md  # ignored, with the reason
    assert github.md("a|b @team [x](y) *z*") == "a\\|b &#64;team \\[x\\](y) \\*z\\*"


def test_summary_is_capped_under_one_mebibyte():
    report = _many(0, 0, 0)
    report.findings = [
        Finding(
            code="V001",
            name="nan-values",
            severity=Severity.ERROR,
            message="x" * 500 + f" {i}",
            split="train",
            columns=(f"c{i}",),
        )
        for i in range(5000)
    ]
    md = github.summary(report)
    assert len(md.encode("utf-8")) < 1024 * 1024
    assert "Summary cut here" in md
    assert len(github.summary(clean_report()).encode()) < 2000


def test_cli_writes_the_step_summary(tmp_path, monkeypatch, capsys):
    summary = tmp_path / "summary.md"
    summary.write_text("previous step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code = main(
        [
            "audit",
            str(SAMPLE / "planted_train.csv"),
            "--test",
            str(SAMPLE / "planted_test.csv"),
            "--target",
            "label",
            "--format",
            "github",
            "--isolated",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert out.count("::error ") == 3
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("previous step\n")  # appended, as GitHub expects
    assert "### datavet audit: FAILED" in text and "| error | S001 train-test-overlap |" in text


def test_crash_is_an_error_annotation():
    out = render(sample_report(), "github")
    assert out.splitlines()[0].startswith("::error title=datavet L002 crashed")
    assert "could not finish" in out.splitlines()[-1]
    assert EVIL not in out
