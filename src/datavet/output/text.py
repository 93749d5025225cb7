"""Human text: findings grouped by severity, a one-line verdict; colour only on a terminal."""

from __future__ import annotations

import re

# Bidirectional controls (marks, embeddings, overrides, isolates): invisible, and they reorder
# the text around them, so a column name could make datavet's own words read backwards.
BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# The Unicode line and paragraph separators (NEL, U+0085, is a C1 control): a line break to
# editors, browsers' text and some terminals, so a value could start a line of its own.
SEPARATORS = "\u2028\u2029"
_CONTROL = re.compile(f"[\x00-\x1f\x7f-\x9f{BIDI}{SEPARATORS}]")
_COLOURS = {"error": "31", "warning": "33", "info": "36"}


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape_char(m: re.Match) -> str:
    """A character as a visible escape, spelled as ``repr`` spells it (``\\x1b``, ``\\u202e``)."""
    c = m.group()
    return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) <= 0xFF else f"\\u{ord(c):04x}")


def clean(text: str) -> str:
    """Data printed to a terminal or a log cannot carry escape sequences, control characters,
    line breaks (U+2028 and U+2029 too), tabs or bidirectional controls: each comes out as a
    visible escape (``\\x1b``, ``\\n``, ``\\u2028``, ``\\u202e``), so a value can neither
    restyle the terminal, start a line of its own (a CI workflow command, a forged finding) nor
    reverse the text around it."""
    return _CONTROL.sub(escape_char, text)


def paint(text: str, code: str, colour: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if colour else text


_paint = paint


def _dataset_line(split: str, d: dict) -> str:
    cols = len(d["columns"]) + (1 if "label" in d else 0)
    return f"{split}: {clean(str(d['source']))} ({d['rows']:,} rows, {cols} columns, {d['format']})"


_COLUMNS = {
    "classification": (
        ("accuracy", "accuracy"),
        ("balanced_accuracy", "balanced acc"),
        ("log_loss", "log loss"),
    ),
    "regression": (("r2", "R^2"), ("mse", "MSE"), ("mae", "MAE")),
}


def _number(value) -> str:
    return "-" if value is None else f"{value:.4g}"


def _baselines(b: dict | None) -> list[str]:
    if not b:
        return []
    if b["skipped"]:
        return ["", f"baselines: skipped ({clean(b['skipped'])})"]
    sample = f", a sample of {b['train_rows']:,} of {b['sample_of']:,} rows" if b["sampled"] else ""
    out = [
        "",
        f"baselines ({b['task']}; scored on {b['evaluated_on']}, {b['eval_rows']:,} rows{sample}):",
    ]
    cols = _COLUMNS[b["task"]]
    out.append("  " + f"{'model':<10}" + "".join(f"{title:>14}" for _, title in cols))
    for m in b["models"]:
        out.append(
            "  "
            + f"{m['model']:<10}"
            + "".join(f"{_number(m['metrics'].get(key)):>14}" for key, _ in cols)
        )
    if b.get("expectation"):
        out.append("  " + clean(b["expectation"]))
    for note in b["notes"]:
        out.append(f"  note: {clean(note)}")
    return out


def render(report, *, colour: bool = False) -> str:
    return render_dict(report.to_dict(), colour=colour)


def render_dict(data: dict, *, colour: bool = False) -> str:
    """The text of a report's :meth:`~datavet.Report.to_dict` payload."""
    lines = [_dataset_line(s, d) for s, d in data["datasets"].items()]
    if data["target"]:
        lines.append(
            f"target: '{clean(data['target'])}' -> {data['task']} ({clean(data['task_reason'])})"
        )
    else:
        lines.append("target: none (label rules skipped; pass --target)")
    for note in data["notes"]:
        lines.append(f"note: {clean(note)}")
    lines.append("")
    for sev in ("error", "warning", "info"):
        group = [f for f in data["findings"] if f["severity"] == sev]
        if not group:
            continue
        lines.append(_paint(f"{sev.upper()} ({len(group)})", _COLOURS[sev] + ";1", colour))
        for f in group:
            where = f["split"] or "-"
            head = f"  {f['code']} {f['name']:<22} {where:<5}  "
            lines.append(_paint(head, _COLOURS[sev], colour) + clean(f["message"]))
            if f["hint"]:
                lines.append(" " * len(head) + "fix: " + clean(f["hint"]))
    lines.extend(_baselines(data.get("baselines")))
    crashed = [o for o in data["outcomes"] if o["status"] == "crashed"]
    for o in crashed:
        lines.append(
            _paint(f"CRASHED {o['code']} {o['name']}: {clean(o['reason'])}", "31;1", colour)
        )
    ignored = data.get("ignored") or []
    if ignored:
        lines.append("")
        lines.append(f"ignored by per-column-ignores ({len(ignored)}):")
        for item in ignored:
            f = item["finding"]
            cols = clean(", ".join(repr(c) for c in f["columns"]))
            where = f"{f['code']} {f['name']} {f['split'] or '-'} {cols}"
            reason = clean(item["reason"].replace("\r", "\\r").replace("\n", "\\n"))
            lines.append(f"  {where}: {reason}")
    lines += footer(data, colour)
    return "\n".join(lines) + "\n"


def failed_exit(data: dict) -> str:
    """The exit code a failed verdict gave the process: 1, or 0 under ``--exit-zero``."""
    return "exit 0 with --exit-zero" if data.get("exit_zero") else "exit 1"


def footer(data: dict, colour: bool, noun: str = "rule") -> list[str]:
    """The closing lines every text report shares: the skipped rules, then the counts and the
    verdict with its exit code (``noun`` names what ran: "rule", "curve rule", "probe")."""
    lines: list[str] = []
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
            f"FAILED: findings at or above '{data['fail_on']}' ({failed_exit(data)})",
            "31;1",
            colour,
        )
    else:
        verdict = _paint(f"passed at fail-on '{data['fail_on']}' (exit 0)", "32;1", colour)
    found = f"{total} finding{'s' if total != 1 else ''}"
    rules = f"{ran} {noun}{'s' if ran != 1 else ''}"
    lines.append(f"{found} ({summary}) from {rules}. {verdict}")
    return lines
