"""Renderers: pure functions ``Report -> str``, one module per format."""

from __future__ import annotations

from datavet.output import json as json_output
from datavet.output import text as text_output

FORMATS = {
    "text": text_output.render,
    "json": json_output.render,
}


def render(report, fmt: str = "text", **options) -> str:
    return FORMATS[fmt](report, **options)
