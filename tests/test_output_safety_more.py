"""What datavet may write over, continued: a text file is datavet's own output only when all of
it is one (not a log or notes that end with a pasted verdict line); what is at the path is
judged again when the report is put in place (a file that appeared while the audit ran is kept);
a journal is never replaced by a report, --force or not; standard output that cannot be written
is one error line and exit 2 for every command."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hardening.helpers import assert_one_line_error, child_env, run_cli

import datavet._io as dv_io
from datavet.outputs import is_datavet_output

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
PLANTED = SAMPLE / "planted_train.csv"
NOTES = "my precious notes, not a report\n"
LOG = "".join(f"epoch {i}: loss 0.{i:03d} (keep this log)\n" for i in range(200))
VERDICTS = [
    "datavet: 1 error, 3 warning, 0 info; FAILED at fail-on 'error' (exit 1)",
    "1 finding (1 error, 0 warnings, 0 info) from 19 rules. FAILED: findings at or above "
    "'error' (exit 1)",
    "0 findings (0 errors, 0 warnings, 0 info) from 9 rules. passed at fail-on 'error' (exit 0)",
    "nothing new at or above 'error': exit 0",
]


# --------------------------------------------------------------------------------------------
# a text file is datavet's only when all of it is


@pytest.mark.parametrize("verdict", VERDICTS)
def test_a_log_ending_in_a_verdict_line_is_not_replaced_without_force(verdict, tmp_path, capsys):
    log = tmp_path / "pipeline.log"
    log.write_text("== nightly pipeline ==\n" + LOG + verdict + "\n")
    before = log.read_text()
    code, out, err = run_cli(capsys, ["audit", PLANTED, "-o", log])
    assert_one_line_error(
        code, out, err, names="pipeline.log", problem=["not a datavet", "--force"]
    )
    assert log.read_text() == before
    code, _, _ = run_cli(capsys, ["audit", PLANTED, "-o", log, "--force"])
    assert code == 1 and log.read_text().startswith("train: ")


def test_a_report_with_notes_added_is_not_a_report(tmp_path, capsys):
    """A datavet header at the top and a verdict at the bottom are not enough: lines of the
    user's own in between make it the user's file."""
    report = tmp_path / "report.txt"
    assert run_cli(capsys, ["audit", PLANTED, "-o", report])[0] == 1
    assert is_datavet_output(report)
    lines = report.read_text().splitlines()
    report.write_text("\n".join([*lines[:2], "my analysis: the NaNs come from the join", *lines]))
    assert not is_datavet_output(report)
    code, out, err = run_cli(capsys, ["audit", PLANTED, "-o", report])
    assert_one_line_error(code, out, err, names="report.txt", problem=["--force"])


def test_a_large_text_report_is_judged_by_both_ends(tmp_path, capsys):
    """Past twice the bytes peeked at, the first and the last lines are both read: a report
    passes, the same report with a line of the user's near either end does not."""
    saved = tmp_path / "r0.json"
    assert run_cli(capsys, ["audit", PLANTED, "--format", "json", "-o", saved])[0] == 1
    copies = [tmp_path / f"r{i}.json" for i in range(16)]
    for copy in copies[1:]:
        copy.write_bytes(saved.read_bytes())
    big = tmp_path / "big.txt"
    assert run_cli(capsys, ["render", *copies, "-o", big])[0] == 0
    assert big.stat().st_size > 4 * 8192
    assert is_datavet_output(big)
    lines = big.read_text().splitlines()
    for at in (3, len(lines) - 3):
        big.write_text("\n".join([*lines[:at], "my note: rerun after the fix", *lines[at:]]))
        assert not is_datavet_output(big), at


FACTORY = """\
import torch
from torch import nn


def factory():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    return model, (torch.randn(16, 4), torch.randint(0, 2, (16,))), nn.functional.cross_entropy


def preflight():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2)), nn.functional.cross_entropy
"""


def _preflight_data(tmp_path) -> Path:
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({c: rng.normal(size=64) for c in "abcd"})
    frame["label"] = rng.integers(0, 2, 64)
    path = tmp_path / "pf.csv"
    frame.to_csv(path, index=False)
    return path


