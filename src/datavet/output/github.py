"""GitHub Actions: workflow-command annotations on stdout, and a Markdown job summary.

GitHub shows at most 10 error and 10 warning annotations (and 10 notices) per step and drops
the rest silently, so the most severe findings are shown and one notice says how many more there
are; the last line is a plain summary. Data (column names, values) is escaped as the Actions
toolkit escapes it (``%``, CR, LF in messages; also ``:`` and ``,`` in properties) and ``::`` is
broken up, so a column named ``x\\n::error::pwned`` cannot start a command of its own.
``::error`` does not fail a step: the exit code does.

:func:`summary` is the Markdown for ``$GITHUB_STEP_SUMMARY`` (capped under GitHub's 1 MiB).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from datavet.output.sarif import is_url, locate
from datavet.output.text import clean, failed_exit

MAX_PER_LEVEL = 10  # GitHub: 10 error + 10 warning (+ 10 notice) annotations per step
SUMMARY_LIMIT = 1_000_000  # bytes; GitHub refuses step summaries over 1 MiB
MESSAGE_LIMIT = 4000  # characters of an annotation's message (a value can be megabytes long)
PROPERTY_LIMIT = 500  # characters of a title or file name
_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}
_ORDER = ("error", "warning", "info")


def _data(report) -> dict:
    return report if isinstance(report, Mapping) else report.to_dict()


def escape_data(text: Any) -> str:
    """A message: toolkit ``escapeData`` (``%``, CR, LF), control characters shown as ``\\xNN``
    and ``::`` broken up to ``: :``, so nothing in it can be read as a command."""
    s = clean(str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))
    return _break_colons(s)


def escape_property(text: Any) -> str:
    """A property value (``file``, ``title``): toolkit ``escapeProperty``, ``:`` and ``,`` too."""
    s = str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return clean(s.replace(":", "%3A").replace(",", "%2C"))


def _break_colons(s: str) -> str:
    while "::" in s:
        s = s.replace("::", ": :")
    return s


def _cap(text: Any, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out (before escaping, so
    no escape sequence is cut in half)."""
    s = str(text)
    if len(s) <= limit:
        return s
    return s[:limit] + f"... ({len(s) - limit:,} more characters; the report has them all)"


def _annotation(kind: str, message: str, **props: Any) -> str:
    shown = ",".join(
        f"{k}={escape_property(_cap(v, PROPERTY_LIMIT))}" for k, v in props.items() if v is not None
    )
    return f"::{kind}{' ' + shown if shown else ''}::{escape_data(_cap(message, MESSAGE_LIMIT))}"


def render(report, *, name: str | None = None, locations=None, **_options) -> str:
    """Annotations and a summary line for one report."""
    return render_many([(name, report, locations)])


def render_many(items: Sequence[tuple[str | None, Any, Any]]) -> str:
    """Annotations for every (dataset name, report, locations), capped per level across all."""
    candidates: dict[str, list[str]] = {level: [] for level in _ORDER}
    crashes: list[str] = []
    totals = {level: 0 for level in _ORDER}
    summaries = []
    for name, report, locations in items:
        data = _data(report)
        label = f"[{name}] " if name else ""
        for o in data.get("outcomes", []):
            if o["status"] == "crashed":
                loc = locate(data, locations, None)
                crashes.append(
                    _annotation(
                        "error",
                        f"rule {o['code']} {o['name']} crashed: {o.get('reason')} "
                        "(the audit is incomplete; exit 2)",
                        title=f"datavet {label}{o['code']} crashed",
                        **_where(loc),
                    )
                )
        for f in data.get("findings", []):
            totals[f["severity"]] += 1
            loc = locate(data, locations, f.get("split"))
            where = f" ({f['split']})" if f.get("split") else ""
            message = f["message"] + (f" Fix: {f['hint']}" if f.get("hint") else "")
            candidates[f["severity"]].append(
                _annotation(
                    _COMMAND[f["severity"]],
                    message,
                    title=f"datavet {label}{f['code']} {f['name']}{where}",
                    **_where(loc),
                )
            )
        summaries.append(_summary_line(name, data))
    lines = list(crashes)
    hidden = 0
    error_room = max(MAX_PER_LEVEL - len(crashes), 0)
    rooms = {"error": error_room, "warning": MAX_PER_LEVEL, "info": MAX_PER_LEVEL}
    overflow = any(len(candidates[level]) > rooms[level] for level in _ORDER)
    if overflow:
        rooms["info"] -= 1  # the "N more" notice is a notice too
    for level in _ORDER:
        shown = candidates[level][: rooms[level]]
        hidden += len(candidates[level]) - len(shown)
        lines.extend(shown)
    if hidden:
        lines.append(
            _annotation(
                "notice",
                f"{hidden} more finding{'s' if hidden != 1 else ''} not shown as annotations "
                f"(GitHub shows {MAX_PER_LEVEL} per level and step); the job summary and the "
                "report list every finding.",
                title="datavet",
            )
        )
    lines.extend(summaries)
    return "\n".join(lines) + "\n"


def _where(loc) -> dict[str, Any]:
    """``file`` and ``line`` properties: a path in the workspace, as GitHub matches annotations
    to files; none for data outside it (a ``file://`` or remote URL names no file of the
    repository, and the annotation still shows, on the run)."""
    if loc is None or is_url(str(loc[0])):
        return {}
    out: dict[str, Any] = {"file": loc[0], "line": loc[1]}
    if len(loc) > 2 and loc[2]:
        out.update(endLine=loc[1], col=1, endColumn=loc[2])
    return out


