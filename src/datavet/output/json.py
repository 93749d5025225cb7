"""The JSON contract: a report as plain data (:func:`payload`, what ``Report.to_dict()`` returns
and every renderer reads) and as strict JSON text (:func:`dumps`): never NaN or Infinity."""

from __future__ import annotations

import json
import math
import re
from importlib import resources
from typing import TYPE_CHECKING, Any

from datavet._version import __version__
from datavet.report import SCHEMA_VERSION

if TYPE_CHECKING:
    from datavet.report import Report

_C1 = re.compile("[\x7f-\x9f]")


def dumps(payload: Any, indent: int | None = 2) -> str:
    """Strict JSON (no NaN/Infinity), UTF-8 text, with DEL and C1 controls escaped as \\u00XX.

    ``ensure_ascii=False`` escapes only U+0000-U+001F; U+009B is a one-character terminal
    escape (CSI), so a column name could otherwise drive the terminal of whoever cats the file.
    """
    if indent is None:
        text = json.dumps(payload, allow_nan=False, ensure_ascii=False)
    else:
        text = "".join(_indented(payload, " " * indent, 0))
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_SCALARS = (str, int, float, bool, type(None))


def _key(k: Any) -> str:
    """A dict key as the standard encoder writes it (``1`` as ``"1"``, ``True`` as
    ``"true"``); what it refuses raises its TypeError."""
    if isinstance(k, str):
        return k
    return next(iter(json.loads(json.dumps({k: None}, allow_nan=False))))


def _indented(value: Any, step: str, level: int):
    """The text of ``json.dumps(value, indent=len(step), allow_nan=False, ensure_ascii=False)``,
    piece by piece. The standard library encodes indented JSON in pure Python, a call per value
    (a report of a 200,000-column table holds millions); here a dict of plain values (a column's
    summary) is one call of its C encoder, its item separator carrying the indentation."""
    if isinstance(value, dict) and value and not all(type(k) is str for k in value):
        value = {_key(k): v for k, v in value.items()}
    if isinstance(value, dict) and value:
        inner = "\n" + step * (level + 1)
        if all(isinstance(v, _SCALARS) for v in value.values()):
            flat = json.JSONEncoder(
                ensure_ascii=False, allow_nan=False, separators=("," + inner, ": ")
            ).encode(value)
            yield "{" + inner + flat[1:-1] + "\n" + step * level + "}"
            return
        yield "{"
        first = True
        for k, v in value.items():
            yield (inner if first else "," + inner) + json.dumps(k, ensure_ascii=False) + ": "
            first = False
            yield from _indented(v, step, level + 1)
        yield "\n" + step * level + "}"
    elif isinstance(value, (list, tuple)) and value:
        inner = "\n" + step * (level + 1)
        yield "["
        for i, v in enumerate(value):
            yield inner if i == 0 else "," + inner
            yield from _indented(v, step, level + 1)
        yield "\n" + step * level + "]"
    elif isinstance(value, _SCALARS) or isinstance(value, (dict, list, tuple)):
        yield json.dumps(value, allow_nan=False, ensure_ascii=False)
    else:  # what the standard encoder would refuse or convert: let it
        yield json.dumps(value, indent=len(step), allow_nan=False, ensure_ascii=False)


def _clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities become null, tuples lists, numpy scalars Python numbers,
    text valid UTF-8."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        return _clean(value.item())
    if isinstance(value, str):
        return utf8_text(value)
    if isinstance(value, (int, bool)) or value is None:
        return value
    return utf8_text(str(value))


def utf8_text(value: str) -> str:
    """``value`` as valid UTF-8: a file name that is not (``caf\xe9.csv``, which the OS hands
    Python as a lone surrogate) is written with the byte escaped, as Python shows it."""
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raw = value.encode("utf-8", "surrogateescape")
        return raw.decode("utf-8", "backslashreplace")
    return value


def payload(report: Report) -> dict:
    """The report as JSON-safe plain data: the one source for every renderer."""
    return _clean(
        {
            "schema_version": SCHEMA_VERSION,
            "tool": "datavet",
            "version": __version__,
            "passed": report.passed,
            "exit_code": report.exit_code(),
            "fail_on": report.fail_on.label,
            **({"exit_zero": True} if report.exit_zero else {}),
            "counts": report.counts(),
            "target": report.target,
            "task": report.task,
            "task_reason": report.task_reason,
            "findings": [f.to_dict() for f in report.findings],
            "outcomes": [o.to_dict() for o in report.outcomes],
            "datasets": report.datasets,
            "baselines": report.baselines,
            "notes": report.notes,
            "duration_s": report.duration_s,
            "ignored": [i.to_dict() for i in report.ignored],
            **({"probes": report.probes} if report.probes is not None else {}),
            **({"curves": report.curves} if report.curves is not None else {}),
        }
    )


def to_json(report, *, indent: int | None = 2) -> str:
    return dumps(report.to_dict(), indent=indent)


def render(report, **_options) -> str:
    return dumps(report.to_dict()) + "\n"


def schema() -> dict:
    """The JSON Schema (draft 2020-12) that every ``--format json`` payload validates against."""
    return json.loads(resources.files("datavet.output").joinpath("report.schema.json").read_text())
