"""report.dumps writes exactly what json.dumps(indent=2) writes, only faster for wide reports."""

from __future__ import annotations

import json
import math

import pytest

from datavet.output.json import dumps

PAYLOADS = [
    {},
    [],
    {"a": 1},
    {"a": [], "b": {}, "c": [[], [{}]], "d": ()},
    {"columns": [{"name": 'c\u00e9\n"x"', "mean": 0.1, "std": None, "ok": True, "n": 3}] * 3},
    {"nested": {"x": [1, 2.5, -0.0, 1e308, "s", None, False], "y": {"z": {"w": [{"k": 1}]}}}},
    [1, "two", [3, [4, {"five": [6]}]], {"seven": {}}],
    {1: "int key", 2.5: "float key", False: "bool key", None: "none key", "s": [1]},
    "just a string",
    42,
    None,
    {"control": "\x1b[31m\u009b\x7f", "emoji": "\U0001f600"},
]


@pytest.mark.parametrize("payload", PAYLOADS)
@pytest.mark.parametrize("indent", [2, 4, None])
def test_dumps_matches_the_standard_encoder(payload, indent):
    expected = json.dumps(payload, indent=indent, allow_nan=False, ensure_ascii=False)
    expected = "".join(f"\\u{ord(c):04x}" if 0x7F <= ord(c) <= 0x9F else c for c in expected)
    assert dumps(payload, indent=indent) == expected


@pytest.mark.parametrize("bad", [{"x": math.nan}, {"x": [math.inf]}, {"x": {"y": object()}}])
def test_dumps_refuses_what_the_standard_encoder_refuses(bad):
    with pytest.raises((ValueError, TypeError)):
        json.dumps(bad, indent=2, allow_nan=False)
    with pytest.raises((ValueError, TypeError)):
        dumps(bad)
