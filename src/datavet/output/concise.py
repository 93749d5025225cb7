"""Concise: one line per finding, ``path: CODE name [split] message``, then a summary line.

For grep, editors and logs. ``path`` is the data file of the finding's split (the train file
when the finding names no split). Data (paths, column names, values) is printed inert: control
characters and line breaks as visible escapes, and no line can start with ``::`` (a GitHub
Actions workflow command).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from datavet.output.text import clean

_ORDER = ("error", "warning", "info")


def _data(report) -> dict:
    return report if isinstance(report, Mapping) else report.to_dict()


def _one_line(value: Any) -> str:
    return clean(str(value).replace("\r", "\\r").replace("\n", "\\n"))


def _path(data: dict, split: str | None) -> str:
    datasets = data.get("datasets") or {}
    for key in (split, "train"):
        d = datasets.get(key) if key else None
        if isinstance(d, Mapping) and d.get("source"):
            return str(d["source"])
    return "<data>"


def _safe_start(line: str) -> str:
    """A line whose first characters come from the data cannot start with ``:``."""
    return "./" + line if line.lstrip().startswith(":") else line


def render(report, *, name: str | None = None, **_options) -> str:
    return render_many([(name, report, None)])


def render_many(items: Sequence[tuple[str | None, Any, Any]]) -> str:
    lines: list[str] = []
    for name, report, _locations in items:
        data = _data(report)
        label = f"[{_one_line(name)}] " if name else ""
        for f in data.get("findings", []):
            split = f" [{_one_line(f['split'])}]" if f.get("split") else ""
            lines.append(
                _safe_start(
                    f"{_one_line(_path(data, f.get('split')))}: {label}{f['code']} "
                    f"{f['name']}{split} {_one_line(f['message'])}"
                )
            )
        for o in data.get("outcomes", []):
            if o.get("status") == "crashed":
                lines.append(
                    _safe_start(
                        f"{_one_line(_path(data, None))}: {label}{o['code']} {o['name']} "
                        f"crashed: {_one_line(o.get('reason'))} (the audit is incomplete)"
                    )
                )
        lines.append(_summary(name, data))
    return "\n".join(lines) + "\n"


def _summary(name: str | None, data: dict) -> str:
    from datavet.output.github import _verdict

    counts = data.get("counts") or {}
    parts = ", ".join(f"{counts.get(level, 0)} {level}" for level in _ORDER)
    ignored = len(data.get("ignored") or [])
    extra = f", {ignored} ignored" if ignored else ""
    label = f" {_one_line(name).replace(':', '_')}" if name else ""
    return f"datavet{label}: {parts}{extra}; {_verdict(data)}"
