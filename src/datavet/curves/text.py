"""Human text for a curve report: the log, each finding with its likely causes in the order to
check them (and the datavet check for each), the verdict. Colour only on a terminal."""

from __future__ import annotations

from datavet.output.text import clean

_COLOURS = {"error": "31", "warning": "33", "info": "36"}
_INDENT = " " * 6


def _paint(text: str, code: str, colour: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if colour else text


def render(report, *, colour: bool = False) -> str:
    data = report.to_dict()
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
        lines.append(_paint(f"{sev.upper()} ({len(group)})", _COLOURS[sev] + ";1", colour))
        for f in group:
            head = f"  {f['code']} {f['name']}"
            lines.append(_paint(head, _COLOURS[sev], colour))
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
            _paint(f"CRASHED {o['code']} {o['name']}: {clean(o['reason'])}", "31;1", colour)
        )
    skipped = [o for o in data["outcomes"] if o["status"] == "skipped"]
    if skipped:
        lines.append("")
        lines.append(
            "skipped: " + "; ".join(f"{o['code']} ({clean(o['reason'])})" for o in skipped)
        )
    lines.append("")
    counts = data["counts"]
    total = sum(counts.values())
    ran = sum(1 for o in data["outcomes"] if o["status"] in ("passed", "failed"))
    summary = ", ".join(
        f"{n} {k}{'s' if n != 1 and k != 'info' else ''}" for k, n in counts.items()
    )
    if data["exit_code"] == 2:
        verdict = _paint("could not finish: a rule crashed (exit 2)", "31;1", colour)
    elif data["exit_code"] == 1:
        verdict = _paint(
            f"FAILED: findings at or above '{data['fail_on']}' (exit 1)", "31;1", colour
        )
    else:
        verdict = _paint(f"passed at fail-on '{data['fail_on']}' (exit 0)", "32;1", colour)
    found = f"{total} finding{'s' if total != 1 else ''}"
    rules = f"{ran} curve rule{'s' if ran != 1 else ''}"
    lines.append(f"{found} ({summary}) from {rules}. {verdict}")
    return "\n".join(lines) + "\n"
