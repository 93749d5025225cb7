"""Report: findings, per-rule outcomes, dataset summaries and baselines, and the exit-code
contract. A plain value: rendering, JSON serialisation and writing live in :mod:`datavet.output`
(the methods ``to_dict``, ``to_json``, ``to_html`` and ``save_html`` delegate there)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from datavet.errors import AuditFailed
from datavet.findings import Finding, Outcome, Severity, Status

SCHEMA_VERSION = 1


def dumps(payload: Any, indent: int | None = 2) -> str:
    """Strict JSON text; kept importable here, the encoder is :func:`datavet.output.json.dumps`."""
    from datavet.output.json import dumps as _dumps

    return _dumps(payload, indent)


@dataclass(frozen=True)
class Ignored:
    """A finding left out by a per-column ignore, with the reason the config gives."""

    finding: Finding
    reason: str

    def to_dict(self) -> dict:
        return {"finding": self.finding.to_dict(), "reason": self.reason}


@dataclass
class Report:
    findings: list[Finding]
    outcomes: list[Outcome]
    datasets: dict[str, dict]
    fail_on: Severity = Severity.ERROR
    target: str | None = None
    task: str | None = None
    task_reason: str | None = None
    baselines: dict | None = None
    notes: list[str] = field(default_factory=list)
    duration_s: float | None = None
    ignored: list[Ignored] = field(default_factory=list)  # per-column ignores, with reasons
    probes: dict | None = None  # model probes / gradient monitor details (datavet.probes)
    curves: dict | None = None  # training-curve diagnosis: series, marks, causes (datavet.curves)
    # --exit-zero: the process exits 0 on findings; exit_code() stays the verdict (1), and the
    # text says which the process used
    exit_zero: bool = False

    def __post_init__(self) -> None:
        self.findings = sorted(self.findings, key=lambda f: (-f.severity, f.code, f.split or ""))

    @property
    def passed(self) -> bool:
        """True when the audit ran and nothing reached ``fail_on``."""
        return self.exit_code() == 0

    @property
    def crashed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status is Status.CRASHED]

    def crash_lines(self) -> list[str]:
        """One stderr line per crashed rule (the reason exit code 2 was given): which rule, why,
        and how to run without it. The report itself holds the traceback."""
        source = (self.datasets.get("train") or {}).get("source")
        where = f"{source}: " if source else ""
        lines = []
        for o in self.crashed:
            reason = (o.reason or "no reason given").strip().splitlines()[0][:300]
            lines.append(
                f"datavet: error: {where}rule {o.code} ({o.name}) crashed: {reason}; the "
                f"other rules ran; skip it with --ignore {o.code} (the report holds the traceback)"
            )
        return lines

    def counts(self) -> dict[str, int]:
        out = {s.label: 0 for s in sorted(Severity, reverse=True)}
        for f in self.findings:
            out[f.severity.label] += 1
        return out

    def failing(self, fail_on: Severity | str | None = None) -> list[Finding]:
        level = self.fail_on if fail_on is None else Severity.parse(fail_on)
        return [f for f in self.findings if f.severity >= level]

    def exit_code(self, fail_on: Severity | str | None = None) -> int:
        """0: nothing at or above ``fail_on``; 1: findings at or above it; 2: a rule crashed."""
        if self.crashed:
            return 2
        return 1 if self.failing(fail_on) else 0

    def raise_for_findings(self, fail_on: Severity | str | None = None) -> Report:
        """Raise :class:`datavet.AuditFailed` when findings reach ``fail_on`` (default: the
        report's own level) or a rule crashed; else return the report, unchanged either way."""
        level = self.fail_on if fail_on is None else Severity.parse(fail_on)
        if self.exit_code(level) != 0:
            raise AuditFailed(self, level)
        return self

    # Rendering and serialisation live in datavet.output; these are the documented Python API
    # (docs/python-api.md), kept as thin delegations.

    def to_dict(self) -> dict:
        """The report as JSON-safe plain data (:func:`datavet.output.json.payload`)."""
        from datavet.output.json import payload

        return payload(self)

    def to_json(self, *, indent: int | None = 2) -> str:
        """The report as strict JSON text (no NaN, no Infinity)."""
        from datavet.output.json import to_json

        return to_json(self, indent=indent)

    def to_html(self) -> str:
        """The self-contained HTML report (no external URL, no script)."""
        from datavet.output.html import render

        return render(self)

    def save_html(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_html` to ``path`` atomically (temporary file, then rename)."""
        from datavet.output import save

        save(self, path, "html")

    def __repr__(self) -> str:
        counts = ", ".join(f"{n} {k}" for k, n in self.counts().items())
        return f"<Report exit_code={self.exit_code()} findings: {counts}>"

    def _repr_html_(self) -> str:
        """The report in a Jupyter notebook (:func:`datavet.output.notebook.render`)."""
        from datavet.output.notebook import render

        return render(self)