def _verdict(data: dict) -> str:
    code = data.get("exit_code")
    if code == 2:
        return "could not finish: a rule crashed (exit 2)"
    if code == 1:
        return f"FAILED at fail-on '{data.get('fail_on')}' ({failed_exit(data)})"
    return f"passed at fail-on '{data.get('fail_on')}' (exit 0)"


def _summary_line(name: str | None, data: dict) -> str:
    counts = data.get("counts", {})
    parts = ", ".join(f"{counts.get(level, 0)} {level}" for level in _ORDER)
    ignored = len(data.get("ignored", []))
    extra = f", {ignored} ignored" if ignored else ""
    label = f" {escape_data(_cap(name, PROPERTY_LIMIT))}" if name else ""
    return f"datavet{label}: {parts}{extra}; {_verdict(data)}"


# --------------------------------------------------------------------------------------------
# job summary (Markdown)

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#~])")


def md(text: Any) -> str:
    """A Markdown table cell that shows data as text: HTML and Markdown syntax escaped,
    @mentions defused, and line breaks, tabs and other control characters shown as escapes
    (``\\n``, ``\\t``, ``\\xNN``), as the text report shows them: a column ``a\\nb`` is not
    shown as the column ``a b``."""
    s = clean(str(text))
    s = _MD_SPECIAL.sub(r"\\\1", s)
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("@", "&#64;")


def summary(report, *, name: str | None = None) -> str:
    """Markdown for ``$GITHUB_STEP_SUMMARY`` for one report."""
    return summary_many([(name, report, None)])


def summary_many(items: Sequence[tuple[str | None, Any, Any]], limit: int = SUMMARY_LIMIT) -> str:
    """Markdown for every report, under ``limit`` bytes. Room for every report's heading,
    verdict and counts is set aside first, so each keeps them; rows (each cell capped as an
    annotation's message is) follow while they fit, and those that do not are counted in a
    note under their report."""
    sections = [_blocks(name, _data(report)) for name, report, _locations in items]
    budget = limit - sum(_size(head) + _CUT_ROOM for head, _body in sections)
    parts: list[str] = []
    for head, body in sections:
        parts += head
        for i, line in enumerate(body):
            if _size([line]) > budget:
                left = sum(1 for rest in body[i:] if rest)  # blank lines are not content
                if left:
                    parts.append(
                        f"\n_Summary cut here: {left} more line{'s' if left != 1 else ''} of "
                        "this report left out to stay under GitHub's 1 MiB step summary limit; "
                        "the report (--format json / --html) has every finding._\n"
                    )
                budget = 0  # the reports after it keep their heading and verdict, in order
                break
            parts.append(line)
            budget -= _size([line])
    return "\n".join(parts) + "\n"


_CUT_ROOM = 300  # bytes kept for each report's "cut here" note


def _size(lines: list[str]) -> int:
    return sum(len(line.encode("utf-8")) + 1 for line in lines)


def _cell(text: Any) -> str:
    """A table cell: data capped as an annotation's message is, then escaped."""
    return md(_cap(text, MESSAGE_LIMIT))


def _blocks(name: str | None, data: dict) -> tuple[list[str], list[str]]:
    """The Markdown of one report: its head (heading and verdict, sources, counts), which is
    never cut, and its body (the tables and rule outcomes)."""
    title = f"datavet: {_cell(name)}" if name else "datavet audit"
    head = [f"### {title}: {md(_verdict(data))}", ""]
    for split, d in data.get("datasets", {}).items():
        head.append(f"- **{split}**: {_cell(d.get('source'))} ({d.get('rows', 0):,} rows)")
    if data.get("target"):
        head.append(f"- **target**: {_cell(data['target'])} ({md(data.get('task'))})")
    counts = data.get("counts", {})
    head.append(
        "- **findings**: "
        + ", ".join(f"{counts.get(level, 0)} {level}" for level in _ORDER)
        + f"; fail-on {md(data.get('fail_on'))}"
    )
    head.append("")
    out: list[str] = []
    findings = data.get("findings", [])
    if findings:
        out += ["| severity | rule | split | columns | finding |", "|---|---|---|---|---|"]
        for f in findings:
            out.append(
                f"| {f['severity']} | {f['code']} {md(f['name'])} | {md(f.get('split') or '-')} "
                f"| {_cell(', '.join(map(str, f.get('columns') or [])))} | {_cell(f['message'])} |"
            )
        out.append("")
    ignored = data.get("ignored", [])
    if ignored:
        out += [
            f"**Ignored by per-column-ignores ({len(ignored)})**",
            "",
            "| rule | split | columns | reason |",
            "|---|---|---|---|",
        ]
        for item in ignored:
            f = item["finding"]
            out.append(
                f"| {f['code']} {md(f['name'])} | {md(f.get('split') or '-')} "
                f"| {_cell(', '.join(map(str, f.get('columns') or [])))} "
                f"| {_cell(item['reason'])} |"
            )
        out.append("")
    crashed = [o for o in data.get("outcomes", []) if o["status"] == "crashed"]
    for o in crashed:
        out.append(f"- **crashed** {o['code']} {md(o['name'])}: {_cell(o.get('reason'))}")
    skipped = [o for o in data.get("outcomes", []) if o["status"] == "skipped"]
    if skipped:
        out.append(
            "- **skipped**: "
            + "; ".join(f"{o['code']} ({_cell(o.get('reason'))})" for o in skipped)
        )
    out.append("")
    return head, out
