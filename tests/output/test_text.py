"""Text: golden files (plain and coloured), and the curve view for a training-log diagnosis."""

from __future__ import annotations

import os
from pathlib import Path

from datavet import diagnose_curves
from datavet.output import FORMATS, render, text_curves

from .ci_reports import check_golden, sample_report

UPDATE = os.environ.get("DATAVET_UPDATE_GOLDEN") == "1"
CURVES = Path(__file__).resolve().parents[2] / "sample_data" / "curves"


def test_registered():
    assert "text" in FORMATS


def test_golden():
    check_golden("text_sample.txt", render(sample_report(), "text"), UPDATE)


def test_golden_colour():
    check_golden("text_sample_colour.txt", render(sample_report(), "text", colour=True), UPDATE)


def test_no_raw_control_characters_without_colour():
    text = render(sample_report(), "text")
    assert "\x1b" not in text and "\x7f" not in text
    assert not any(line.startswith("::") for line in text.splitlines())


def test_a_curve_report_renders_as_the_curve_view():
    report = diagnose_curves(CURVES / "lr_too_high.csv")
    text = render(report, "text")
    assert text == text_curves.render(report)
    assert "likely causes, easiest to check first:" in text
