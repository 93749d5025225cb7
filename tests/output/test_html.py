"""The HTML report: the view model (every decision), the page in a real Chromium, XSS safety."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet.output import html, svg

from .browser import Elements, dump_dom, screenshot

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"

PAYLOADS = [
    "</script><script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '"><svg onload=alert(1)>',
]


@pytest.fixture(scope="module")
def planted_report():
    return datavet.audit(SAMPLE / "planted_train.csv", SAMPLE / "planted_test.csv", target="label")


@pytest.fixture(scope="module")
def planted_vm(planted_report):
    return html.view_model(planted_report.to_dict())


# --- view model ---------------------------------------------------------------------------


def test_verdict_fails_with_counts(planted_vm, planted_report):
    v = planted_vm["verdict"]
    assert v["css"] == "failed" and v["exit_code"] == 1 and v["title"] == "Not ready to train"
    counts = {c["severity"]: c["count"] for c in v["counts"]}
    assert counts == planted_report.counts()
    assert "3 findings at or above 'error'" in v["detail"]


def test_verdict_passes_on_clean_data():
    r = datavet.audit(SAMPLE / "clean_train.csv", SAMPLE / "clean_test.csv", target="label")
    vm = html.view_model(r.to_dict())
    assert vm["verdict"]["css"] == "passed" and vm["verdict"]["title"] == "Ready to train"
    assert vm["groups"] == [] and vm["fix_first"] == []


def test_findings_grouped_by_severity_in_report_order(planted_vm, planted_report):
    assert [g["severity"] for g in planted_vm["groups"]] == ["error", "warning"]
    flat = [(f["code"], f["split"]) for g in planted_vm["groups"] for f in g["findings"]]
    assert flat == [(f.code, f.split or "both") for f in planted_report.findings]
    anchors = [f["anchor"] for g in planted_vm["groups"] for f in g["findings"]]
    assert len(set(anchors)) == len(anchors)


def test_fix_first_names_each_rule_once_most_severe_first(planted_vm):
    codes = [f["code"] for f in planted_vm["fix_first"]]
    assert codes == ["S001", "V001", "F001"]
    assert all(f["hint"] for f in planted_vm["fix_first"])


def test_example_rows_are_capped_with_a_count(planted_vm):
    s001 = next(f for g in planted_vm["groups"] for f in g["findings"] if f["code"] == "S001")
    assert s001["examples"] == "90, 91, 92, 93, 94 (+5 more)"


def test_problem_cells_are_flagged_and_flagged_columns_come_first(planted_vm):
    train = next(t for t in planted_vm["tables"] if t["split"] == "train")
    rows = {r["name"]: r for r in train["head"]}
    assert rows["x1"]["flags"] == {"nan": "error", "name": "error"}
    assert rows["x3"]["flags"]["std"] == "warning"  # constant
    assert rows["x0"]["flags"]["std"] == "warning"  # scale outlier
    assert rows["x2"]["flags"] == {}
    assert [r["name"] for r in train["head"]][-1] == "x2"  # the unflagged column last
    assert rows["x1"]["nan"] == "3" and rows["x3"]["std"] == "0"


def test_wide_tables_fold_columns_without_findings():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(50, 120)), columns=[f"c{i:03d}" for i in range(120)])
    frame["c077"] = np.nan  # one flagged column, deep in the table
    frame["label"] = rng.integers(0, 2, 50)
    vm = html.view_model(datavet.audit(frame, target="label", select="V").to_dict())
    (table,) = vm["tables"]
    assert table["head"][0]["name"] == "c077"
    assert len(table["head"]) == 20 and len(table["tail"]) == 100
    assert table["flagged"] == 1


def test_baselines_view(planted_vm):
    b = planted_vm["baselines"]
    assert b["task"] == "classification" and b["evaluated_on"] == "test"
    assert [r["model"] for r in b["rows_table"]] == ["majority", "prior", "linear"]
    assert b["headers"] == ["Accuracy", "Balanced accuracy", "Log loss"]
    assert b["rows_table"][0]["cells"][2] == "–"  # a hard prediction has no log loss
    assert b["expectation"].startswith("A network should start near log loss 0.693")


def test_drift_chart_shades_the_block_and_shows_the_same_class_in_both_splits(planted_vm):
    charts = {c["split"]: c for c in planted_vm["drift_charts"]}
    assert set(charts) == {"train", "test"}
    train = charts["train"]
    assert train["flagged"] and train["shade"] is not None
    plot = train["plot"]
    # The shaded band covers rows 0-40 of 400: it starts at the left edge, about a tenth wide.
    assert train["shade"]["x"] == pytest.approx(plot["x"], abs=15)
    assert 0.05 * plot["w"] < train["shade"]["w"] < 0.16 * plot["w"]
    assert [line["name"] for line in train["lines"]] == [
        line["name"] for line in charts["test"]["lines"]
    ]
    assert charts["test"]["shade"] is None


def test_class_chart_shares(planted_vm):
    chart = planted_vm["class_chart"]
    labels = [r["label"] for r in chart["rows"]]
    assert set(labels) == {"0", "1"}
    texts = {(r["label"], b["group"]): b["text"] for r in chart["rows"] for b in r["bars"]}
    train = pd.read_csv(SAMPLE / "planted_train.csv")
    assert texts[("1", "train")] == f"{100 * (train.label == 1).mean():.1f}%"


def test_num_formatting():
    assert html.num(None) == "–"
    assert html.num(1234567) == "1,234,567"
    assert html.num(0.098441) == "0.09844"
    assert html.num(299.28612) == "299.3"
    assert html.num(2.5e-7) == "2.500e-07"
    assert html.num(7.0) == "7"


# --- SVG geometry ---------------------------------------------------------------------------


def test_line_chart_points_stay_inside_the_plot():
    chart = svg.line_chart(
        [0, 50, 100], [("a", [0.0, 1.0, 0.5]), ("b", [None, 0.2, float("nan")])], y_range=(0.0, 1.0)
    )
    p = chart["plot"]
    for line in chart["lines"]:
        for pair in line["points"].split():
            x, y = map(float, pair.split(","))
            assert p["x"] <= x <= p["x"] + p["w"] and p["y"] <= y <= p["y"] + p["h"]
    assert len(chart["lines"][1]["points"].split()) == 1  # None and NaN are skipped
    assert [t["text"] for t in chart["y_ticks"]] == ["0", "0.25", "0.5", "0.75", "1"]


def test_bar_widths_are_proportional():
    chart = svg.bar_rows(["a", "b"], [("train", [0.25, 0.75])], width=640)
    w = [b["w"] for r in chart["rows"] for b in r["bars"]]
    assert w[1] == pytest.approx(3 * w[0])


# --- XSS -------------------------------------------------------------------------------------


def hostile_frames():
    rng = np.random.default_rng(1)
    n = 60
    cols = {p: rng.normal(size=n) for p in PAYLOADS}
    cols[PAYLOADS[0]][:3] = np.nan  # so a finding names this column
    cols["text"] = [PAYLOADS[i % 3] for i in range(n)]
    cols["label"] = [PAYLOADS[i % 2] for i in range(n)]
    train = pd.DataFrame(cols)
    test = train.iloc[:20].copy()
    test["label"] = PAYLOADS[2]  # an unseen class, named in a finding
    return train, test


@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory):
    train, test = hostile_frames()
    report = datavet.audit(train, test, target="label")
    assert any(p in f.message for f in report.findings for p in PAYLOADS)
    path = tmp_path_factory.mktemp("xss") / "hostile.html"
    report.save_html(path)
    return path, report


def test_payloads_are_escaped_in_the_html_text(hostile_page):
    path, _ = hostile_page
    text = path.read_text()
    for p in PAYLOADS:
        assert p not in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text
    assert len(re.findall(r"<script\b", text)) == 1
    assert '<script type="application/json" id="datavet-report">' in text
    embedded = text.split('id="datavet-report">', 1)[1].split("</script>", 1)[0]
    assert "<" not in embedded  # tojson escapes <, > and & inside the block
    assert json.loads(embedded)["tool"] == "datavet"
    assert "http://" not in text and "https://" not in text  # nothing to fetch: works offline


def test_payloads_are_inert_in_the_browser_dom(hostile_page):
    path, report = hostile_page
    dom = Elements(dump_dom(path))
    scripts = dom.tags("script")
    assert [s.get("type") for s in scripts] == ["application/json"]
    assert not [a for t, a in dom.elements if t == "img"]
    assert not dom.with_attr("onerror") and not dom.with_attr("onload")
    # every finding is still there, as text
    assert len(dom.with_attr("data-test-finding")) == len(report.findings)


# --- the page in Chromium ---------------------------------------------------------------------


def test_chromium_opens_the_sample_report(planted_report, tmp_path):
    page = tmp_path / "sample_audit.html"
    planted_report.save_html(page)
    dom = Elements(dump_dom(page))
    findings = dom.with_attr("data-test-finding")
    assert len(findings) == len(planted_report.findings)
    assert sorted(a["data-test-finding"] for _, a in findings) == sorted(
        f.code for f in planted_report.findings
    )
    verdict = dom.with_attr("data-test-verdict")
    assert verdict[0][1]["data-test-verdict"] == "failed"
    assert len(dom.with_attr("data-test-drift-chart")) == 2
    assert len(dom.with_attr("data-test-baseline")) == 3
    shot = screenshot(page, ROOT / "reports" / "sample_audit.png")
    assert shot.stat().st_size > 20_000
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_thousand_column_report_stays_under_five_megabytes():
    rng = np.random.default_rng(2)
    frame = pd.DataFrame(rng.normal(size=(200, 1000)), columns=[f"f{i}" for i in range(1000)])
    frame.iloc[:5, ::50] = np.nan  # 20 columns with findings
    frame["label"] = rng.integers(0, 2, 200)
    report = datavet.audit(frame, target="label", baselines=False)
    text = report.to_html()
    assert len(text.encode()) < 5_000_000
    vm = html.view_model(report.to_dict())
    assert [r["name"] for r in vm["tables"][0]["head"][:20]] == [
        f"f{i}" for i in range(0, 1000, 50)
    ]


def test_leakage_section_lists_time_ranges_and_group_overlap():
    rng = np.random.default_rng(1)
    n = 1000
    df = pd.DataFrame(
        {
            "when": pd.date_range("2024-01-01", periods=n, freq="h"),
            "patient_id": np.repeat(np.arange(200), 5),
            "a": rng.normal(size=n),
            "label": rng.integers(0, 2, n),
        }
    )
    train, test = df.iloc[:800], df.iloc[795:]  # patient 159 straddles, 5 old rows
    report = datavet.audit(train, test, target="label", group="patient_id")
    vm = html.view_model(report.to_dict())
    times = {t["split"]: t for t in vm["leakage"]["times"]}
    assert times["train"]["max"] == "2024-02-03 07:00:00"
    assert times["test"]["min"] == "2024-02-03 03:00:00"
    codes = [f["code"] for f in vm["leakage"]["findings"]]
    assert "S005" in codes and "S008" in codes and "S001" in codes
    text = report.to_html()
    assert "data-test-leakage" in text and "data-test-time-ranges" in text


def test_ignored_findings_are_listed_with_their_reason():
    report = datavet.audit(
        SAMPLE / "planted_train.csv",
        SAMPLE / "planted_test.csv",
        target="label",
        per_column_ignores={"x3": {"rules": ["F001"], "reason": "bias <input> on purpose"}},
    )
    vm = html.view_model(report.to_dict())
    (ignored,) = vm["ignored"]
    assert ignored["code"] == "F001" and ignored["columns"] == "x3"
    assert ignored["reason"] == "bias <input> on purpose"
    page = report.to_html()
    assert 'data-test-ignored-finding="F001"' in page
    assert "Ignored: bias &lt;input&gt; on purpose" in page
    assert 'data-test-finding="F001"' not in page  # not among the findings
