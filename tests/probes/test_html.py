"""The probe section of the HTML report: view model, per-layer tables, charts, escaping, and the
page in a real Chromium."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch
from torch import nn

import datavet
from datavet.output import html, html_probes

from .models import MSE, run, seed_batch, seed_mlp, tanh_stacks
from .test_monitor import SPIKES, record, synthetic_norms

MODEL_CODES = [p.code for p in datavet.PROBES if "model" in p.needs]


def _browser():
    """tests/output/browser.py (the suite's Chromium helpers), loaded by path."""
    path = Path(__file__).resolve().parents[1] / "output" / "browser.py"
    spec = importlib.util.spec_from_file_location("datavet_tests_browser", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def softmax_report():
    x, y, _ = seed_batch()
    return run(seed_mlp(nn.Softmax(dim=1)), (x, y), thresholds={"M002": {"steps": 100}})


@pytest.fixture(scope="module")
def tanh_report():
    x0, models = tanh_stacks()
    y = torch.zeros(512, 256, dtype=torch.float64)
    return run(models["std 1"], (x0, y), loss_fn=MSE, select=["M006", "M007"])


def test_view_model_lists_every_probe_with_status_and_result(softmax_report):
    vm = html_probes.view(softmax_report.to_dict())
    rows = {c["code"]: c for c in vm["checks"]}
    assert list(rows) == MODEL_CODES
    assert rows["M003"]["status"] == "failed" and rows["M003"]["css"] == "error"
    assert rows["M001"]["status"] == "passed" and "ln 5 = 1.609" in rows["M001"]["headline"]
    assert rows["M010"]["status"] == "skipped" and "train_step" in rows["M010"]["headline"]
    assert vm["overfit"]["chart"]["lines"][0]["points"]
    assert "1.617 → " in vm["overfit"]["caption"]


def test_per_layer_table_flags_the_saturated_layers(tanh_report):
    vm = html_probes.view(tanh_report.to_dict())
    rows = vm["layers"]["rows"]
    assert len(rows) == 20
    tanh1 = rows[1]
    assert (tanh1["module"], tanh1["type"], tanh1["depth"]) == ("1", "Tanh", 1)
    assert (tanh1["std"], tanh1["saturated"]) == ("0.9747", "87%")
    assert tanh1["flags"] == "saturated" and tanh1["css"] == "warning"
    assert rows[0]["flags"] == "" and rows[0]["saturated"] == ""


def test_page_has_the_probe_section_and_layer_table(tanh_report):
    page = tanh_report.to_html()
    assert 'data-test-probes="model"' in page
    assert page.count("data-test-layer=") == 20
    assert page.count('data-test-flagged="saturated"') == 10
    assert "<title>datavet probe: Sequential</title>" in page


def test_monitor_page_marks_the_spikes():
    report = record(synthetic_norms()).report()
    vm = html.view_model(report.to_dict())
    section = vm["probes"]["monitor"]
    assert [s["step"] for s in section["spikes"]] == [str(s) for s in SPIKES]
    assert [m["step"] for m in section["chart"]["marks"]] == list(SPIKES)
    page = report.to_html()
    assert 'data-test-probes="monitor"' in page
    for step in SPIKES:
        assert f'data-test-spike-mark="{step}"' in page and f'data-test-spike="{step}"' in page
    assert "data-test-monitor-layers" in page


def test_audit_reports_have_no_probe_section():
    import pandas as pd

    report = datavet.audit(
        pd.DataFrame({"x": [1.0, 2.0, 3.0], "label": [0, 1, 0]}), baselines=False
    )
    vm = html.view_model(report.to_dict())
    assert vm["probes"] is None and "data-test-probes" not in report.to_html()


def test_module_names_are_escaped():
    model = nn.Sequential()
    model.add_module("<script>alert(1)</script>", nn.Linear(4, 4))
    model.add_module("act", nn.Tanh())
    r = run(model, (torch.randn(8, 4), torch.randn(8, 4)), loss_fn=MSE, select="M006")
    page = r.to_html()
    assert "<script>alert(1)</script>" not in page.split('id="datavet-report"')[0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_page_renders_in_chromium(tmp_path, softmax_report):
    page = tmp_path / "probe.html"
    softmax_report.save_html(page)
    browser = _browser()
    elements = browser.Elements(browser.dump_dom(page))
    probes = elements.with_attr("data-test-probe")
    assert {a["data-test-probe"] for _, a in probes} == set(MODEL_CODES)
    assert elements.with_attr("data-test-probe-overfit")
    assert elements.with_attr("data-test-probe-layers")
    assert [t for t, _ in elements.with_attr("data-test-probe-overfit")] == ["figure"]


def test_future_leakage_table_marks_the_leaking_cuts():
    from .test_future_leakage import lm, probe_lm

    report = probe_lm(lm(None), thresholds={"M013": {"max_cuts": 4}})
    vm = html_probes.view(report.to_dict())
    future = vm["future"]
    assert [r["cut"] for r in future["rows"]] == [0, 3, 7, 10]
    assert {r["verdict"] for r in future["rows"]} == {"leaks"}
    assert future["rows"][1]["future"] == "4–11" and future["rows"][1]["past"] == "0–3"
    assert "position 0 reads position 11" in future["summary"]
    assert "'encoder.layers.0.self_attn' (MultiheadAttention)" in future["summary"]
    page = report.to_html()
    assert page.count('data-test-cut-verdict="leaks"') == 4
    assert "data-test-probe-future" in page
    causal = probe_lm(lm("causal"), thresholds={"M013": {"max_cuts": 4}}).to_html()
    assert causal.count('data-test-cut-verdict="causal"') == 4
    assert 'data-test-cut-verdict="leaks"' not in causal


def test_a_skipped_future_probe_adds_no_table(softmax_report):
    assert html_probes.view(softmax_report.to_dict())["future"] is None
    assert "data-test-probe-future" not in softmax_report.to_html()


def test_future_leakage_table_renders_in_chromium(tmp_path):
    from .test_future_leakage import lm, probe_lm

    page = tmp_path / "future.html"
    probe_lm(lm(None), thresholds={"M013": {"max_cuts": 4}}).save_html(page)
    browser = _browser()
    elements = browser.Elements(browser.dump_dom(page))
    assert [t for t, _ in elements.with_attr("data-test-probe-future")] == ["table"]
    assert [a["data-test-cut"] for _, a in elements.with_attr("data-test-cut")] == [
        "0",
        "3",
        "7",
        "10",
    ]
