"""Reports in a Jupyter notebook: ``_repr_html_`` puts the whole HTML report in a sandboxed
``<iframe srcdoc>``. In real Chromium, a page that imitates a notebook exported to HTML (its own
fonts and colours) keeps its styles with a report cell in it, and the report's verdict is
visible inside the frame, styled by the report itself."""

from __future__ import annotations

import html
import re

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet import diagnose_curves

from .browser import dump_dom

NOTEBOOK = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>analysis.ipynb</title>
<style>
body {{ font-family: Georgia, serif; color: rgb(12, 34, 56); background: rgb(250, 245, 230); }}
h1, h2, p, section, div {{ font-family: Georgia, serif; color: rgb(12, 34, 56); }}
.jp-OutputArea-output {{ padding: 4px; }}
</style></head>
<body>
<h1 id="nb-title">My analysis</h1>
<div class="jp-Cell"><pre>report = datavet.audit(train, test, target="label")
report</pre>
<div class="jp-OutputArea-output">{cell}</div></div>
<p id="nb-after">Next cell: the notebook's own text.</p>
<script>
window.addEventListener("load", () => {{
  const out = document.body;
  for (const id of ["nb-title", "nb-after"]) {{
    const s = getComputedStyle(document.getElementById(id));
    out.setAttribute("data-" + id + "-font", s.fontFamily);
    out.setAttribute("data-" + id + "-colour", s.color);
  }}
  out.setAttribute("data-nb-background", getComputedStyle(document.body).backgroundColor);
  const frame = document.querySelector("iframe");
  const doc = frame.contentDocument;
  const verdict = doc.querySelector("[data-test-verdict]");
  const box = verdict.getBoundingClientRect();
  const style = doc.defaultView.getComputedStyle(verdict);
  out.setAttribute("data-verdict-text", verdict.textContent.replace(/\\s+/g, " ").trim());
  out.setAttribute("data-verdict-visible", String(
    box.width > 0 && box.height > 0 && box.top < frame.clientHeight &&
    style.visibility === "visible" && style.display !== "none"));
  out.setAttribute("data-verdict-font", style.fontFamily);
  out.setAttribute("data-frame-styles", String(doc.querySelectorAll("style").length));
  const found = doc.querySelectorAll("[data-test-finding]");
  out.setAttribute("data-frame-findings", String(found.length));
}});
</script>
</body></html>
"""


def notebook_page(tmp_path, cell: str):
    page = tmp_path / "analysis.html"
    page.write_text(NOTEBOOK.format(cell=cell), encoding="utf-8")
    dom = dump_dom(page)
    body = re.search(r"<body([^>]*)>", dom).group(1)
    return {k: html.unescape(v) for k, v in re.findall(r'data-([\w-]+)="([^"]*)"', body)}


@pytest.fixture(scope="module")
def report():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=60), "label": np.arange(60) % 2})
    df.loc[3, "x"] = np.nan
    return datavet.audit(df, target="label")


def test_repr_html_is_an_isolated_frame_holding_the_whole_report(report):
    cell = report._repr_html_()
    assert cell.startswith('<div class="datavet-report"><iframe srcdoc="')
    assert "<style" not in cell.replace("&lt;style", "")  # nothing styles the notebook's page
    assert "<script" not in cell.replace("&lt;script", "")
    assert 'sandbox="allow-same-origin allow-popups' in cell  # no allow-scripts
    assert html.unescape(re.search(r'srcdoc="([^"]*)"', cell).group(1)) == report.to_html()
    assert "failed (exit code 1)" in cell


def test_a_notebook_page_keeps_its_styles_and_shows_the_verdict(tmp_path, report):
    seen = notebook_page(tmp_path, report._repr_html_())
    for element in ("nb-title", "nb-after"):
        assert "Georgia" in seen[f"{element}-font"]
        assert seen[f"{element}-colour"] == "rgb(12, 34, 56)"
    assert seen["nb-background"] == "rgb(250, 245, 230)"
    assert seen["verdict-visible"] == "true"
    assert "Exit code 1" in seen["verdict-text"]
    assert "Georgia" not in seen["verdict-font"]  # the report keeps its own fonts
    assert int(seen["frame-styles"]) >= 1
    assert int(seen["frame-findings"]) == len(report.findings) >= 1


def test_curve_reports_render_in_a_notebook_too(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text("step,loss\n" + "".join(f"{i},{2.0 / (i + 1)}\n" for i in range(50)))
    cell = diagnose_curves(log)._repr_html_()
    seen = notebook_page(tmp_path, cell)
    assert seen["verdict-visible"] == "true"
    assert "Georgia" in seen["nb-after-font"]
