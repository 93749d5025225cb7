"""Report: findings, per-rule outcomes, dataset summaries and baselines; the one source for
every renderer, and the exit-code contract."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from datavet.errors import AuditFailed
from datavet.findings import Finding, Outcome, Severity, Status

SCHEMA_VERSION = 1
_C1 = re.compile("[\x7f-\x9f]")


def dumps(payload: Any, indent: int | None = 2) -> str:
    """Strict JSON (no NaN/Infinity), UTF-8 text, with DEL and C1 controls escaped as \\u00XX.

    ``ensure_ascii=False`` escapes only U+0000-U+001F; U+009B is a one-character terminal
    escape (CSI), so a column name could otherwise drive the terminal of whoever cats the file.
    """
    if indent is None:
        text = json.dumps(payload, allow_nan=False, ensure_ascii=False)
    else:
        text = "".join(_indented(payload, " " * indent, 0))
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_SCALARS = (str, int, float, bool, type(None))


def _key(k: Any) -> str:
    """A dict key as the standard encoder writes it (``1`` as ``"1"``, ``True`` as
    ``"true"``); what it refuses raises its TypeError."""
    if isinstance(k, str):
        return k
    return next(iter(json.loads(json.dumps({k: None}, allow_nan=False))))


def _indented(value: Any, step: str, level: int):
    """The text of ``json.dumps(value, indent=len(step), allow_nan=False, ensure_ascii=False)``,
    piece by piece. The standard library encodes indented JSON in pure Python, a call per value
    (a report of a 200,000-column table holds millions); here a dict of plain values (a column's
    summary) is one call of its C encoder, its item separator carrying the indentation."""
    if isinstance(value, dict) and value and not all(type(k) is str for k in value):
        value = {_key(k): v for k, v in value.items()}
    if isinstance(value, dict) and value:
        inner = "\n" + step * (level + 1)
        if all(isinstance(v, _SCALARS) for v in value.values()):
            flat = json.JSONEncoder(
                ensure_ascii=False, allow_nan=False, separators=("," + inner, ": ")
            ).encode(value)
            yield "{" + inner + flat[1:-1] + "\n" + step * level + "}"
            return
        yield "{"
        first = True
        for k, v in value.items():
            yield (inner if first else "," + inner) + json.dumps(k, ensure_ascii=False) + ": "
            first = False
            yield from _indented(v, step, level + 1)
        yield "\n" + step * level + "}"
    elif isinstance(value, (list, tuple)) and value:
        inner = "\n" + step * (level + 1)
        yield "["
        for i, v in enumerate(value):
            yield inner if i == 0 else "," + inner
            yield from _indented(v, step, level + 1)
        yield "\n" + step * level + "]"
    elif isinstance(value, _SCALARS) or isinstance(value, (dict, list, tuple)):
        yield json.dumps(value, allow_nan=False, ensure_ascii=False)
    else:  # what the standard encoder would refuse or convert: let it
        yield json.dumps(value, indent=len(step), allow_nan=False, ensure_ascii=False)


def _clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities become null, tuples lists, numpy scalars Python numbers."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        return _clean(value.item())
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    return str(value)


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

    def to_dict(self) -> dict:
        from datavet import __version__

        return _clean(
            {
                "schema_version": SCHEMA_VERSION,
                "tool": "datavet",
                "version": __version__,
                "passed": self.passed,
                "exit_code": self.exit_code(),
                "fail_on": self.fail_on.label,
                "counts": self.counts(),
                "target": self.target,
                "task": self.task,
                "task_reason": self.task_reason,
                "findings": [f.to_dict() for f in self.findings],
                "outcomes": [o.to_dict() for o in self.outcomes],
                "datasets": self.datasets,
                "baselines": self.baselines,
                "notes": self.notes,
                "duration_s": self.duration_s,
                "ignored": [i.to_dict() for i in self.ignored],
                **({"probes": self.probes} if self.probes is not None else {}),
                **({"curves": self.curves} if self.curves is not None else {}),
            }
        )

    def to_json(self, *, indent: int | None = 2) -> str:
        return dumps(self.to_dict(), indent=indent)

    def to_html(self) -> str:
        """The self-contained HTML report (no external URL, no script)."""
        from datavet.output.html import render

        return render(self)

    def save_html(self, path) -> None:
        """Write :meth:`to_html` to ``path`` atomically (temporary file, then rename)."""
        from datavet._io import write_atomic

        write_atomic(path, self.to_html())

    def __repr__(self) -> str:
        counts = ", ".join(f"{n} {k}" for k, n in self.counts().items())
        return f"<Report exit_code={self.exit_code()} findings: {counts}>"

    def _repr_html_(self) -> str:
        """The report in a Jupyter notebook: the full HTML report (verdict, findings, charts)
        inside an ``<iframe srcdoc>``, so its styles never reach the notebook's page and the
        notebook's never reach it. The frame is sandboxed: nothing in it may run a script (the
        report has none). Its title carries the verdict for screen readers."""
        import html

        counts = ", ".join(f"{n} {k}" for k, n in self.counts().items())
        verdict = "passed" if self.passed else f"failed (exit code {self.exit_code()})"
        title = html.escape(f"datavet report: {verdict}; findings: {counts}", quote=True)
        return (
            '<div class="datavet-report">'
            f'<iframe srcdoc="{html.escape(self.to_html(), quote=True)}" title="{title}" '
            'sandbox="allow-same-origin allow-popups allow-popups-to-escape-sandbox" '
            'style="width: 100%; height: 720px; border: 1px solid #d0d5dd; border-radius: 6px">'
            "</iframe></div>"
        )
