"""What a journal entry says: the rule codes it names, how many things it changed, and the
warnings it earns (a prediction written after the result, several changes at once)."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from datavet.errors import UsageError

DEFAULT_NAME = "datavet-journal.jsonl"


def _code(key: str) -> str:
    """A rule code or name (``C002``, ``loss-divergence``, ``V001``, ``M002``) -> its code."""
    from datavet.rules import lookup

    return lookup(key.strip()).code


def _rule(code: str):
    from datavet.rules import lookup

    try:
        return lookup(code)
    except UsageError:
        return None


def late_prediction(entry: dict) -> str | None:
    """A warning when the entry's run log (``--run PATH``) was last written before its
    prediction: the run had finished when the prediction was written."""
    run, at = entry.get("run"), entry.get("predicted_at")
    if not run or not at:
        return None
    try:
        mtime = Path(run).stat().st_mtime
        predicted = _dt.datetime.fromisoformat(at).timestamp()
    except (OSError, ValueError):
        return None
    if mtime < predicted - 1:  # the timestamps are to the second
        return (
            f"entry {entry['id']}: the run's log {run} was last written before the prediction "
            f"({at}): a prediction written once the result exists is not a prediction"
        )
    return None


def _fields(e: dict) -> dict[str, str]:
    names = []
    for code in e.get("codes") or ():
        rule = _rule(str(code))
        names.append(f"{code} {rule.name} {rule.summary}" if rule else str(code))
    result = e.get("result") or {}
    config = e.get("config_diff") or {}
    return {
        "symptom": (e.get("symptom") or "").lower(),
        "codes": " ".join(names).lower(),
        "hypothesis": (e.get("hypothesis") or "").lower(),
        "observed": (result.get("observed") or "").lower(),
        "changes": " ".join([*(e.get("changes") or []), *config]).lower(),
        "prediction": (e.get("prediction") or "").lower(),
    }


def n_changes(entry: dict) -> int:
    return max(len(entry.get("changes") or []), len(entry.get("config_diff") or {}))


def entry_warnings(entry: dict) -> list[str]:
    out = []
    n = n_changes(entry)
    if n > 1:
        what = entry.get("changes") or []
        keys = list(entry.get("config_diff") or {})
        listed = "; ".join(what) if len(what) >= len(keys) else ", ".join(keys)
        out.append(
            f"entry {entry['id']} changes {n} things ({listed}): if the run works you will not "
            "know which was needed. Change one thing at a time: one entry per change."
        )
    if not entry.get("prediction"):
        out.append(
            f"entry {entry['id']} has no prediction yet: write it before you run "
            f"(datavet journal predict {entry['id']} --predict ...)."
        )
    return out
