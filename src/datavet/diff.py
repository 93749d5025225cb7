"""``datavet diff OLD.json NEW.json``: which findings appeared and which went away between two
audits of a dataset that is refreshed (daily, per release). The command is :mod:`datavet.cli.diff`.

A finding is the same finding in both reports when its rule, split and columns (as a set: in
any order) are the same; its message and counts may change (``Column 'x' has 3 NaN values``
becoming 30) and it is then listed as changed. Exit codes, for a gate on a refreshed dataset:

- 0: nothing new at or above fail-on (old problems that persist do not fail the diff);
- 1: a finding at or above fail-on appeared, or an existing one rose to it;
- 2: the diff could not be made (a file unreadable or not a datavet JSON report), or the new
  audit itself did not finish (a rule crashed, so its findings are incomplete).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datavet._io import MIB, TooLarge, read_bounded, too_deep
from datavet._version import __version__
from datavet.errors import InputError
from datavet.findings import Severity, column_set

DIFF_SCHEMA_VERSION = 1
MAX_REPORT_BYTES = 256 * MIB  # a report of a million findings is a few hundred MB at most
MAX_DEPTH = 32  # a datavet report nests 6 levels deep


def load_report(path: str | Path) -> dict:
    """A datavet JSON report (``--format json``) from ``path``; InputError if it is not one."""
    shown = str(path)
    if not shown:
        raise InputError("''", "the path is empty: name a datavet JSON report")
    try:
        text = read_bounded(path, MAX_REPORT_BYTES).decode("utf-8-sig")  # a BOM, as configs
    except FileNotFoundError:
        raise InputError(shown, "file not found") from None
    except TooLarge as exc:
        raise InputError(shown, f"{exc}: not a datavet JSON report") from None
    except IsADirectoryError:
        raise InputError(shown, "is a directory, not a datavet JSON report") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(shown, f"cannot read ({exc})") from None

    def constant(name: str) -> None:  # a report is strict JSON: never NaN or Infinity
        raise InputError(shown, f"holds {name}, which a datavet JSON report never does")

    try:
        data, deep = json.loads(text, parse_constant=constant), False
    except json.JSONDecodeError as exc:
        raise InputError(shown, f"not JSON ({exc})") from None
    except RecursionError:  # nested deeper than Python's stack
        data, deep = None, True
    if deep or too_deep(data, MAX_DEPTH):
        raise InputError(shown, f"nests deeper than {MAX_DEPTH} levels: not a datavet JSON report")
    return check_report(data, shown)


# Fields the renderers and the diff print or compare as they are (datavet writes them from its
# own vocabulary; a report read back is input, so they are checked: a code cannot carry a line
# break or a command).
_FIELDS: dict[str, type] = {
    "datasets": dict,
    "findings": list,
    "outcomes": list,
    "counts": dict,
    "exit_code": int,
    "fail_on": str,
    "notes": list,
}
_WORD = re.compile(r"[A-Za-z0-9_.+-]{1,64}")
_SPACED = re.compile(r"[A-Za-z0-9_.+ -]{1,64}")
_STATUSES = ("passed", "failed", "skipped", "crashed")
_LEVELS = ("info", "warning", "error")


def _word(value: Any) -> bool:
    return isinstance(value, str) and _WORD.fullmatch(value) is not None


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _finding(f: Any) -> bool:
    """Whether ``f`` is a finding as datavet writes it: what the diff keys on, compares and
    prints (code, name, split, columns, severity, message) of the expected types."""
    if not isinstance(f, dict):
        return False
    split, columns, examples = f.get("split"), f.get("columns"), f.get("examples")
    return (
        _word(f.get("code"))
        and _word(f.get("name"))
        and (split is None or _word(split))
        and (columns is None or (isinstance(columns, list) and all(map(_string, columns))))
        and (examples is None or (isinstance(examples, list) and all(map(_whole, examples))))
        and f.get("severity") in _LEVELS
        and isinstance(f.get("message"), str)
        and (f.get("hint") is None or isinstance(f.get("hint"), str))
    )


def _string(value: Any) -> bool:
    return isinstance(value, str)


def _optional_string(value: Any) -> bool:
    return value is None or isinstance(value, str)


def check_report(data: Any, shown: str = "report") -> dict:
    """``data`` when it is a complete datavet report (``Report.to_dict()``, or a ``--format
    json`` report read back), with every field ``datavet diff`` and ``datavet render`` use of
    the type they expect; InputError naming ``shown`` when it is not."""
    if not isinstance(data, dict) or data.get("tool") != "datavet" or "findings" not in data:
        raise InputError(shown, "not a datavet JSON report (write one with --format json)")
    if data.get("schema_version") != 1:
        raise InputError(
            shown, f"report schema_version {data.get('schema_version')!r} is not supported (1)"
        )
    findings = data["findings"]
    if not isinstance(findings, list) or not all(
        isinstance(f, dict) and {"code", "severity", "message"} <= set(f) for f in findings
    ):
        raise InputError(shown, "malformed findings list")
    for f in findings:
        if f["severity"] not in _LEVELS:
            raise InputError(shown, f"unknown severity {f['severity']!r} in a finding")

    def bad(what: str) -> InputError:
        return InputError(shown, f"not a complete datavet JSON report ({what})")

    for name, kind in _FIELDS.items():
        if not isinstance(data.get(name), kind) or isinstance(data.get(name), bool):
            raise bad(f"no valid {name!r}")
    if data["fail_on"] not in _LEVELS:
        raise bad(f"fail_on {data['fail_on']!r}")
    if data["exit_code"] not in (0, 1, 2):
        raise bad(f"exit_code {data['exit_code']!r}")
    for name, value in data["counts"].items():
        if name not in _LEVELS or not _whole(value):
            raise bad("counts")
    task = data.get("task")
    if task is not None and not _word(task):
        raise bad("task")
    for split, d in data["datasets"].items():
        if not _word(split) or not isinstance(d, dict):
            raise bad("datasets")
        fmt = d.get("format")
        if not (isinstance(fmt, str) and _SPACED.fullmatch(fmt)):
            raise bad(f"datasets.{split}.format")
        if not _whole(d.get("rows")):
            raise bad(f"datasets.{split}.rows")
    ignored = data.get("ignored")
    if ignored is not None and not isinstance(ignored, list):
        raise bad("no valid 'ignored'")
    for item in ignored or ():
        if not isinstance(item, dict) or not isinstance(item.get("finding"), dict):
            raise bad("ignored")
    for f in [*findings, *(item["finding"] for item in ignored or ())]:
        if not _finding(f):
            raise bad("a finding's code, name, split, columns, severity or message")
    for o in data["outcomes"]:
        if not (
            isinstance(o, dict)
            and _word(o.get("code"))
            and _word(o.get("name"))
            and o.get("status") in _STATUSES
            and _optional_string(o.get("reason"))
            and _optional_string(o.get("traceback"))
        ):
            raise bad("an outcome's code, name, status, reason or traceback")
    baselines = data.get("baselines")
    if baselines is not None and not (isinstance(baselines, dict) and "skipped" in baselines):
        raise bad("baselines")
    _check_verdict(data, bad)
    return data


def _check_verdict(data: dict, bad) -> None:
    """The verdict a report states (counts, exit_code, passed) is the one its findings, fail_on
    and outcomes give, as :meth:`datavet.Report.exit_code` gives it: a renderer prints it and
    ``datavet diff`` gates on it, so an edited or corrupt report cannot show a green verdict
    above its errors."""
    counted = dict.fromkeys(_LEVELS, 0)
    for f in data["findings"]:
        counted[f["severity"]] += 1
    if any(data["counts"].get(level, 0) != n for level, n in counted.items()):
        raise bad(f"counts {data['counts']} are not its findings' {counted}")
    level = _LEVELS.index(data["fail_on"])
    if any(o["status"] == "crashed" for o in data["outcomes"]):
        expected = 2
    else:
        expected = int(any(_LEVELS.index(f["severity"]) >= level for f in data["findings"]))
    if data["exit_code"] != expected:
        raise bad(f"exit_code {data['exit_code']}, but its findings and outcomes give {expected}")
    if "passed" in data and data["passed"] is not (expected == 0):
        raise bad(f"passed {data['passed']!r}, but exit_code is {expected}")


def key(f: Mapping) -> tuple:
    """What makes two findings the same problem: rule, split, the set of columns (not counts,
    nor the order the rule lists the columns in)."""
    return (f["code"], f.get("split"), column_set(f))


def _level(f: Mapping) -> Severity:
    return Severity.parse(f["severity"])


@dataclass
class Diff:
    old: dict
    new: dict
    appeared: list[dict] = field(default_factory=list)
    resolved: list[dict] = field(default_factory=list)
    changed: list[tuple[dict, dict]] = field(default_factory=list)  # (old, new), same key
    unchanged: int = 0

    def failing(self, fail_on: Severity | str) -> list[dict]:
        """New findings at or above ``fail_on``, and old ones that rose to it."""
        level = Severity.parse(fail_on)
        out = [f for f in self.appeared if _level(f) >= level]
        out += [n for o, n in self.changed if _level(n) >= level > _level(o)]
        return out

    def exit_code(self, fail_on: Severity | str) -> int:
        crashed = any(o.get("status") == "crashed" for o in self.new.get("outcomes") or ())
        if crashed or self.new.get("exit_code") == 2:
            return 2
        return 1 if self.failing(fail_on) else 0

    def to_dict(self, fail_on: Severity | str) -> dict:
        level = Severity.parse(fail_on)

        def side(d: dict) -> dict:
            return {
                "version": d.get("version"),
                "exit_code": d.get("exit_code"),
                "counts": d.get("counts"),
                "datasets": {s: v.get("source") for s, v in (d.get("datasets") or {}).items()},
            }

        return {
            "schema_version": DIFF_SCHEMA_VERSION,
            "tool": "datavet",
            "kind": "diff",
            "version": __version__,
            "fail_on": level.label,
            "exit_code": self.exit_code(level),
            "old": side(self.old),
            "new": side(self.new),
            "appeared": self.appeared,
            "resolved": self.resolved,
            "changed": [{"old": o, "new": n} for o, n in self.changed],
            "unchanged": self.unchanged,
            "failing": self.failing(level),
        }


def diff(old, new) -> Diff:
    """Compare two reports (Report objects, or dicts as ``--format json`` writes them)."""
    old = check_report(old if isinstance(old, Mapping) else old.to_dict(), "old report")
    new = check_report(new if isinstance(new, Mapping) else new.to_dict(), "new report")
    remaining: dict[tuple, list[dict]] = {}
    for f in old["findings"]:
        remaining.setdefault(key(f), []).append(f)
    out = Diff(old=old, new=new)
    for f in new["findings"]:
        same = remaining.get(key(f))
        if not same:
            out.appeared.append(f)
            continue
        before = same.pop(0)
        if _level(before) != _level(f) or before.get("n_affected") != f.get("n_affected"):
            out.changed.append((before, f))
        else:
            out.unchanged += 1
    out.resolved = [f for group in remaining.values() for f in group]
    return out


def _line(f: Mapping) -> str:
    from datavet.output import _one_line

    where = f.get("split") or "-"
    return f"{f['code']} {f.get('name', '')} {where}: {_one_line(f['message'])}"


def render_text(d: Diff, fail_on: Severity | str) -> str:
    from datavet.output import _one_line

    level = Severity.parse(fail_on)
    lines = []
    for label, rep in (("old", d.old), ("new", d.new)):
        sources = ", ".join(
            f"{s}: {_one_line(v.get('source'))}" for s, v in (rep.get("datasets") or {}).items()
        )
        lines.append(f"{label}: {sources or '-'} (exit {rep.get('exit_code')})")
    lines.append("")
    failing = {id(f) for f in d.failing(level)}
    for title, items in (("appeared", d.appeared), ("resolved", d.resolved)):
        lines.append(f"{title} ({len(items)}):")
        for f in items:
            mark = "!" if id(f) in failing else " "
            lines.append(f" {mark} {f['severity']:<8} {_line(f)}")
    lines.append(f"changed ({len(d.changed)}):")
    for o, n in d.changed:
        mark = "!" if id(n) in failing else " "
        counts = f"{o.get('n_affected')} -> {n.get('n_affected')}"
        sev = (
            o["severity"] if o["severity"] == n["severity"] else f"{o['severity']}->{n['severity']}"
        )
        lines.append(f" {mark} {sev:<8} {_line(n)} (affected {counts})")
    lines.append(f"unchanged: {d.unchanged}")
    lines.append("")
    code = d.exit_code(level)
    if code == 2:
        verdict = "the new audit did not finish (a rule crashed): exit 2"
    elif code == 1:
        count = len(d.failing(level))
        verdict = f"{count} new or worse finding(s) at or above '{level.label}' (marked !): exit 1"
    else:
        verdict = f"nothing new at or above '{level.label}': exit 0"
    lines.append(verdict)
    return "\n".join(lines) + "\n"
