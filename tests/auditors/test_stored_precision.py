"""F001/F002 show a float16/float32 value as that precision writes it: what the user stored."""

import numpy as np
import pandas as pd

import datavet
from datavet.auditors.base import as_stored


def test_constant_and_near_constant_values_in_their_own_precision():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "b16": np.r_[np.full(2990, 0.1), np.full(10, 0.2)].astype(np.float16),
            "c32": np.full(3000, 0.1, np.float32),
            "x": rng.normal(size=3000),
            "label": rng.integers(0, 2, 3000),
        }
    )
    report = datavet.audit(frame, target="label", select=["F001", "F002"], baselines=False)
    by = {f.code: f for f in report.findings}
    assert "values are 0.1." in by["F001"].message
    assert "0.1 covers 99.7%" in by["F002"].message
    assert "0.0999" not in by["F002"].message and "0.10000000149" not in by["F001"].message


def test_as_stored_leaves_float64_and_other_values_alone():
    assert as_stored(0.1 + 0.2, "double") == 0.1 + 0.2
    assert as_stored("0.1", "halffloat") == "0.1"
    assert as_stored(float(np.float32(0.1)), "float") == 0.1
