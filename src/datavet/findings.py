"""Severity, Finding and Outcome: the values auditors produce. No I/O here."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from datavet.errors import UsageError


class Severity(enum.IntEnum):
    """How bad a finding is: ordered ``INFO < WARNING < ERROR``, and equal to its lowercase name.

    ``finding.severity == "error"`` is what users write, so it holds; so do
    ``finding.severity >= Severity.WARNING`` and ``finding.severity >= "warning"``, and
    ``str(Severity.ERROR)`` is ``"error"``. The hash stays the integer's: a dict keyed by
    Severity is looked up by Severity (sorting and ``max`` work as on numbers). JSON holds the
    lowercase name (:attr:`label`).
    """

    INFO = 10
    WARNING = 20
    ERROR = 30

    @property
    def label(self) -> str:
        return self.name.lower()

    def __str__(self) -> str:
        return self.label

    def __format__(self, spec: str) -> str:
        return format(self.label, spec)

    @staticmethod
    def _other(other: object) -> object:
        """A string as the Severity it names (unknown strings stay strings: never equal)."""
        if isinstance(other, str) and not isinstance(other, Severity):
            return Severity.__members__.get(other.strip().upper(), other)
        return other

    def __eq__(self, other: object) -> bool:
        other = self._other(other)
        return int.__eq__(self, other) if isinstance(other, int) else NotImplemented

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __lt__(self, other: object) -> bool:
        other = self._other(other)
        return int.__lt__(self, other) if isinstance(other, int) else NotImplemented

    def __le__(self, other: object) -> bool:
        other = self._other(other)
        return int.__le__(self, other) if isinstance(other, int) else NotImplemented

    def __gt__(self, other: object) -> bool:
        other = self._other(other)
        return int.__gt__(self, other) if isinstance(other, int) else NotImplemented

    def __ge__(self, other: object) -> bool:
        other = self._other(other)
        return int.__ge__(self, other) if isinstance(other, int) else NotImplemented

    __hash__ = int.__hash__

    @classmethod
    def parse(cls, value: str | Severity) -> Severity:
        """Accept ``"error"``, ``"ERROR"`` or a Severity."""
        if isinstance(value, Severity):
            return value
        try:
            return cls[str(value).strip().upper()]
        except KeyError:
            choices = ", ".join(s.label for s in cls)
            raise UsageError(f"unknown severity {value!r} (choose from {choices})") from None


def _frozen_metrics(metrics: Mapping[str, float] | None) -> Mapping[str, float]:
    return MappingProxyType(dict(metrics or {}))


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem found in the data.

    ``n_affected`` is the uncapped count; ``examples`` holds the first few row positions (0-based,
    in file order), capped; the message says "+N more" when there are more.
    """

    code: str
    name: str
    severity: Severity
    message: str
    split: str | None = None
    columns: tuple[str, ...] = ()
    n_affected: int | None = None
    examples: tuple[int, ...] = ()
    metrics: Mapping[str, float] = field(default_factory=dict)
    hint: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", tuple(self.columns))
        object.__setattr__(self, "examples", tuple(int(i) for i in self.examples))
        object.__setattr__(self, "metrics", _frozen_metrics(self.metrics))

    def to_dict(self) -> dict:
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.label,
            "message": self.message,
            "split": self.split,
            "columns": list(self.columns),
            "n_affected": self.n_affected,
            "examples": list(self.examples),
            "metrics": dict(self.metrics),
            "hint": self.hint,
        }


class Status(str, enum.Enum):
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    CRASHED = "crashed"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened when one rule ran: passed, failed (it found something), skipped, crashed."""

    code: str
    name: str
    status: Status
    reason: str | None = None  # why it was skipped, or the exception line when it crashed
    traceback: str | None = None
    n_findings: int = 0

    def to_dict(self) -> dict:
        return {
            "code": self.code,
            "name": self.name,
            "status": self.status.value,
            "reason": self.reason,
            "traceback": self.traceback,
            "n_findings": self.n_findings,
        }


def column_set(f: Mapping) -> tuple[str, ...]:
    """A finding's columns (of its JSON form) as a set, sorted: some rules list theirs in an
    order the data decides (S010 by effect size, S011 by coefficient, F003 by scale), and the
    same columns in another order are the same problem (``datavet diff``, fingerprints)."""
    return tuple(sorted(str(c) for c in f.get("columns") or ()))
