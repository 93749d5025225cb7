"""``datavet diff OLD.json NEW.json``: which findings appeared and which went away between two
audits of a dataset that is refreshed (daily, per release). The command is :mod:`datavet.cli.diff`.

A finding is the same finding in both reports when its rule, split and columns (as a set: in
any order) are the same; its message and counts may change (``Column 'x' has 3 NaN values``
becoming 30) and it is then listed as changed. Exit codes, for a gate on a refreshed dataset:

- 0: nothing new at or above fail-on (old problems that persist do not fail the diff);
- 1: a finding at or above fail-on appeared, or an existing one rose to it;
- 2: the diff could not be made (a file unreadable or not a datavet JSON report, the two reports
  of different kinds: an audit, a training-log diagnosis, a model probe), or the new audit itself
  did not finish (a rule crashed, so its findings are incomplete).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datavet._io import MIB, TooLarge, read_bounded, too_deep
from datavet._version import __version__
from datavet.errors import InputError, UsageError
from datavet.findings import Severity, column_set

DIFF_SCHEMA_VERSION = 1
MAX_REPORT_BYTES = 256 * MIB  # a report of a million findings is a few hundred MB at most
MAX_DEPTH = 32  # a datavet report nests 6 levels deep


def not_a_directory(path: str | Path) -> None:
    """InputError when ``path`` is a directory. Checked before the output paths, whose checks
    would otherwise blame ``-o reports/x.sarif`` for lying inside the folder given as a report."""
    if os.path.isdir(path):
        raise InputError(str(path), "is a directory, not a datavet JSON report")


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


def _count(value: Any) -> bool:
    return _whole(value) and value >= 0


def _string(value: Any) -> bool:
    return isinstance(value, str)


def _optional_string(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _number(value: Any) -> bool:
    return value is None or (
        isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    )


# Each field of a finding and of an outcome that a renderer or the diff reads, with the check and
# what report.schema.json says it holds (the schema itself needs jsonschema, a dev dependency).
_FINDING: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    ("code", _word, "a rule code"),
    ("name", _word, "a rule name"),
    ("severity", lambda v: v in _LEVELS, "info, warning or error"),
    ("message", _string, "a string"),
    ("split", lambda v: v is None or _word(v), "a split name or null"),
    ("columns", lambda v: isinstance(v, list) and all(map(_string, v)), "a list of strings"),
    ("n_affected", lambda v: v is None or _count(v), "a whole number >= 0 or null"),
    ("examples", lambda v: isinstance(v, list) and all(map(_count, v)), "a list of row numbers"),
    (
        "metrics",
        lambda v: isinstance(v, dict) and all(map(_number, v.values())),
        "an object of numbers",
    ),
    ("hint", _optional_string, "a string or null"),
)
_OUTCOME: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    ("code", _word, "a rule code"),
    ("name", _word, "a rule name"),
    ("status", lambda v: v in _STATUSES, ", ".join(_STATUSES)),
    ("reason", _optional_string, "a string or null"),
    ("traceback", _optional_string, "a string or null"),
)


def _problem(item: Any, where: str, fields) -> str | None:
    """The first field of ``item`` (a finding or an outcome at ``where``) that is not as datavet
    writes it, as ``findings[0].columns: expected a list of strings``; None when all are."""
    if not isinstance(item, dict):
        return f"{where}: expected an object"
    for name, ok, expected in fields:
        if name not in item:
            return f"{where}.{name}: missing"
        if not ok(item[name]):
            return f"{where}.{name}: expected {expected}"
    return None


def check_report(data: Any, shown: str = "report") -> dict:
    """``data`` when it is a complete datavet report (``Report.to_dict()``, or a ``--format
    json`` report read back), with every field ``datavet diff`` and ``datavet render`` use of
    the type they expect; InputError naming ``shown`` and the first bad field when it is not."""
    if not isinstance(data, dict) or data.get("tool") != "datavet" or "findings" not in data:
        raise InputError(shown, "not a datavet JSON report (write one with --format json)")
    if data.get("schema_version") != 1:
        raise InputError(
            shown, f"report schema_version {data.get('schema_version')!r} is not supported (1)"
        )
    findings = data["findings"]
    if not isinstance(findings, list):
        raise InputError(shown, "malformed findings list (findings: expected a list)")
    for i, f in enumerate(findings):
        if not (isinstance(f, dict) and {"code", "severity", "message"} <= set(f)):
            raise InputError(shown, f"malformed findings list (findings[{i}])")
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
        if name not in _LEVELS or not _count(value):
            raise bad(f"counts.{name}: expected a whole number >= 0")
    task = data.get("task")
    if task is not None and not _word(task):
        raise bad("task")
    for split, d in data["datasets"].items():
        if not _word(split) or not isinstance(d, dict):
            raise bad("datasets")
        fmt = d.get("format")
        if not (isinstance(fmt, str) and _SPACED.fullmatch(fmt)):
            raise bad(f"datasets.{split}.format")
        if not _count(d.get("rows")):
            raise bad(f"datasets.{split}.rows")
    ignored = data.get("ignored")
    if ignored is not None and not isinstance(ignored, list):
        raise bad("no valid 'ignored'")
    for i, item in enumerate(ignored or ()):
        if not isinstance(item, dict) or not isinstance(item.get("finding"), dict):
            raise bad(f"ignored[{i}].finding: expected an object")
    items = [(f"findings[{i}]", f, _FINDING) for i, f in enumerate(findings)]
    items += [
        (f"ignored[{i}].finding", x["finding"], _FINDING) for i, x in enumerate(ignored or ())
    ]
    items += [(f"outcomes[{i}]", o, _OUTCOME) for i, o in enumerate(data["outcomes"])]
    for where, item, fields in items:
        problem = _problem(item, where, fields)
        if problem:
            raise bad(problem)
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


def kind(data: Mapping) -> str:
    """What a report is a report of, in words: only reports of one kind can be compared (an
    audit against a training-log diagnosis would list every data finding as resolved)."""
    if data.get("curves") is not None:
        return "a training-log diagnosis (datavet curves)"
    probes = data.get("probes")
    if probes is not None:
        if isinstance(probes, Mapping) and probes.get("kind") == "monitor":
            return "a gradient monitor's record"
        return "a model probe (datavet probe)"
    return "a data audit (datavet audit)"


def diff(old, new, *, names: tuple[str, str] = ("old report", "new report")) -> Diff:
    """Compare two reports of one kind (Report objects, or dicts as ``--format json`` writes
    them); ``names`` name them in errors. InputError when either is not a complete report,
    UsageError when they are reports of different kinds."""
    old = check_report(old if isinstance(old, Mapping) else old.to_dict(), names[0])
    new = check_report(new if isinstance(new, Mapping) else new.to_dict(), names[1])
    if kind(old) != kind(new):
        raise UsageError(
            f"{names[0]} is {kind(old)} and {names[1]} is {kind(new)}: diff compares two "
            "reports of one kind"
        )
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
