"""Values at the edges of float64: 64-bit integers beyond 2**53 (IDs, hashes) stay distinct, and
columns near 1e200 keep a standard deviation (their sum of squares overflows float64)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet.scan.moments import Moments


def codes(report) -> list[str]:
    return sorted(f.code for f in report.findings)


def test_distinct_int64_ids_beyond_2_53_are_not_copies():
    n = 200
    train = pd.DataFrame({"a": np.int64(2**60) + 2 * np.arange(n), "b": np.full(n, 1.5)})
    test = pd.DataFrame({"a": np.int64(2**60) + 2 * np.arange(50) + 1, "b": np.full(50, 1.5)})
    report = datavet.audit(train, test, baselines=False)
    assert not {"S001", "S002", "S003"} & set(codes(report)), report.findings


def test_distinct_uint64_values_are_neither_constant_nor_repeated():
    n = 200
    frame = pd.DataFrame(
        {"u": np.uint64(2**64 - 1) - np.arange(n, dtype=np.uint64), "y": np.arange(n) % 2}
    )
    report = datavet.audit(frame, target="y", baselines=False)
    assert not {"F001", "S002", "S003"} & set(codes(report)), report.findings
    column = next(c for c in report.to_dict()["datasets"]["train"]["columns"] if c["name"] == "u")
    assert column["distinct"] == n


def test_a_wide_integer_equals_the_same_value_as_a_float():
    """2**60 + k * 2**11 is exact in float64: the int64 and float64 columns hold one value."""
    n = 100
    ints = np.int64(2**60) + 2**11 * np.arange(n)
    train = pd.DataFrame({"a": ints, "b": np.arange(n) * 1.0})
    test = pd.DataFrame({"a": ints[:30].astype(float), "b": np.arange(30) * 1.0})
    report = datavet.audit(train, test, baselines=False)
    s001 = next(f for f in report.findings if f.code == "S001")
    assert s001.n_affected == 30


def test_repeated_wide_integers_are_still_repeats():
    a = np.int64(2**62) + np.array([1, 3, 1, 5, 3, 7] * 20)
    frame = pd.DataFrame({"a": a, "y": np.arange(len(a)) % 2})
    report = datavet.audit(frame, target="y", baselines=False)
    found = {f.code: f.n_affected for f in report.findings}
    # (a, y) repeats every 6 rows with 5 distinct pairs; a = 2**62 + 3 has both labels
    assert found == {"S002": len(a) - 5, "S003": 40}


@pytest.mark.parametrize("scale", [1e150, 1e154, 1e200, 1e300])
def test_huge_columns_keep_their_std_and_their_scale_finding(scale):
    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame(
        {"h": rng.normal(size=n) * scale, "x": rng.normal(size=n), "y": np.arange(n) % 2}
    )
    report = datavet.audit(frame, target="y", baselines=False)
    column = next(c for c in report.to_dict()["datasets"]["train"]["columns"] if c["name"] == "h")
    assert column["std"] == pytest.approx(np.std(frame["h"] / scale) * scale, rel=1e-9)
    assert "F003" in codes(report)


@pytest.mark.parametrize("scale", [1.0, 1e160, 1e250, 1e307])
def test_moments_merged_in_batches_match_one_pass(scale):
    rng = np.random.default_rng(1)
    x = rng.normal(size=1000) * scale + 0.3 * scale
    merged = Moments()
    for part in np.array_split(x, 7):
        merged = merged.merge(Moments.of(part))
    want = np.std(x / scale) * scale
    assert merged.std == pytest.approx(want, rel=1e-12)
    assert Moments.of(x).std == pytest.approx(want, rel=1e-12)
    assert merged.mean == pytest.approx(np.mean(x / scale) * scale, rel=1e-12)


def test_moments_at_the_float_limit():
    x = np.array([1.7e308, -1.7e308] * 5)
    merged = Moments.of(x[:5]).merge(Moments.of(x[5:]))
    assert merged.std == pytest.approx(1.7e308, rel=1e-12)
    assert Moments.of(x).std == pytest.approx(1.7e308, rel=1e-12)
    assert merged.variance == float("inf")
