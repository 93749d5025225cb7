"""B004's screen of many columns at once leaves the findings exactly as the exact test gives."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

import datavet
from datavet.auditors.order_feature_leakage import OrderFeatureLeakage


def _wide(n: int = 600, p: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(4)
    df = pd.DataFrame(rng.normal(size=(n, p)), columns=[f"f{i}" for i in range(p)])
    idx = np.arange(n, dtype=float)
    df["row_id"] = idx  # order 1.0
    df["near"] = idx + rng.normal(0, 1.5, n)  # |rho| just above 0.99
    df["below"] = idx + rng.normal(0, 40, n)  # |rho| just below 0.99
    df["gappy"] = np.where(rng.random(n) < 0.1, np.nan, idx)  # not screened: some NaN
    df["const"] = 1.0
    df["label"] = (idx > 350).astype(int)
    return df


def test_findings_equal_with_and_without_the_screen(monkeypatch):
    df = _wide()
    screened = datavet.audit(df, target="label", select="B004").findings
    monkeypatch.setattr(OrderFeatureLeakage, "_far_from_order", lambda *a, **k: set())
    exact = datavet.audit(df, target="label", select="B004").findings
    assert [f.to_dict() for f in screened] == [f.to_dict() for f in exact]
    assert {f.columns[0] for f in exact} == {"row_id", "near", "gappy"}


def test_the_screen_drops_only_columns_far_from_row_order():
    df = _wide()
    rule = OrderFeatureLeakage()
    table = pa.Table.from_pandas(df, preserve_index=False)
    far = rule._far_from_order(table, "label", np.zeros(len(df), bool))
    assert {f"f{i}" for i in range(300)} | {"below"} == far
