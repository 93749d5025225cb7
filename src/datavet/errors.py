"""Exceptions for misuse and unreadable input. Data problems are findings, never exceptions."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only for the annotations: report.py imports this module
    from datavet.findings import Severity
    from datavet.report import Report


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

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        # raised on a Dask worker, re-raised here: pickled with both parts
        return (type(self), (self.source, self.problem))


class EngineError(DatavetError):
    """The engine could not run the scan: a Dask scheduler that cannot be reached, a cluster
    whose workers died or failed. The message names the scheduler."""


class OutputError(DatavetError):
    """A report could not be written (disk full, no permission): the message names the file.
    Any previous report at that path is left as it was."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}")

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        return (type(self), (self.path, self.problem))


class AuditFailed(DatavetError):
    """Raised by ``Report.raise_for_findings`` when findings reach the fail-on severity."""

    exit_code = 1

    def __init__(self, report: Report, fail_on: Severity | None = None) -> None:
        self.report = report
        self.fail_on = fail_on if fail_on is not None else report.fail_on
        failing = report.failing(self.fail_on)
        crashed = [o.code for o in report.crashed]
        parts = [f"{len(failing)} finding(s) at or above {self.fail_on.label}"]
        if crashed:
            parts.append(f"crashed rules: {', '.join(crashed)}")
        codes = ", ".join(sorted({f.code for f in failing}))
        super().__init__(
            f"datavet audit failed: {'; '.join(parts)}" + (f" ({codes})" if codes else "")
        )
