"""F003 scale-mismatch: numeric features' scales (RMS, offset included) differ >= 100x."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet import Severity

NAN, INF = float("nan"), float("inf")


def run(train, **kw):
    return datavet.audit(train, target="label", select="F003", **kw)


def pm(v: float, n: int = 4) -> list[float]:
    """[v, -v] * n: mean 0, population std v, so the scale (RMS) is exactly v."""
    return [v, -v] * n


def test_fires_at_100x_and_names_the_outlier():
    train = pd.DataFrame({"a": pm(1.0), "b": pm(100.0), "c": pm(2.0), "label": [0, 1] * 4})
    report = run(train)
    (f,) = report.findings
    assert (f.code, f.name, f.severity) == ("F003", "scale-mismatch", Severity.WARNING)
    assert f.split == "train"
    # median scale 2: 'b' (100) is 50x it; 'a' (1) is only 2x under it
    assert f.columns == ("b",) and f.n_affected == 1
    assert f.metrics["ratio"] == pytest.approx(100.0)
    assert f.metrics["median_scale"] == pytest.approx(2.0)
    assert f.metrics["scale[b]"] == pytest.approx(100.0)
    assert "100x" in f.message and "'a'" in f.message and "'b'" in f.message
    assert "median scale 2" in f.message and "50x the median" in f.message
    assert report.outcomes[0].status.value == "failed"


def test_quiet_at_50x():
    train = pd.DataFrame({"a": pm(1.0), "b": pm(50.0), "label": [0, 1] * 4})
    report = run(train)
    assert report.findings == []
    assert report.outcomes[0].status.value == "passed"


def test_names_small_and_large_outliers_farthest_first():
    # scales 0.01, 1, 1, 1, 1000: median 1; both ends are >= 10x away, 1000 is the farther
    train = pd.DataFrame(
        {
            "tiny": pm(0.01),
            "a": pm(1.0),
            "b": pm(1.0),
            "c": pm(1.0),
            "huge": pm(1000.0),
            "label": [0, 1] * 4,
        }
    )
    (f,) = run(train).findings
    assert f.columns == ("huge", "tiny") and f.n_affected == 2
    assert f.metrics["ratio"] == pytest.approx(1e5)
    assert f.metrics["median_scale"] == pytest.approx(1.0)


def test_the_offset_counts_in_the_scale():
    # 'a' has std 1 but mean 1000: the network is fed numbers near 1000
    train = pd.DataFrame({"a": [999.0, 1001.0] * 3, "b": pm(1.0, 3), "label": [0, 1] * 3})
    (f,) = run(train).findings
    assert f.metrics["ratio"] == pytest.approx(math.sqrt(1000.0**2 + 1.0))


def test_message_numbers_avoid_scientific_notation():
    # fmt() promises "no scientific notation for ordinary sizes": a ratio of ~1000 is ordinary.
    train = pd.DataFrame({"a": [999.0, 1001.0] * 3, "b": pm(1.0, 3), "label": [0, 1] * 3})
    (f,) = run(train).findings
    assert "e+" not in f.message, f.message


def test_bool_constant_all_missing_and_infinite_values_are_left_out():
    train = pd.DataFrame(
        {
            "a": pm(1.0),
            "b": pm(3.0),
            "const": [1e6] * 8,  # constant: no scale to compare
            "flag": [True, False] * 4,
            "empty": [NAN] * 8,
            "with_inf": [2.0, -2.0, INF, -INF, 2.0, -2.0, 2.0, -2.0],  # finite part: scale 2
            "label": [0, 1] * 4,
        }
    )
    report = run(train)
    assert report.findings == []
    assert report.outcomes[0].status.value == "passed"


def test_skipped_with_fewer_than_two_numeric_features():
    train = pd.DataFrame({"a": pm(1.0), "s": ["x", "y"] * 4, "label": [0, 1] * 4})
    report = run(train)
    (o,) = report.outcomes
    assert o.status.value == "skipped" and "need 2" in o.reason


def test_the_target_is_not_a_feature():
    train = pd.DataFrame({"a": pm(1.0), "b": pm(2.0), "label": [0.0, 1e6] * 4})
    assert run(train).findings == []


def test_the_planted_table(planted):
    train, _ = planted
    scales = {}
    for name in ("x0", "x1", "x2"):  # x3 is constant
        v = train[name].dropna().to_numpy()
        scales[name] = math.sqrt(v.mean() ** 2 + v.std() ** 2)
    median = statistics.median(scales.values())
    expected = tuple(n for n, s in scales.items() if s >= 10 * median or 10 * s <= median)
    (f,) = run(train).findings
    assert expected == ("x0",)
    assert f.columns == expected
    assert f.metrics["ratio"] == pytest.approx(max(scales.values()) / min(scales.values()))
    assert f.metrics["median_scale"] == pytest.approx(median)
    assert "'x0'" in f.message and "'x2'" in f.message  # x2 is the smallest scale


def test_threshold_override():
    train = pd.DataFrame({"a": pm(1.0), "b": pm(50.0), "label": [0, 1] * 4})
    (f,) = run(train, thresholds={"F003": {"min_ratio": 40}}).findings
    assert f.metrics["ratio"] == pytest.approx(50.0)
    assert np.isfinite(f.metrics["median_scale"])


def test_near_constant_column_is_not_a_scale_outlier():
    # 99.9% zeros: its RMS (0.03) is small because it hardly varies; F002 reports it
    n = 2000
    rng = np.random.default_rng(0)
    sparse = np.zeros(n)
    sparse[:2] = 1.0
    train = pd.DataFrame(
        {
            "a": rng.normal(0, 1, n),
            "b": rng.normal(0, 2, n),
            "c": rng.normal(0, 3, n),
            "sparse": sparse,
            "label": rng.integers(0, 2, n),
        }
    )
    assert run(train).findings == []
    codes = [f.code for f in datavet.audit(train, target="label", select=["F002", "F003"]).findings]
    assert codes == ["F002"]
    # a real unit difference next to it is still named, without the sparse column
    train["big"] = rng.normal(0, 1000, n)
    (f,) = run(train).findings
    assert f.columns == ("big",)
