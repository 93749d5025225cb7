"""SARIF 2.1.0 for GitHub code scanning and other SARIF viewers: a pure function of the Report.

Code scanning annotates files in the repository, and data often lives elsewhere, so a result
points at the file that names the dataset: the line of ``[tool.datavet.datasets.NAME]`` (or its
``train =`` / ``test =`` key) in ``pyproject.toml`` or ``datavet.toml`` when the audit came from
the config, else the data file itself when it is in the repository. No location is invented:
with neither (an in-memory DataFrame), a result has only a logical location (split and column).
Findings removed by a per-column ignore are results with an external suppression and its reason.
"""

from __future__ import annotations

import hashlib
import inspect
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from datavet.findings import column_set

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {"error": "error", "warning": "warning", "info": "note"}
_PROBLEM = {"error": "error", "warning": "warning", "info": "recommendation"}
_FAMILIES = {
    "V": "values",
    "F": "features",
    "L": "labels",
    "S": "splits",
    "B": "baselines",
    "T": "tensors",
    "M": "model",
    "C": "curves",
}
_MAX_DESCRIPTION = 1024  # GitHub's limit for shortDescription / fullDescription

# A location: (uri, line) or (uri, line, end_column), keyed by "train", "test" or "dataset".
Locations = Mapping[str, tuple]


def _data(report) -> dict:
    return report if isinstance(report, Mapping) else report.to_dict()


def render(report, *, name: str | None = None, locations: Locations | None = None, **_o) -> str:
    """A SARIF log with one run for one report."""
    return render_many([(name, report, locations)])


def render_many(items: Sequence[tuple[str | None, Any, Locations | None]]) -> str:
    """A SARIF log with one run per (dataset name, report, locations)."""
    from datavet.output.json import dumps

    log = {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [_run(name, _data(report), locations) for name, report, locations in items],
    }
    return dumps(log) + "\n"


# --------------------------------------------------------------------------------------------
# rules


def _sections(doc: str) -> tuple[str, dict[str, str]]:
    """The first paragraph and the **Section** blocks of an auditor docstring."""
    lines = inspect.cleandoc(doc or "").splitlines()
    head: list[str] = []
    sections: dict[str, list[str]] = {}
    current: list[str] = head
    for line in lines:
        m = re.fullmatch(r"\*\*(.+?)\*\*\s*", line.strip())
        if m:
            current = sections.setdefault(m.group(1), [])
            continue
        current.append(line)
    flat = {k: _paragraph(v) for k, v in sections.items()}
    return _paragraph(head), flat


def _paragraph(lines: list[str]) -> str:
    return re.sub(r"\s+", " ", " ".join(lines)).strip()


def _plain(text: str) -> str:
    return text.replace("``", "").replace("**", "")


def _cap(text: str, limit: int = _MAX_DESCRIPTION) -> str:
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def rule_descriptor(code: str, name: str) -> dict:
    """A SARIF reportingDescriptor, from the one registry (every family: V/F/L/S/B/T, M, C):
    the rule's default severity, summary and docstring (its user documentation)."""
    from datavet.rules import find

    rule = find(code)
    doc = inspect.cleandoc(rule.__doc__ or "") if rule is not None else ""
    head, sections = _sections(doc)
    summary = getattr(rule, "summary", None) or head or name
    what = sections.get("What it checks") or head or summary
    severity = rule.severity.label if rule is not None else "warning"
    markdown = re.sub(r"``(.+?)``", r"`\1`", doc)
    markdown = re.sub(r"^\*\*(.+?)\*\*\s*$", r"**\1**\n", markdown, flags=re.MULTILINE)
    help_text = _plain(doc) or summary
    more = f"`datavet rule {code}` prints this documentation."
    out = {
        "id": code,
        "name": name,
        "shortDescription": {"text": _cap(_plain(summary))},
        "fullDescription": {"text": _cap(_plain(what))},
        "help": {
            "text": f"{help_text}\n\n{more}",
            "markdown": f"{markdown or summary}\n\n{more}",
        },
        "defaultConfiguration": {"level": _LEVELS[severity]},
        "properties": {
            "tags": ["data-quality", _FAMILIES.get(code[:1], "other")],
            "precision": "high",
            "problem.severity": _PROBLEM[severity],
        },
    }
    return out


# --------------------------------------------------------------------------------------------
# results


def fingerprint(name: str | None, f: dict) -> str:
    """Stable across runs for the same problem (rule, dataset, split, set of columns), not the
    message, whose counts change as the data does, nor the order of the columns, which some
    rules take from the data (:func:`datavet.findings.column_set`)."""
    key = "|".join([f["code"], name or "", f.get("split") or "", "\x1f".join(column_set(f))])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def locate(data: dict, locations: Locations | None, split: str | None) -> tuple | None:
    """Where a finding about ``split`` points: the config line or the data file, or None."""
    if locations is None:
        locations = default_locations(data)
    for key in (split, "dataset", "train"):
        if key is not None and key in locations:
            return tuple(locations[key])
    return None


