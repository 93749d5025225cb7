"""Moments of values so small that their squares underflow (near 1e-160 and below): the spread
is taken in units of a power of two, as it is for values near 1e300."""

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet.scan.moments import Moments


@pytest.mark.parametrize("size", [1e-300, 1e-200, 1e-160])
def test_std_of_tiny_values(size):
    x = np.random.default_rng(8).normal(0, size, 5000)
    exact = float(np.std(x.astype(np.longdouble)))
    assert Moments.of(x).std == pytest.approx(exact, rel=1e-9)
    merged = Moments.of(x[:2000]).merge(Moments.of(x[2000:]))
    assert merged.std == pytest.approx(exact, rel=1e-9)


def test_constant_values_keep_a_spread_of_zero():
    assert Moments.of(np.full(10, 1e-300)).std == 0.0
    assert Moments.of(np.full(10, 0.1)).std == 0.0


def test_scale_mismatch_past_float64s_range_is_printed_as_a_power_of_ten():
    rng = np.random.default_rng(8)
    n = 5000
    frame = pd.DataFrame(
        {
            "small": rng.normal(0, 1e-300, n),
            "big": rng.normal(0, 1, n) * 1e300,
            "one": rng.normal(0, 1, n),
            "label": rng.integers(0, 2, n),
        }
    )
    (f,) = datavet.audit(frame, target="label", select=["F003"], baselines=False).findings
    assert "differ about 1e600x" in f.message
    assert "'small' at 1.01e-300" in f.message  # its std, not its mean
