"""JSON: the golden file, the schema, and ``Report.to_dict()`` as the output layer's payload."""

from __future__ import annotations

import json
import os

from jsonschema import Draft202012Validator

from datavet.output import FORMATS, render
from datavet.output import json as json_output

from .ci_reports import check_golden, clean_report, sample_report

UPDATE = os.environ.get("DATAVET_UPDATE_GOLDEN") == "1"


def test_registered():
    assert "json" in FORMATS


def test_golden():
    check_golden("json_sample.json", render(sample_report(), "json"), UPDATE)


def test_golden_payload_validates_against_the_schema():
    validator = Draft202012Validator(json_output.schema())
    for report in (sample_report(), clean_report()):
        validator.validate(json.loads(render(report, "json")))


def test_report_methods_delegate_to_the_output_layer():
    report = sample_report()
    assert report.to_dict() == json_output.payload(report)
    assert report.to_json() == json_output.to_json(report)
    assert report.to_json(indent=None) == json_output.dumps(report.to_dict(), indent=None)
    assert render(report, "json") == report.to_json() + "\n"
