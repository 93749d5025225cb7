"""The JSON contract: ``Report.to_dict()`` as JSON, never NaN or Infinity."""

from __future__ import annotations

import json
from importlib import resources


def render(report, **_options) -> str:
    from datavet.report import dumps

    return dumps(report.to_dict()) + "\n"


def schema() -> dict:
    """The JSON Schema (draft 2020-12) that every ``--format json`` payload validates against."""
    return json.loads(resources.files("datavet.output").joinpath("report.schema.json").read_text())
