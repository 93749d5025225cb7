"""Curve reports: the JSON contract (schema, no NaN), the text with causes in order, and the HTML
section (view model, autoescaping, the page in a real Chromium)."""

from __future__ import annotations

import json
import math
import subprocess
import tempfile
from html.parser import HTMLParser

import numpy as np
import pytest
from jsonschema import Draft202012Validator
from output.browser import chromium

import datavet
from datavet.api.curves import MAX_CHART_POINTS
from datavet.output import html
from datavet.output.json import schema
from datavet.output.text_curves import render as render_text

from .conftest import CURVES, healthy_loss

XSS = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def validator():
    return Draft202012Validator(schema())


@pytest.fixture(scope="module")
def diverged():
    return datavet.diagnose_curves(CURVES / "lr_too_high.csv", classes=4)


def _strict(text):
    def bad(token):
        raise AssertionError(f"non-standard JSON constant {token}")

    return json.loads(text, parse_constant=bad)


@pytest.mark.parametrize("name", ["lr_too_high.csv", "nonfinite.csv", "overfitting.jsonl"])
def test_curve_reports_are_schema_valid_strict_json(validator, name):
    payload = _strict(datavet.diagnose_curves(CURVES / name).to_json())
    errors = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(payload)]
    assert errors == []
    assert payload["curves"]["rows"] == payload["datasets"]["log"]["rows"]


def test_schema_rejects_a_broken_curves_payload(validator, diverged):
    payload = _strict(diverged.to_json())
    payload["curves"]["nonfinite"] = [{"series": "train_loss", "step": 1, "value": "NaN!"}]
    assert list(validator.iter_errors(payload))
    payload = _strict(diverged.to_json())
    del payload["curves"]["series"]
    assert list(validator.iter_errors(payload))


def test_an_audit_report_has_no_curves_key(planted):
    assert "curves" not in datavet.audit(*planted, target="label").to_dict()


def test_payload_keeps_the_nonfinite_values_as_words_and_nulls():
    loss = healthy_loss(100)
    loss[60:] = np.nan
    r = datavet.diagnose_curves([{"step": i, "loss": v} for i, v in enumerate(loss)])
    c = r.to_dict()["curves"]
    assert c["series"]["train_loss"][60] is None and c["series"]["train_loss"][59] is not None
    assert c["nonfinite"][0] == {"series": "train_loss", "step": 60.0, "value": "nan"}
    assert c["end_step"] == 60.0


def test_long_logs_are_thinned_for_the_charts_but_keep_extremes_and_marks():
    n = 20000
    g = np.exp(0.2 * np.random.default_rng(0).standard_normal(n))
    g[12345] = 500.0
    rec = [{"step": i, "loss": 1.0 / (1 + i / 1000), "grad_norm": g[i]} for i in range(n)]
    c = datavet.diagnose_curves(rec).curves
    assert c["points"] <= MAX_CHART_POINTS + 10 and 12345.0 in c["series"]["step"]
    assert max(v for v in c["series"]["grad_norm"] if v is not None) == 500.0


def test_text_lists_the_causes_in_order_with_their_checks(diverged):
    text = render_text(diverged)
    assert "C002 loss-divergence" in text and "began climbing at step 201" in text
    block = text.split("likely causes, easiest to check first:")[1]
    order = [
        block.find(t)
        for t in (
            "1. data or label errors",
            "2. missing normalisation",
            "3. learning rate",
            "4. initialisation",
        )
    ]
    assert all(p >= 0 for p in order) and order == sorted(order)
    assert "check: datavet audit TRAIN" in block and "check: datavet probe (M006" in block
    assert text.rstrip().endswith("(exit 1)")


def test_html_view_model_marks_the_flagged_steps(diverged):
    vm = html.view_model(diverged.to_dict())
    assert vm["title"] == f"datavet curves: {CURVES / 'lr_too_high.csv'}"
    charts = {c["key"]: c for c in vm["curves"]["charts"]}
    assert set(charts) == {"loss", "grad_norm", "metric"}
    loss = charts["loss"]
    assert loss["log"] is True  # 0.1 ... 500,000: a log scale
    (mark,) = loss["marks"]
    assert mark["code"] == "C002" and mark["step"] == "201"
    plot = loss["plot"]
    assert plot["x"] < mark["x"] < plot["x"] + plot["w"]
    assert abs((mark["x"] - plot["x"]) / plot["w"] - 201 / 399) < 0.01
    (causes,) = vm["curves"]["causes"]
    assert [c["key"] for c in causes["causes"]][:3] == ["data", "normalisation", "learning_rate"]


def test_html_escapes_column_names_and_renders_without_a_curve_section_for_audits(planted):
    rec = [{"step": i, XSS: float(v)} for i, v in enumerate(healthy_loss(50))]
    page = datavet.diagnose_curves(rec, columns={"train_loss": XSS}).to_html()
    assert XSS not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    audit_page = datavet.audit(*planted, target="label").to_html()
    assert "data-test-curves" not in audit_page


class _Tags(HTMLParser):
    def __init__(self, text):
        super().__init__()
        self.attrs = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.attrs.append((tag, dict(attrs)))


def test_the_page_in_chromium_has_the_charts_and_marks(tmp_path):
    path = chromium()
    page = tmp_path / "curves.html"
    datavet.diagnose_curves(CURVES / "grad_spikes.csv").save_html(page)
    with tempfile.TemporaryDirectory() as profile:
        dom = subprocess.run(
            [
                path,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                f"--user-data-dir={profile}",
                "--dump-dom",
                page.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    tags = _Tags(dom).attrs
    charts = [a["data-test-curve-chart"] for t, a in tags if "data-test-curve-chart" in a]
    assert charts == ["loss", "grad_norm", "metric"]
    marks = [a["data-test-mark-step"] for t, a in tags if t == "line" and "data-test-mark" in a]
    assert marks == ["120", "230", "330"]
    assert [a["data-test-causes"] for t, a in tags if "data-test-causes" in a] == ["C009"]
    polylines = [a for t, a in tags if t == "polyline"]
    assert len(polylines) >= 5 and all(a["points"].count(",") > 10 for a in polylines)
    assert not any(t == "script" and a.get("type") != "application/json" for t, a in tags)
    assert math.isfinite(float(marks[0]))