OWN_OUTPUTS = {
    **{
        f"audit {f}": ["audit", PLANTED, "--format", f]
        for f in ("text", "concise", "github", "json", "junit", "gitlab", "sarif")
    },
    "audit --exit-zero text": ["audit", PLANTED, "--exit-zero"],
    "audit --exit-zero concise": ["audit", PLANTED, "--exit-zero", "--format", "concise"],
    "audit with a test split": ["audit", PLANTED, "--test", SAMPLE / "planted_test.csv"],
    "audit of clean data, concise": ["audit", SAMPLE / "clean_train.csv", "--format", "concise"],
    "check text": ["check", PLANTED, SAMPLE / "clean_train.csv"],
    "check github": ["check", PLANTED, SAMPLE / "clean_train.csv", "--format", "github"],
    "curves text": ["curves", SAMPLE / "curves" / "lr_too_high.csv"],
    "curves concise": ["curves", SAMPLE / "curves" / "lr_too_high.csv", "--format", "concise"],
    "probe text": ["probe", "{model}:factory"],
    "preflight text": ["preflight", "{model}:preflight", "--train", "{pf}", "--target", "label"],
    "diff text": ["diff", "{old}", "{new}"],
    "render text of two reports": ["render", "{old}", "{new}"],
}


def test_every_output_datavet_writes_is_its_own(tmp_path, capsys):
    """Each command's output, written to a file, is recognised (a preflight's stages follow
    its verdict): the next run writes over it without --force."""
    model = tmp_path / "model.py"
    model.write_text(FACTORY)
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    run_cli(capsys, ["audit", PLANTED, "--format", "json", "-o", old])
    run_cli(capsys, ["audit", SAMPLE / "clean_train.csv", "--format", "json", "-o", new])
    fill = {"model": model, "old": old, "new": new, "pf": _preflight_data(tmp_path)}
    unrecognised = []
    for case, template in OWN_OUTPUTS.items():
        argv = [str(a).format(**fill) for a in template]
        out = tmp_path / f"{case.replace(' ', '_')}.out"
        first, _, err = run_cli(capsys, [*argv, "-o", out])
        assert first in (0, 1), (case, err)
        code, _, err = run_cli(capsys, [*argv, "-o", out])
        if not is_datavet_output(out) or code != first:
            unrecognised.append((case, err))
    assert unrecognised == []


# --------------------------------------------------------------------------------------------
# what is at the path is judged again when the report is put in place


def _appears_while_writing(monkeypatch, path: Path, content: str) -> None:
    """``content`` lands at ``path`` after the outputs were checked, while the report is
    being written (another job, a user, an editor)."""
    real = tempfile.mkstemp

    def mkstemp(*args, **kwargs):
        made = real(*args, **kwargs)
        path.write_text(content)
        return made

    monkeypatch.setattr(dv_io.tempfile, "mkstemp", mkstemp)


def _no_hard_links(monkeypatch) -> None:
    def link(src, dst, *args, **kwargs):
        raise OSError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(dv_io.os, "link", link)


@pytest.mark.parametrize("links", [True, False], ids=["hard links", "no hard links"])
@pytest.mark.parametrize("force", [False, True], ids=["", "--force"])
def test_a_file_that_appears_while_the_audit_runs_is_kept_and_a_report_replaced(
    links, force, tmp_path, capsys, monkeypatch
):
    """Not there when the outputs were checked: --force covered nothing there, so a file that
    appeared since is not replaced."""
    if not links:
        _no_hard_links(monkeypatch)
    out = tmp_path / "results.txt"
    _appears_while_writing(monkeypatch, out, NOTES)
    code, stdout, err = run_cli(
        capsys, ["audit", PLANTED, "-o", out, *(["--force"] if force else [])]
    )
    assert_one_line_error(code, stdout, err, names="results.txt", problem=["while datavet ran"])
    assert out.read_text() == NOTES
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.txt"]
    # another datavet run writing the same path: its report holds nothing to lose
    out.unlink()
    other = (
        "train: other.csv (1 rows, 2 columns, csv)\ntarget: none (label rules skipped; pass "
        "--target)\n\n0 findings (0 errors, 0 warnings, 0 info) from 9 rules. passed at "
        "fail-on 'error' (exit 0)\n"
    )
    _appears_while_writing(monkeypatch, out, other)
    code, _, err = run_cli(capsys, ["audit", PLANTED, "-o", out])
    assert code == 1, err
    assert out.read_text().startswith(f"train: {PLANTED}")
    assert (out.stat().st_mode & 0o777) == 0o666 & ~_umask()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.txt"]


