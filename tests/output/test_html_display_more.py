"""What the HTML page (and the step summary) shows of awkward data: class labels that only
differ at their end, line breaks and tabs in names, values of 100,000 characters, many columns
in one finding; the "fix first" list, a constant column's std, non-finite steps on the curves
page, the dataset's name, and a preflight that stopped at the data stage."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet.output import github, html, html_curves, render, svg
from datavet.output.text import clean

from .browser import dump_dom

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"


class Cells(HTMLParser):
    """The text of every element with a given class (nested tags included)."""

    def __init__(self, text: str, css: str) -> None:
        super().__init__(convert_charrefs=True)
        self.css, self.depth, self.found = css, 0, []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if self.depth:
            self.depth += 1
        elif self.css in (dict(attrs).get("class") or "").split():
            self.depth = 1
            self.found.append("")

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.found[-1] += data


# --- class labels ----------------------------------------------------------------------------


def test_long_class_labels_stay_distinct_and_keep_their_full_value_as_a_tooltip():
    rng = np.random.default_rng(6)
    n = 400
    labels = np.array(
        [f"{kind} review of the product page" for kind in ("positive", "negative", "neutral")],
        dtype=object,
    )
    frame = pd.DataFrame(
        {"x": rng.normal(size=n), "label": rng.choice(labels, n, p=[0.5, 0.3, 0.2])}
    )
    chart = html.view_model(datavet.audit(frame, target="label").to_dict())["class_chart"]
    shown = [r["label"] for r in chart["rows"]]
    assert len(set(shown)) == 3
    assert all(len(s) <= svg.LABEL_CHARS for s in shown)
    assert {r["title"] for r in chart["rows"]} == set(labels)
    assert shown[0].startswith("positive") and shown[0].endswith("product page")
    # the label column is wide enough for the shortened labels (the text ends at label_x)
    assert chart["label_x"] >= svg.LABEL_CHARS * svg.CHAR_PX


def test_labels_that_differ_only_at_the_end_or_in_the_middle_are_told_apart():
    ends = ["c" * 100_000 + "1", "c" * 100_000 + "2"]
    assert len(set(svg.short_labels(ends))) == 2
    middles = ["a" * 20 + "X" + "b" * 40, "a" * 20 + "Y" + "b" * 40]
    short = svg.short_labels(middles)
    assert len(set(short)) == 2 and all(len(s) <= svg.LABEL_CHARS for s in short)
    same = ["q" * 20 + "X" + "q" * 40 + "1", "q" * 20 + "Y" + "q" * 40 + "1"]
    assert len(set(svg.short_labels(same))) == 2
    assert svg.short_labels(["0", "1"]) == ["0", "1"]


# --- line breaks, tabs and line separators in data -------------------------------------------

NAMES = ["a\nb", "a b", "a\tb", "a\u2028b"]


@pytest.fixture(scope="module")
def newline_report():
    rng = np.random.default_rng(1)
    n = 200
    frame = pd.DataFrame({name: rng.normal(size=n) for name in NAMES})
    frame["label"] = rng.integers(0, 2, n)
    frame.loc[:2, "a\nb"] = np.nan
    return datavet.audit(frame, target="label", baselines=False)


def test_line_breaks_and_tabs_are_escapes_in_the_html(newline_report, tmp_path):
    page = newline_report.to_html()
    names = Cells(page, "name").found
    assert names == ["a\\nb", "a b", "a\\tb", "a\\u2028b"]
    (head,) = Cells(page, "where").found
    assert head.endswith("a\\nb")
    assert "\u2028" not in page
    # and so Chromium shows them (its DOM after parsing the page)
    path = tmp_path / "nl.html"
    path.write_text(page, encoding="utf-8")
    assert Cells(dump_dom(path), "name").found == names


def test_line_breaks_are_escapes_in_the_step_summary_and_the_text(newline_report):
    summary = github.summary(newline_report)
    (row,) = [line for line in summary.splitlines() if "nan-values" in line]
    assert "| a\\\\nb |" in row  # Markdown for the text a\nb
    assert github.md("a\tb\u2029c") == "a\\\\tb\\\\u2029c"
    assert clean("x\u2028y\x85z") == "x\\u2028y\\x85z"
    text = render(newline_report, "text")
    assert "\u2028" not in text


# --- long values, many columns, types -------------------------------------------------------


@pytest.fixture(scope="module")
def long_page(tmp_path_factory):
    rng = np.random.default_rng(5)
    n = 300
    long = "A" * 100_000
    data = {long: rng.normal(size=n), "b" + long: rng.normal(size=n)}
    data[long][:3] = np.nan
    data["cat"] = pd.Categorical(rng.choice(["x" * 100_000, "y"], n))
    data["label"] = rng.integers(0, 2, n)
    report = datavet.audit(pd.DataFrame(data), target="label", baselines=False)
    path = tmp_path_factory.mktemp("long") / "long.html"
    report.save_html(path)
    return report, path.read_text(encoding="utf-8"), path


def test_long_names_and_values_are_capped_on_the_page(long_page):
    report, page, _ = long_page
    visible = page.split('<script type="application/json"', 1)[0]  # the JSON block has all
    assert "A" * (html.TEXT_LIMIT + 1) not in visible
    assert "x" * (html.TEXT_LIMIT + 1) not in visible
    assert "(99,800 more characters)" in visible
    names = Cells(page, "name").found
    assert max(len(n) for n in names) < html.NAME_LIMIT + 40
    assert len(page) < 1_500_000  # 100k-character names no longer repeat in full


def test_long_values_can_wrap():
    css = resources.files("datavet.output").joinpath("templates/report.css").read_text("utf-8")
    rule = re.search(r"([^}]*)\{\s*overflow-wrap:\s*anywhere", css)
    assert rule is not None
    for selector in (".finding", ".fixfirst", "td.name", "td.text"):
        assert selector in rule.group(1)


def test_a_categorical_column_shows_a_short_type(long_page):
    report, page, _ = long_page
    vm = html.view_model(report.to_dict())
    cat = next(r for r in vm["tables"][0]["head"] + vm["tables"][0]["tail"] if r["name"] == "cat")
    assert cat["dtype"] == "category"
    assert cat["dtype_full"].startswith("dictionary<")
    assert 'title="dictionary&lt;values=' in page and ">category</td>" in page


def test_many_columns_in_one_finding_are_listed_five_then_folded():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(50, 40)), columns=[f"p{i}" for i in range(40)])
    frame.iloc[:3, :30] = np.nan
    frame["label"] = rng.integers(0, 2, 50)
    report = datavet.audit(frame, target="label", baselines=False, select=["V001"])
    vm = html.view_model(report.to_dict())
    (item,) = vm["groups"][0]["findings"]
    assert item["columns_shown"] == [f"p{i}" for i in range(5)]
    assert item["columns_more"] == 25 and len(item["columns_all"]) == 30
    page = report.to_html()
    (head,) = Cells(page, "where").found
    assert head.endswith("p0, p1, p2, p3, p4 (+25 more)")
    assert 'data-test-all-columns="30"' in page and "p29" in page
    (fix,) = Cells(page, "fixfirst").found
    assert "(p0, p1, p2, p3, p4 and 25 more)" in fix and "p5" not in fix


# --- fix first -------------------------------------------------------------------------------


def test_fix_first_says_which_rules_are_below_it():
    report = datavet.audit(SAMPLE / "planted_train.csv", SAMPLE / "planted_test.csv")
    vm = html.view_model(report.to_dict())
    assert [f["code"] for f in vm["fix_first"]] == ["S001", "V001", "F001"]
    assert [f["code"] for f in vm["fix_first_more"]] == ["F003", "L002"]
    rules = {f.code for f in report.findings}
    assert {f["code"] for f in vm["fix_first"] + vm["fix_first_more"]} == rules
    page = report.to_html()
    assert 'data-test-fix-first-more="2"' in page
    assert "2 more rules with findings below" in page


# --- a constant column's std ---------------------------------------------------------------


def test_a_constant_column_has_a_std_of_exactly_zero():
    n = 1000
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "c": np.full(n, 0.02),
            "d": np.full(n, 0.1),
            "e": np.r_[np.full(n - 3, 0.1), [np.nan, np.inf, np.nan]],
            "x": rng.normal(size=n),
            "label": rng.integers(0, 2, n),
        }
    )
    report = datavet.audit(frame, target="label", baselines=False)
    std = {c["name"]: c["std"] for c in report.to_dict()["datasets"]["train"]["columns"]}
    assert std["c"] == 0.0 and std["d"] == 0.0 and std["e"] == 0.0
    assert std["x"] > 0.5
    rows = {r["name"]: r for r in html.view_model(report.to_dict())["tables"][0]["head"]}
    assert rows["d"]["std"] == "0"


# --- non-finite steps on the curves page ----------------------------------------------------


def test_one_nonfinite_label_per_run_of_steps():
    report = datavet.diagnose_curves(SAMPLE / "curves" / "nonfinite.csv")
    view = html_curves.view(report.to_dict())
    charts = {c["key"]: c for c in view["charts"]}
    loss = charts["loss"]["nonfinite"]
    assert len(loss) == 1  # not one "nan" per step, piled up at steps 150-160
    (label,) = loss
    assert label["value"] == "nan" and label["step"] == "151"
    assert "training loss is nan from step 151 to the end of the log" in label["title"]
    assert "validation loss is nan from step 160" in label["title"]
    page = report.to_html()
    assert len(re.findall(r"data-test-nonfinite=", page)) == sum(
        len(c["nonfinite"]) for c in view["charts"]
    )


def test_separate_runs_get_separate_labels():
    steps = [float(s) for s in range(0, 200)]
    loss = [1.0] * 200
    for s in (20, 21, 22, 150):
        loss[s] = None
    data = {
        "curves": {
            "step_from": "step",
            "series": {"step": steps, "train_loss": loss},
            "nonfinite": [
                {"series": "train_loss", "step": s, "value": "nan"} for s in (20.0, 21.0, 22.0)
            ]
            + [{"series": "train_loss", "step": 150.0, "value": "inf"}],
        }
    }

    def px(step):
        return 50 + step * 3

    labels = html_curves._nonfinite(data["curves"], ["train_loss"], px)
    assert [(lb["step"], lb["value"]) for lb in labels] == [("20", "nan"), ("150", "inf")]
    assert labels[0]["title"] == "training loss is nan from step 20; finite again at step 23"
    assert labels[1]["title"] == "training loss is inf at step 150"


# --- the dataset's name ----------------------------------------------------------------------


def test_the_page_of_a_named_dataset_says_its_name():
    report = datavet.audit(SAMPLE / "clean_train.csv", target="label", baselines=False)
    page = html.render(report, name="a/b")
    title = re.search(r"<title>([^<]*)</title>", page).group(1)
    heading = re.search(r"<h1>([^<]*)</h1>", page).group(1)
    assert title.startswith("datavet audit a/b: ") and "clean_train.csv" in title
    assert heading == "datavet audit: dataset a/b"
    other = html.render(report, name="a b")
    assert re.search(r"<title>([^<]*)</title>", other).group(1).startswith("datavet audit a b: ")
    # without a name, as before
    assert "<h1>datavet audit</h1>" in html.render(report)


# --- preflight: a stage that was not run shows no numbers ----------------------------------


def test_a_preflight_stopped_at_the_data_stage_shows_no_baselines():
    torch = pytest.importorskip("torch")
    from torch import nn

    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 4))
    train = pd.DataFrame(x, columns=["a", "b", "c", "d"]).assign(label=(x[:, 0] > 0).astype(int))
    test = train.iloc[:50]  # every test row is in train: the data stage fails
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    report = datavet.preflight(
        model, train, test, target="label", loss_fn=nn.functional.cross_entropy
    )
    assert [s["verdict"] for s in report.stages] == ["failed", "not run", "not run", "not run"]
    assert report.baselines is None
    assert not [f for f in report.findings if f.code.startswith("B")]
    b_rules = [o for o in report.outcomes if o.code.startswith("B")]
    assert b_rules and all(o.status.value == "skipped" for o in b_rules)
    assert all("the data audit stage failed" in o.reason for o in b_rules)
    text = render(report, "text")
    assert "baselines (classification" not in text and "initial loss expected" not in text
    page = report.to_html()
    assert "Baselines: what a network must beat" not in page
    assert 'data-test-stage-verdict="failed"' in page
    assert page.count('data-test-stage-verdict="not run"') == 3


def test_a_training_logs_page_speaks_of_the_run_not_of_training_next(tmp_path):
    from datavet.cli import main

    for log, title in (
        ("lr_too_high.csv", "Problems in this training run"),
        ("healthy.csv", "No problem found in this training run"),
    ):
        page = tmp_path / f"{log}.html"
        main(["curves", f"sample_data/curves/{log}", "--html", str(page)])
        html = page.read_text()
        assert title in html and "ready to train" not in html.lower()
        assert "feature columns" not in html
