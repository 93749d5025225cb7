"""JUnit XML for CI test tabs (GitLab, Jenkins, Azure): a pure function of the Report.

The shape is the Jenkins xunit ``junit-10.xsd`` that pytest's junitxml follows. One testcase per
rule and column evaluated, so a clean audit shows as "N passed": a finding at or above fail-on is
a ``<failure>``, a rule that could not apply is ``<skipped>`` with its reason, a rule that crashed
is an ``<error>`` with its traceback, a finding below fail-on is a passing testcase with the
finding in ``<system-out>``, and a finding removed by a per-column ignore is ``<skipped>`` with
the ignore's reason. A finding that groups several columns belongs to the testcase of each of
them: grouping never changes the number of testcases nor passes a column it names. Text that
XML 1.0 cannot carry (most control characters) is written as ``#xNN``, as pytest does (and C1
controls too): column names are data and may contain anything.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Any

from datavet.output.text import BIDI

_LEVEL = {"info": 10, "warning": 20, "error": 30}


def _per_column(code: str) -> tuple[tuple[str, ...], tuple[str, ...] | None] | None:
    """The splits and column kinds a rule that looks at each column evaluates (declared on the
    rule: ``per_column``, ``per_column_kinds``), or None: one testcase about the whole dataset."""
    from datavet.rules import find

    rule = find(code)
    if rule is None or not rule.per_column:
        return None
    return rule.per_column, rule.per_column_kinds


# pytest's bin_xml_escape: everything XML 1.0 cannot hold becomes #xNN / #xNNNN. Unlike pytest,
# the C1 controls U+0080-U+009F are escaped too: XML allows them, but U+009B is a one-character
# terminal escape (CSI) for whoever cats the file in a CI log; so are bidirectional controls,
# which reverse the text around them in a CI test tab, and the ``#`` of a literal ``#x``, so that
# a column ``a#x01`` cannot come out as the column ``a\x01`` does.
_ILLEGAL = re.compile(
    "[^\u0009\u000a\u000d\u0020-\u007e\u00a0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
    f"|[{BIDI}]|#(?=x)"
)


def xml_text(value: Any) -> str:
    """Text XML 1.0 can carry: illegal characters (and C1 and bidirectional controls, and the
    ``#`` of ``#x``) written as ``#xNN``."""

    def repl(m: re.Match) -> str:
        i = ord(m.group())
        return f"#x{i:02X}" if i <= 0xFF else f"#x{i:04X}"

    return _ILLEGAL.sub(repl, "" if value is None else str(value))


def _data(report) -> dict:
    return report if isinstance(report, Mapping) else report.to_dict()


def render(report, *, name: str | None = None, **_options) -> str:
    """One ``<testsuites>`` document for one report."""
    return render_many([(name, report, None)])


def render_many(items: Sequence[tuple[str | None, Any, Any]]) -> str:
    """One ``<testsuites>`` with a ``<testsuite>`` per (dataset name, report, locations)."""
    root = ET.Element("testsuites", {"name": "datavet"})
    totals = {"tests": 0, "failures": 0, "errors": 0}
    time = 0.0
    for name, report, _locations in items:
        data = _data(report)
        suite = _suite(name, data)
        root.append(suite)
        for key in totals:
            totals[key] += int(suite.get(key))
        time += data.get("duration_s") or 0.0
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", _seconds(time))
    ET.indent(root, space="  ")
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def _seconds(value: float | None) -> str:
    # junit-10.xsd's SUREFIRE_TIME allows at most three decimals and no exponent.
    return f"{max(value or 0.0, 0.0):.3f}"


def _suite(name: str | None, data: dict) -> ET.Element:
    cases = list(_cases(name, data))
    counts = {
        "tests": len(cases),
        "failures": sum(1 for c in cases if c.find("failure") is not None),
        "errors": sum(1 for c in cases if c.find("error") is not None),
        "skipped": sum(1 for c in cases if c.find("skipped") is not None),
    }
    suite = ET.Element(
        "testsuite",
        {
            "name": xml_text(name or "datavet"),
            **{k: str(v) for k, v in counts.items()},
            "time": _seconds(data.get("duration_s")),
        },
    )
    props = ET.SubElement(suite, "properties")
    for key, value in _properties(data):
        ET.SubElement(props, "property", {"name": key, "value": xml_text(value)})
    suite.extend(cases)
    return suite


def _properties(data: dict):
    yield "datavet_version", data.get("version")
    yield "fail_on", data.get("fail_on")
    yield "exit_code", data.get("exit_code")
    if data.get("target"):
        yield "target", data["target"]
        yield "task", data.get("task")
    for split, d in data.get("datasets", {}).items():
        yield f"{split}_source", d.get("source")
        yield f"{split}_rows", d.get("rows")


def _columns(data: dict, split: str, kinds: tuple[str, ...] | None) -> list[str]:
    d = data.get("datasets", {}).get(split)
    if d is None:
        return []
    return [c["name"] for c in d.get("columns", []) if kinds is None or c.get("kind") in kinds]


def _keys(code: str, f: dict) -> list[tuple[str | None, str | None]]:
    """The testcases a finding belongs to: for a rule evaluated per column, the case of each
    column it names (a finding that groups six columns with NaN fails all six), else the
    rule's one case."""
    if _per_column(code) is not None and f.get("split") and f.get("columns"):
        return [(f["split"], column) for column in dict.fromkeys(f["columns"])]
    return [(None, None)]


def _cases(name: str | None, data: dict):
    prefix = "datavet" if name is None else f"datavet.{name}"
    level = _LEVEL.get(data.get("fail_on", "error"), 30)
    findings: dict[str, list[dict]] = {}
    for f in data.get("findings", []):
        findings.setdefault(f["code"], []).append(f)
    ignored: dict[str, list[dict]] = {}
    for item in data.get("ignored", []):
        ignored.setdefault(item["finding"]["code"], []).append(item)
    seen = set()
    outcomes = list(data.get("outcomes", []))
    # A finding whose rule has no outcome (a report built by hand) still gets its testcase.
    for code in [*findings, *ignored]:
        if code not in {o["code"] for o in outcomes} and code not in seen:
            seen.add(code)
            f = (findings.get(code) or [ignored[code][0]["finding"]])[0]
            outcomes.append({"code": code, "name": f["name"], "status": "failed"})
    for o in outcomes:
        code, title = o["code"], f"{o['code']} {o['name']}"
        if o["status"] == "skipped":
            case = _case(prefix, title)
            ET.SubElement(case, "skipped", {"message": xml_text(o.get("reason") or "skipped")})
            yield case
            continue
        if o["status"] == "crashed":
            case = _case(prefix, title)
            err = ET.SubElement(
                case, "error", {"type": "crashed", "message": xml_text(o.get("reason"))}
            )
            err.text = xml_text(o.get("traceback") or o.get("reason"))
            yield case
            continue
        groups: dict[tuple[str | None, str | None], tuple[list, list]] = {}
        scope = _per_column(code)
        if scope is not None:
            splits, kinds = scope
            for split in splits:
                for column in _columns(data, split, kinds):
                    groups[(split, column)] = ([], [])
        else:
            groups[(None, None)] = ([], [])
        for f in findings.get(code, []):
            for key in _keys(code, f):
                groups.setdefault(key, ([], []))[0].append(f)
        for item in ignored.get(code, []):
            for key in _keys(code, item["finding"]):
                groups.setdefault(key, ([], []))[1].append(item)
        for (split, column), (found, skipped) in groups.items():
            if column is None:
                case = _case(prefix, title)
            else:
                case = _case(f"{prefix}.{split}", f"{title}[{column}]")
            _outcome(case, found, skipped, level)
            yield case


def _case(classname: str, name: str) -> ET.Element:
    return ET.Element("testcase", {"classname": xml_text(classname), "name": xml_text(name)})


def _describe(f: dict) -> str:
    where = f" [{f['split']}]" if f.get("split") else ""
    lines = [f"{f['severity']} {f['code']} {f['name']}{where}: {f['message']}"]
    if f.get("hint"):
        lines.append(f"fix: {f['hint']}")
    if f.get("examples"):
        lines.append("rows: " + ", ".join(str(i) for i in f["examples"]))
    return "\n".join(lines)


def _outcome(case: ET.Element, found: list[dict], skipped: list[dict], level: int) -> None:
    failing = [f for f in found if _LEVEL[f["severity"]] >= level]
    if failing:
        first = failing[0]
        message = first["message"]
        if len(failing) > 1:
            message = f"{len(failing)} findings; first: {message}"
        failure = ET.SubElement(
            case, "failure", {"type": xml_text(first["name"]), "message": xml_text(message)}
        )
        failure.text = xml_text("\n\n".join(_describe(f) for f in failing))
    elif skipped and not found:
        reasons = "; ".join(dict.fromkeys(item["reason"] for item in skipped))
        ET.SubElement(
            case, "skipped", {"type": "ignored", "message": xml_text(f"ignored: {reasons}")}
        )
    below = [f for f in found if f not in failing]
    notes = [_describe(f) for f in below]
    notes += [f"ignored ({item['reason']}): {_describe(item['finding'])}" for item in skipped]
    if notes:
        out = ET.SubElement(case, "system-out")
        out.text = xml_text("\n\n".join(notes))
