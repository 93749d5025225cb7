"""GitLab Code Quality: a JSON list of issues for ``artifacts: reports: codequality``.

Each finding is ``{description, check_name, fingerprint, severity, location: {path, lines:
{begin}}}`` (the subset of the Code Climate issue format GitLab reads), plus ``type`` and
``engine_name``. A finding points where SARIF points: the line of the config that names the
dataset, else the data file (line 1). Severities: error -> major, warning -> minor,
info -> info; a crashed rule is a ``blocker`` (the audit is incomplete). Findings removed by a
per-column ignore are left out (GitLab has no suppressions). Fingerprints are stable across runs
for the same problem (rule, dataset, split, columns) and unique within the report.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from datavet.output.sarif import fingerprint, locate

SEVERITY = {"error": "major", "warning": "minor", "info": "info"}


def _data(report) -> dict:
    return report if isinstance(report, Mapping) else report.to_dict()


def render(report, *, name: str | None = None, locations=None, **_options) -> str:
    return render_many([(name, report, locations)])


def _where(data: dict, locations, split: str | None) -> dict:
    loc = locate(data, locations, split)
    if loc is None:
        source = ((data.get("datasets") or {}).get(split or "train") or {}).get("source")
        return {"path": str(source or "<data>"), "lines": {"begin": 1}}
    return {"path": str(loc[0]), "lines": {"begin": max(int(loc[1]), 1)}}


def render_many(items: Sequence[tuple[str | None, Any, Any]]) -> str:
    """One list of issues for every (dataset name, report, locations)."""
    from datavet.output.json import dumps

    issues: list[dict] = []
    seen: set[str] = set()

    def unique(key: str) -> str:
        out, n = key, 0
        while out in seen:
            n += 1
            out = hashlib.sha256(f"{key}#{n}".encode()).hexdigest()[:32]
        seen.add(out)
        return out

    for name, report, locations in items:
        data = _data(report)
        label = f"[{name}] " if name else ""
        for f in data.get("findings", []):
            split = f" ({f['split']})" if f.get("split") else ""
            text = f["message"] + (f" Fix: {f['hint']}" if f.get("hint") else "")
            issues.append(
                {
                    "type": "issue",
                    "engine_name": "datavet",
                    "check_name": f["code"],
                    "description": f"{label}{f['code']} {f['name']}{split}: {text}",
                    "fingerprint": unique(fingerprint(name, f)),
                    "severity": SEVERITY[f["severity"]],
                    "location": _where(data, locations, f.get("split")),
                }
            )
        for o in data.get("outcomes", []):
            if o.get("status") == "crashed":
                key = "|".join(("crashed", o["code"], name or ""))
                issues.append(
                    {
                        "type": "issue",
                        "engine_name": "datavet",
                        "check_name": o["code"],
                        "description": f"{label}rule {o['code']} {o['name']} crashed: "
                        f"{o.get('reason')} (the audit is incomplete)",
                        "fingerprint": unique(hashlib.sha256(key.encode()).hexdigest()[:32]),
                        "severity": "blocker",
                        "location": _where(data, locations, None),
                    }
                )
    return dumps(issues) + "\n"
