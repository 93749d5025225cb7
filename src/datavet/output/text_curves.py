"""Human text for a curve report (``--format text`` of ``datavet curves``, and of any report
that holds a curve diagnosis): the log, each finding with its likely causes in the order to
check them (and the datavet check for each), the verdict. Colour only on a terminal."""

from __future__ import annotations

from datavet.output.text import clean, footer, paint

_COLOURS = {"error": "31", "warning": "33", "info": "36"}
_INDENT = " " * 6


def render(report, *, colour: bool = False) -> str:
    return render_dict(report.to_dict(), colour=colour)


def render_dict(data: dict, *, colour: bool = False) -> str:
    c = data.get("curves") or {}
    cols = ", ".join(f"{k}={clean(str(v))}" for k, v in (c.get("columns") or {}).items())
    unit = c.get("step_from", "step")
    lines = [
        f"log: {clean(str(c.get('source')))} ({c.get('rows', 0):,} {unit}s, {c.get('format')}; "
        f"columns {cols})"
    ]
    level = c.get("no_learning_level")
    if level:
        lines.append(f"no-learning level: {level['value']:.4g} ({level['why']})")
    for note in data["notes"]:
        lines.append(f"note: {clean(note)}")
    lines.append("")
    causes = c.get("causes") or {}
    for sev in ("error", "warning", "info"):
        group = [f for f in data["findings"] if f["severity"] == sev]
        if not group:
            continue
        lines.append(paint(f"{sev.upper()} ({len(group)})", _COLOURS[sev] + ";1", colour))
        for f in group:
            head = f"  {f['code']} {f['name']}"
            lines.append(paint(head, _COLOURS[sev], colour))
            lines.append(_INDENT + clean(f["message"]))
            if f["hint"]:
                lines.append(_INDENT + "fix: " + clean(f["hint"]))
            listed = causes.get(f["code"]) or []
            if listed:
                lines.append(_INDENT + "likely causes, easiest to check first:")
                for n, cause in enumerate(listed, 1):
                    lines.append(f"{_INDENT}  {n}. {cause['cause']}: {clean(cause['look_for'])}")
                    lines.append(f"{_INDENT}     check: {clean(cause['check'])}")
    crashed = [o for o in data["outcomes"] if o["status"] == "crashed"]
    for o in crashed:
        lines.append(
            paint(f"CRASHED {o['code']} {o['name']}: {clean(o['reason'])}", "31;1", colour)
        )
    lines += footer(data, colour, noun="curve rule")
    return "\n".join(lines) + "\n"
