"""L004 on a regression target far from zero: the shift is judged against the spread, not
against the size of the mean (a target near 1e9 with std 1 that moves by 0.6 has moved)."""

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet.auditors.label_shift import _by


def _splits(offset: float):
    rng = np.random.default_rng(14)
    n1, n2 = 3000, 1000
    a = rng.normal(0, 1, n1) + offset
    # 8% of test targets come from a second mode six units up: d about 0.45
    b = np.where(rng.random(n2) < 0.08, rng.normal(6, 1, n2), rng.normal(0, 1, n2)) + offset
    train = pd.DataFrame({"x": rng.normal(size=n1), "label": a})
    test = pd.DataFrame({"x": rng.normal(size=n2), "label": b})
    return train, test


@pytest.mark.parametrize("offset", [0.0, 1e6, 1e9])
def test_mean_shift_found_at_any_offset(offset):
    train, test = _splits(offset)
    report = datavet.audit(
        train, test, target="label", select=["L004"], baselines=False, task="regression"
    )
    (finding,) = report.findings
    assert finding.metrics["cohens_d"] == pytest.approx(0.45, abs=0.02)
    assert finding.metrics["p_value"] < 1e-15


def test_constant_targets_a_rounding_apart_stay_silent():
    n = 4000
    train = pd.DataFrame({"x": np.arange(n, dtype=float), "label": np.full(n, 1e9 + 0.1)})
    test = pd.DataFrame({"x": np.arange(n, dtype=float), "label": np.full(n, 1e9 + 0.1)})
    # the last bits of one split's target differ (as merged per-batch moments can)
    test.loc[::7, "label"] = np.nextafter(1e9 + 0.1, 2e9)
    report = datavet.audit(
        train, test, target="label", select=["L004"], baselines=False, task="regression"
    )
    assert report.findings == []


def test_shift_printed_when_the_values_print_alike():
    assert _by(999_999_999.98, 1_000_000_000.24) == " (+0.26)"
    assert _by(1_000_000_000.24, 999_999_999.98) == " (-0.26)"
    assert _by(1.0, 2.0) == ""