def test_a_report_that_becomes_notes_while_the_audit_runs_is_kept(tmp_path, capsys, monkeypatch):
    out = tmp_path / "results.txt"
    assert run_cli(capsys, ["audit", PLANTED, "-o", out])[0] == 1
    _appears_while_writing(monkeypatch, out, NOTES)
    code, stdout, err = run_cli(capsys, ["audit", PLANTED, "-o", out])
    assert_one_line_error(code, stdout, err, names="results.txt", problem=["while datavet ran"])
    assert out.read_text() == NOTES


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# --------------------------------------------------------------------------------------------
# a report never replaces a journal


@pytest.mark.parametrize("force", [False, True], ids=["", "--force"])
def test_a_report_never_replaces_the_journal(force, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(
        capsys, ["journal", "add", "--hypothesis", "lr too high", "--change", "lr 2 -> 0.02"]
    )
    assert code == 0, err
    journal = tmp_path / "datavet-journal.jsonl"
    before = journal.read_bytes()
    code, out, err = run_cli(
        capsys,
        ["audit", PLANTED, "--format", "json", "-o", journal, *(["--force"] if force else [])],
    )
    assert_one_line_error(code, out, err, names="datavet-journal.jsonl", problem=["journal"])
    assert "--force to replace" not in err
    assert journal.read_bytes() == before


# --------------------------------------------------------------------------------------------
# standard output that cannot be written


def _child(args, cwd, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "datavet", *map(str, args)],
        cwd=cwd,
        env=child_env(),
        stderr=subprocess.PIPE,
        text=True,
        timeout=300,
        check=False,
        **kwargs,
    )


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    d = tmp_path_factory.mktemp("stdout")
    for name in ("a.json", "b.json"):
        _child(["audit", PLANTED, "--format", "json", "-o", d / name], d)
    return d


COMMANDS = {
    "audit": ["audit", PLANTED],
    "config": ["config", "--isolated"],
    "render": ["render", "a.json"],
    "diff": ["diff", "a.json", "b.json"],
    "rules": ["rules"],
    "rule": ["rule", "V001"],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_closed_standard_output_is_one_error_line(command, reports):
    """``datavet ... >&-`` (as cron and daemon wrappers may leave it): nothing can be shown,
    so exit 2 with a line saying why, never an internal error or a silent exit 0."""
    done = _child(COMMANDS[command], reports, preexec_fn=lambda: os.close(1))
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "datavet: error: standard output: cannot be written (it is closed)"
    ]


@pytest.mark.parametrize("command", ["config", "rules", "rule"])
def test_standard_output_open_for_reading_is_one_error_line(command, reports, tmp_path):
    readonly = tmp_path / "readonly.txt"
    readonly.write_text("x\n")
    with open(readonly, "rb") as fh:
        done = _child(COMMANDS[command], reports, stdout=fh)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"datavet: error: standard output: cannot be written ({os.strerror(errno.EBADF)})"
    ]
    assert readonly.read_text() == "x\n"


def test_closed_standard_output_fails_a_report_printed_not_one_written(reports, tmp_path):
    closed = {"preexec_fn": lambda: os.close(1)}
    done = _child(["config", "--isolated", "--format", "json"], reports, **closed)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "datavet: error: standard output: cannot be written (it is closed)"
    ]
    out = tmp_path / "r.json"
    done = _child(["audit", PLANTED, "--format", "json", "-o", out], reports, **closed)
    assert done.returncode == 1, done.stderr
    assert json.loads(out.read_text())["tool"] == "datavet"


def test_large_text_outputs_are_judged_by_every_line(tmp_path, capsys):
    """A text file over two peek windows is read whole: datavet's own report with a first line
    longer than a window is still its own, and a log with a datavet run at each end is not."""
    import numpy as np
    import pandas as pd

    from datavet.cli import main

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    data = tmp_path / "wide.csv"
    pd.DataFrame({"c": ["Z" * 20000] * 200, "x": y * 3.0, "label": y}).to_csv(data, index=False)
    out = tmp_path / "out.txt"
    argv = ["audit", str(data), "--target", "label", "--select", "F001", "--format", "concise"]
    argv += ["-o", str(out)]
    for _ in range(2):  # the second run replaces the first run's report
        assert main(argv) in (0, 1)
    assert len(out.read_text().splitlines()[0]) > 16384
    # a log: a datavet report at each end (each over a window), a training log between
    report = out.read_text()
    log = tmp_path / "run.log"
    log.write_text(
        report + "".join(f"epoch {i} loss {1 / (i + 1):.4f}\n" for i in range(2000)) + report
    )
    capsys.readouterr()
    assert main([*argv[:-1], str(log)]) == 2
    assert "is not a datavet report" in capsys.readouterr().err
    assert "epoch 1999" in log.read_text()
