"""A rule that reports many columns as one finding (more than five columns with NaN or inf, two
or more constant columns): every output still speaks per column and in rows. JUnit fails the
testcase of each column, ``n_affected`` stays a number of rows (never the cells of several
columns added up), and a per-column ignore removes its column whether 5 or 50 others are
affected."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet.output import html, render


def nan_frame(k: int, *, columns: int = 8, n: int = 200, seed: int = 2) -> pd.DataFrame:
    """``columns`` normal columns, the first ``k`` of them with one NaN each (row 5 + i)."""
    rng = np.random.default_rng(seed)
    data = {f"c{i}": rng.normal(size=n) for i in range(columns)}
    for i in range(k):
        data[f"c{i}"][5 + i] = np.nan
    data["label"] = rng.integers(0, 2, n)
    return pd.DataFrame(data)


def junit_cases(report) -> dict[str, str]:
    """testcase name -> "fail", "skip" or "pass"."""
    root = ET.fromstring(render(report, "junit").encode("utf-8"))
    out = {}
    for case in root.iter("testcase"):
        if case.find("failure") is not None:
            out[case.get("name")] = "fail"
        elif case.find("skipped") is not None:
            out[case.get("name")] = "skip"
        else:
            out[case.get("name")] = "pass"
    return out


# --- JUnit: one testcase per column, failed when its column is in a grouped finding ----------


@pytest.mark.parametrize("k", [4, 6, 8])
def test_junit_fails_every_column_with_nan_however_many(k):
    report = datavet.audit(nan_frame(k), target="label", baselines=False, select=["V001"])
    cases = junit_cases(report)
    assert len(cases) == 8  # one per column evaluated: grouping adds no synthetic case
    expected = {f"V001 nan-values[c{i}]": "fail" if i < k else "pass" for i in range(8)}
    assert cases == expected
    suite = ET.fromstring(render(report, "junit").encode("utf-8")).find("testsuite")
    assert suite.get("tests") == "8" and suite.get("failures") == str(k)


def test_junit_fails_each_constant_column_of_a_grouped_finding():
    rng = np.random.default_rng(0)
    data = {f"k{i}": np.full(60, float(i)) for i in range(6)}
    data["x"] = rng.normal(size=60)
    data["label"] = rng.integers(0, 2, 60)
    report = datavet.audit(
        pd.DataFrame(data), target="label", baselines=False, select=["F001"], fail_on="warning"
    )
    (f,) = report.findings
    assert len(f.columns) == 6
    cases = junit_cases(report)
    assert cases == {
        **{f"F001 constant-feature[k{i}]": "fail" for i in range(6)},
        "F001 constant-feature[x]": "pass",
    }


# --- n_affected is rows, not cells --------------------------------------------------------


def test_all_nan_columns_do_not_count_more_rows_than_the_file_has():
    rng = np.random.default_rng(0)
    n = 100
    data = {f"c{i}": np.full(n, np.nan) for i in range(6)}
    data["x"] = rng.normal(size=n)
    data["label"] = rng.integers(0, 2, n)
    report = datavet.audit(pd.DataFrame(data), target="label", baselines=False, select=["V001"])
    (f,) = report.findings
    assert f.n_affected == 100  # rows, not the 600 cells
    assert f.metrics["cells"] == 600 and f.metrics["count[c3]"] == 100
    assert f.metrics["columns"] == 6
    payload = json.loads(report.to_json())
    assert payload["findings"][0]["n_affected"] == 100
    sarif = json.loads(render(report, "sarif"))
    assert sarif["runs"][0]["results"][0]["properties"]["n_affected"] == 100
    (item,) = html.view_model(report.to_dict())["groups"][0]["findings"]
    assert item["examples"] == "0, 1, 2, 3, 4 (+95 more)"  # every row: exact


def test_columns_with_nan_in_the_same_rows_count_those_rows_once():
    frame = nan_frame(0)
    for i in range(6):
        frame.loc[[3, 4, 5], f"c{i}"] = np.nan
    report = datavet.audit(frame, target="label", baselines=False, select=["V001"])
    (f,) = report.findings
    assert f.n_affected == 3 and f.examples == (3, 4, 5)
    assert f.metrics["cells"] == 18
    (item,) = html.view_model(report.to_dict())["groups"][0]["findings"]
    assert item["examples"] == "3, 4, 5"  # not "3, 4, 5 (+15 more)"


def test_scattered_nan_gives_a_true_lower_bound_said_as_such():
    rng = np.random.default_rng(7)
    n = 300
    frame = pd.DataFrame(rng.normal(size=(n, 30)), columns=[f"f{i}" for i in range(30)])
    mask = rng.random((n, 30)) < 0.02
    frame = frame.mask(mask)
    frame["label"] = rng.integers(0, 2, n)
    report = datavet.audit(frame, target="label", baselines=False, select=["V001"])
    (f,) = report.findings
    feats = frame.drop(columns="label")
    distinct_rows = int(feats.isna().any(axis=1).sum())
    cells = int(feats.isna().sum().sum())
    assert distinct_rows < cells  # the case where a sum of cells would overstate the rows
    assert int(feats.isna().sum().max()) <= f.n_affected <= distinct_rows
    assert f.metrics["cells"] == cells
    (item,) = html.view_model(report.to_dict())["groups"][0]["findings"]
    assert item["examples"].endswith(f"(at least {f.n_affected:,} in all)")
    assert "more)" not in item["examples"]
    page = report.to_html()
    assert f"at least {f.n_affected:,} in all" in page


# --- per-column ignores apply per column, before grouping ----------------------------------

IGNORE_C0 = {"c0": {"rules": ["V001"], "reason": "c0 is optional"}}


@pytest.mark.parametrize("k", [5, 6, 8])
def test_an_ignored_column_stays_ignored_whatever_the_number_of_others(k):
    report = datavet.audit(
        nan_frame(k, columns=max(k, 8)),
        target="label",
        baselines=False,
        select=["V001"],
        per_column_ignores=IGNORE_C0,
    )
    (ignored,) = report.ignored
    assert ignored.finding.columns == ("c0",) and ignored.reason == "c0 is optional"
    assert "Column 'c0' has 1 NaN" in ignored.finding.message
    left = [c for f in report.findings for c in f.columns]
    assert left == [f"c{i}" for i in range(1, k)]
    # as the rule reports them without c0: one finding each up to five, else one group
    if k - 1 <= 5:
        assert [f.columns for f in report.findings] == [(f"c{i}",) for i in range(1, k)]
    else:
        (f,) = report.findings
        assert f.message.startswith(f"{k - 1} columns have NaN/missing values in train: 'c1'")
        assert f.metrics["columns"] == k - 1 and "count[c0]" not in f.metrics
    (outcome,) = report.outcomes
    assert outcome.n_findings == len(report.findings)


def test_the_ignored_column_is_listed_in_every_format():
    report = datavet.audit(
        nan_frame(6), target="label", baselines=False, select=["V001"], per_column_ignores=IGNORE_C0
    )
    assert junit_cases(report)["V001 nan-values[c0]"] == "skip"
    text = render(report, "text")
    assert "ignored by per-column-ignores (1):" in text and "c0 is optional" in text
    findings = text.split("ignored by per-column-ignores")[0]
    assert "'c1'" in findings and "'c0'" not in findings
    sarif = json.loads(render(report, "sarif"))
    suppressed = [r for r in sarif["runs"][0]["results"] if r.get("suppressions")]
    assert [r["properties"]["columns"] for r in suppressed] == [["c0"]]
    vm = html.view_model(report.to_dict())
    assert [i["columns"] for i in vm["ignored"]] == ["c0"]
    flagged = {r["name"] for r in vm["tables"][0]["head"] if r["flagged"]}
    assert flagged == {f"c{i}" for i in range(1, 6)}


def test_ignoring_a_constant_column_regroups_the_others():
    rng = np.random.default_rng(0)
    data = {"k0": np.zeros(50), "k1": np.ones(50), "k2": np.full(50, 2.0)}
    data["x"] = rng.normal(size=50)
    data["label"] = rng.integers(0, 2, 50)
    frame = pd.DataFrame(data)
    ignore = {"k0": {"rules": ["F001"], "reason": "a bias input"}}
    report = datavet.audit(
        frame, target="label", baselines=False, select=["F001"], per_column_ignores=ignore
    )
    (f,) = report.findings
    assert f.columns == ("k1", "k2")
    assert f.message == "2 columns are constant in train: 'k1' (all 1.0), 'k2' (all 2.0)."
    (ignored,) = report.ignored
    assert ignored.finding.message == (
        "Column 'k0' is constant in train: all 50 non-missing values are 0.0."
    )
    # two of three ignored: the one left is reported as the rule reports a single column
    ignore["k1"] = {"rules": ["F001"], "reason": "a bias input"}
    report = datavet.audit(
        frame, target="label", baselines=False, select=["F001"], per_column_ignores=ignore
    )
    (f,) = report.findings
    assert f.message == "Column 'k2' is constant in train: all 50 non-missing values are 2.0."
    assert sorted(i.finding.columns for i in report.ignored) == [("k0",), ("k1",)]