def default_locations(data: dict) -> dict[str, tuple]:
    """Without a config: the data files the report names (line 1), when they are files."""
    out = {}
    for split, d in data.get("datasets", {}).items():
        source = d.get("source")
        if source and not str(source).startswith("<"):
            out[split] = (str(source).replace("\\", "/"), 1)
    return out


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def is_url(path: str) -> bool:
    """Whether a location is a URL (``file://`` for data outside the repository) not a path."""
    return _SCHEME.match(path) is not None


def _uri(path: str) -> str:
    """An ``artifactLocation.uri``: a URL (``file://`` from an absolute path, already encoded)
    as it is, a path percent-encoded (RFC 3986), so a space, ``#``, ``?`` or ``%`` in a file
    name cannot end the path or decode to another file; a name that is not UTF-8 by its own
    bytes (``caf%E9.csv``)."""
    return path if is_url(path) else quote(path.encode("utf-8", "surrogateescape"), safe="/")


def _physical(loc: tuple) -> dict:
    uri, line = _uri(str(loc[0])), max(int(loc[1]), 1)
    region: dict[str, int] = {"startLine": line, "startColumn": 1}
    if len(loc) > 2 and loc[2]:
        region.update(endLine=line, endColumn=max(int(loc[2]), 2))
    return {"artifactLocation": {"uri": uri}, "region": region}


def _logical(name: str | None, f: dict) -> list[dict]:
    scope = ".".join(p for p in (name, f.get("split")) if p) or "dataset"
    cols = f.get("columns") or []
    if not cols:
        return [{"name": scope, "kind": "module"}]
    return [{"name": c, "fullyQualifiedName": f"{scope}.{c}", "kind": "member"} for c in cols]


def _result(name, f: dict, index: int, data: dict, locations, reason: str | None) -> dict:
    text = f["message"]
    if f.get("hint"):
        text += f" Fix: {f['hint']}"
    location: dict[str, Any] = {"logicalLocations": _logical(name, f)}
    loc = locate(data, locations, f.get("split"))
    if loc is not None:
        location = {"physicalLocation": _physical(loc), **location}
    out: dict[str, Any] = {
        "ruleId": f["code"],
        "ruleIndex": index,
        "level": _LEVELS[f["severity"]],
        "message": {"text": text},
        "locations": [location],
        "partialFingerprints": {"datavetFinding/v1": fingerprint(name, f)},
        "properties": {
            "severity": f["severity"],
            "split": f.get("split"),
            "columns": list(f.get("columns", [])),
            "n_affected": f.get("n_affected"),
            "examples": list(f.get("examples", [])),
            "metrics": dict(f.get("metrics", {})),
        },
    }
    if name:
        out["properties"]["dataset"] = name
    if reason is not None:
        out["suppressions"] = [{"kind": "external", "status": "accepted", "justification": reason}]
    return out


def _run(name: str | None, data: dict, locations: Locations | None) -> dict:
    codes: dict[str, str] = {}
    for o in data.get("outcomes", []):
        codes.setdefault(o["code"], o["name"])
    for f in [*data.get("findings", []), *(i["finding"] for i in data.get("ignored", []))]:
        codes.setdefault(f["code"], f["name"])
    index = {code: i for i, code in enumerate(codes)}
    results = [_result(name, f, index[f["code"]], data, locations, None) for f in data["findings"]]
    results += [
        _result(name, i["finding"], index[i["finding"]["code"]], data, locations, i["reason"])
        for i in data.get("ignored", [])
    ]
    crashed = [o for o in data.get("outcomes", []) if o["status"] == "crashed"]
    invocation: dict[str, Any] = {
        "executionSuccessful": data.get("exit_code") != 2,
        "exitCode": data.get("exit_code"),
    }
    if crashed:
        invocation["toolExecutionNotifications"] = [
            {
                "level": "error",
                "message": {"text": f"rule {o['code']} {o['name']} crashed: {o.get('reason')}"},
                "descriptor": {"id": o["code"]},
            }
            for o in crashed
        ]
    skipped = [o for o in data.get("outcomes", []) if o["status"] == "skipped"]
    if skipped:
        invocation["toolConfigurationNotifications"] = [
            {
                "level": "note",
                "message": {"text": f"rule {o['code']} {o['name']} skipped: {o.get('reason')}"},
                "descriptor": {"id": o["code"]},
            }
            for o in skipped
        ]
    version = data.get("version") or "0"
    return {
        "tool": {
            "driver": {
                "name": "datavet",
                "version": version,
                "semanticVersion": version,
                "rules": [rule_descriptor(code, n) for code, n in codes.items()],
            }
        },
        "automationDetails": {"id": f"datavet/{name}/" if name else "datavet/"},
        "invocations": [invocation],
        "results": results,
        "properties": {
            "fail_on": data.get("fail_on"),
            "passed": data.get("passed"),
            "target": data.get("target"),
            "datasets": {s: d.get("source") for s, d in data.get("datasets", {}).items()},
        },
    }
