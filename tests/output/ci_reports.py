"""Hand-built reports for the CI renderers' golden files: every kind of testcase and result, and
data that tries to break out (control characters, ``::`` commands, markup, ``%``, commas)."""

from __future__ import annotations

from pathlib import Path

from datavet import Finding, Report, Severity, __version__
from datavet.findings import Outcome, Status
from datavet.report import Ignored

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
DATA = Path(__file__).resolve().parents[1] / "data"

# A column name a hostile (or careless) data file can carry: a terminal escape, a newline that
# starts a GitHub workflow command, XML/HTML markup, a DEL, a percent and a comma.
EVIL = "bad\x1b[31m\n::error::pwned<b>&\x7f%,col"


def _columns(names):
    return [
        {
            "name": n,
            "dtype": "double" if n != "city" else "string",
            "kind": "numeric" if n != "city" else "string",
            "count": 100,
            "nan": 0,
            "inf": 0,
            "mean": 0.0,
            "std": 1.0,
            "min": -2.0,
            "max": 2.0,
            "distinct": 100,
        }
        for n in names
    ]


def sample_report() -> Report:
    findings = [
        Finding(
            code="V001",
            name="nan-values",
            severity=Severity.ERROR,
            message="Column 'x1' has 3 NaN/missing values in train (3.0%): rows 4, 8, 15.",
            split="train",
            columns=("x1",),
            n_affected=3,
            examples=(4, 8, 15),
            metrics={"count": 3, "fraction": 0.03},
            hint="impute with train-fitted statistics, or drop the rows",
        ),
        Finding(
            code="V001",
            name="nan-values",
            severity=Severity.ERROR,
            message=f"Column {EVIL} has 1 NaN/missing value in test (2.0%): row 7.",
            split="test",
            columns=(EVIL,),
            n_affected=1,
            examples=(7,),
            metrics={"count": 1, "fraction": 0.02},
        ),
        Finding(
            code="S001",
            name="train-test-overlap",
            severity=Severity.ERROR,
            message="5 of 50 test rows (10.0%) also appear in train (identical features).",
            split="test",
            n_affected=5,
            examples=(45, 46, 47, 48, 49),
        ),
        Finding(
            code="F003",
            name="scale-mismatch",
            severity=Severity.WARNING,
            message="Feature scales in train differ 300x; out of line: 'x0'.",
            split="train",
            columns=("x0",),
            hint="standardise features",
        ),
        Finding(
            code="F002",
            name="near-constant-feature",
            severity=Severity.INFO,
            message="Column 'city' has one value in 99.5% of train rows.",
            split="train",
            columns=("city",),
        ),
    ]
    ignored = [
        Ignored(
            finding=Finding(
                code="F001",
                name="constant-feature",
                severity=Severity.WARNING,
                message="Column 'x3' is constant in train: all 100 values are 7.0.",
                split="train",
                columns=("x3",),
            ),
            reason="x3 is a bias input, constant on purpose",
        )
    ]
    outcomes = [
        Outcome("V001", "nan-values", Status.FAILED, n_findings=2),
        Outcome("F001", "constant-feature", Status.PASSED),
        Outcome("F002", "near-constant-feature", Status.FAILED, n_findings=1),
        Outcome("F003", "scale-mismatch", Status.FAILED, n_findings=1),
        Outcome("L001", "class-imbalance", Status.SKIPPED, reason="no target column given"),
        Outcome(
            "L002",
            "positional-label-drift",
            Status.CRASHED,
            reason="ValueError: boom\x00",
            traceback='Traceback (most recent call last):\n  File "x.py", line 1\nValueError: boom',
        ),
        Outcome("S001", "train-test-overlap", Status.FAILED, n_findings=1),
    ]
    return Report(
        findings=findings,
        outcomes=outcomes,
        datasets={
            "train": {
                "source": "data/train.csv",
                "format": "csv",
                "rows": 100,
                "columns": _columns(["x0", "x1", "x3", "city"]),
            },
            "test": {
                "source": "data/test.csv",
                "format": "csv",
                "rows": 50,
                "columns": _columns(["x0", "x1", EVIL]),
            },
        },
        fail_on=Severity.ERROR,
        target="label",
        task="classification",
        task_reason="target holds whole numbers with 2 distinct values",
        duration_s=1.23456,
        ignored=ignored,
    )


def clean_report() -> Report:
    return Report(
        findings=[],
        outcomes=[
            Outcome("V001", "nan-values", Status.PASSED),
            Outcome("S001", "train-test-overlap", Status.PASSED),
        ],
        datasets={
            "train": {
                "source": "data/clean.parquet",
                "format": "parquet",
                "rows": 10,
                "columns": _columns(["a", "b"]),
            }
        },
        duration_s=0.5,
    )


def check_golden(name: str, text: str, update: bool) -> None:
    """Compare ``text`` with ``tests/golden/NAME`` (the version normalised); with
    DATAVET_UPDATE_GOLDEN=1 write it instead, then fail so the update is never silent."""
    normalised = text.replace(__version__, "{version}")
    path = GOLDEN / name
    if update:
        path.write_text(normalised, encoding="utf-8", newline="")
        raise AssertionError(f"golden file {name} rewritten; rerun without DATAVET_UPDATE_GOLDEN")
    expected = path.read_text(encoding="utf-8")
    assert normalised == expected, f"{name} differs from the golden file"
