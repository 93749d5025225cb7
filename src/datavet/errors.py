"""Exceptions for misuse and unreadable input. Data problems are findings, never exceptions."""

from __future__ import annotations


class DatavetError(Exception):
    """Base class. The CLI turns any of these into a one-line message and exit code 2."""

    exit_code = 2


class UsageError(DatavetError, ValueError):
    """The caller asked for something that cannot be done (unknown rule, bad option)."""


class InputError(DatavetError):
    """An input could not be read: missing, corrupt, empty, or without the target column.

    The message always starts with the input's name, so a one-line error says which file.
    """

    def __init__(self, source: str, problem: str) -> None:
        self.source = source
        self.problem = problem
        super().__init__(f"{source}: {problem}")


class AuditFailed(DatavetError):
    """Raised by ``Report.raise_for_findings`` when findings reach the fail-on severity."""

    exit_code = 1

    def __init__(self, report) -> None:  # noqa: ANN001 - Report, imported lazily to avoid a cycle
        self.report = report
        counts = report.counts()
        summary = ", ".join(f"{n} {sev}" for sev, n in counts.items() if n)
        super().__init__(f"datavet audit failed at fail_on={report.fail_on.label}: {summary}")
