"""V007 sentinel-values on (N, F) feature tensors (torch tensors, .npy files): a spike at a
placeholder (-999, 0, 9999) far outside a feature's other values fires with exact counts, as
on the same data as a table; NaN twins, real zeros and images stay quiet."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet.auditors.sentinel_values import sentinel_shaped
from datavet.scan.tensor_block import TensorPlan, fold, profile_block
from datavet.scan.tensor_layout import resolve_layout
from datavet.scan.tensor_values import SENTINELS, RawSample, sentinel_counts


def features(n=4000, f=10, seed=0, integral=False):
    rng = np.random.default_rng(seed)
    x = rng.normal(50, 10, (n, f))
    return np.round(x) if integral else x


def plant(x, col=3, value=-999.0, share=0.05, seed=1):
    x = x.copy()
    hit = np.random.default_rng(seed).random(len(x)) < share
    x[hit, col] = value
    return x, np.flatnonzero(hit)


def run(x, torch, **kw):
    y = np.random.default_rng(9).integers(0, 2, len(x))
    # a dict keeps the (N, D) tensor path (an (X, y) tuple of tensors is read as a table)
    return datavet.audit({"inputs": torch.tensor(x), "label": torch.tensor(y)}, select="V007", **kw)


def test_a_placeholder_in_one_feature_fires_with_exact_counts_and_rows(torch):
    x, rows = plant(features())
    (f,) = run(x, torch).findings
    assert f.code == "V007" and f.columns == ("x3",) and f.split == "train"
    assert f.n_affected == len(rows) and f.metrics["value"] == -999
    assert f.metrics["share"] == pytest.approx(len(rows) / len(x))
    assert f.examples == tuple(int(r) for r in rows[:5])
    assert f.message.startswith(f"Feature 'x3' in train has -999 in {len(rows):,} rows (")
    assert "at least" not in f.message and "placeholder" in f.message


@pytest.mark.parametrize("twin", ["nan", "none"])
def test_the_healthy_twin_is_quiet(torch, twin):
    x = features()
    if twin == "nan":
        x, _ = plant(x, value=np.nan)
    assert run(x, torch).findings == []


def test_a_zero_inside_a_features_spread_is_quiet(torch):
    x = features(integral=True)
    x[:, 5] = np.round(np.random.default_rng(3).normal(0, 3, len(x)))  # 0: the commonest value
    assert run(x, torch).findings == []


def test_a_zero_placeholder_and_9999_fire(torch):
    x = features()
    x[:, 1] += 50  # blood pressure around 100: a 0 there is no reading
    x, _ = plant(x, col=1, value=0.0)
    x, _ = plant(x, col=6, value=9999.0, seed=2)
    (f,) = run(x, torch).findings
    assert f.columns == ("x1", "x6") and "2 columns" in f.message


def test_images_with_many_black_pixels_are_quiet(torch):
    rng = np.random.default_rng(4)
    img = rng.uniform(0.2, 1.0, (500, 28, 28))
    img[:, :, :6] = 0.0  # a black margin: 0 is a pixel value, not missing data
    img[rng.random(500) < 0.3] *= rng.random((28, 28)) > 0.5
    assert run(img, torch).findings == []


def test_a_npy_file_fires_too(tmp_path):
    x, rows = plant(features())
    np.save(tmp_path / "x.npy", x.astype(np.float32))
    (f,) = datavet.audit(tmp_path / "x.npy", select="V007").findings
    assert f.columns == ("x3",) and f.n_affected == len(rows)


def test_wide_features_pooled_for_the_baselines_still_fire(torch):
    # 300 features: the baselines' sample holds group means, V007 reads the raw-row sample
    x, rows = plant(features(n=3000, f=300), col=217)
    (f,) = run(x, torch).findings
    assert f.columns == ("x217",) and f.n_affected == len(rows)
    assert f.examples == tuple(int(r) for r in rows[:5])
    assert run(features(n=3000, f=300), torch).findings == []


def test_counts_stay_exact_over_many_blocks(torch):
    # 120,000 x 3 floats: several blocks, each with far more distinct values than the exact
    # value counter keeps (the table path says "at least" here)
    x, rows = plant(features(n=120_000, f=3), col=0, share=0.02)
    (f,) = run(x, torch, baselines=False).findings
    assert f.n_affected == len(rows) and "at least" not in f.message


def test_whole_number_features_and_the_test_split(torch):
    # int64 incomes (thousands of distinct values) with -1 for "unknown", in the test split
    rng = np.random.default_rng(5)
    train = np.round(rng.normal(50_000, 5000, (3000, 4))).astype(np.int64)
    test = np.round(rng.normal(50_000, 5000, (2000, 4))).astype(np.int64)
    test[::25, 2] = -1
    y = torch.tensor(rng.integers(0, 2, 3000)), torch.tensor(rng.integers(0, 2, 2000))
    report = datavet.audit(
        {"inputs": torch.tensor(train), "label": y[0]},
        {"inputs": torch.tensor(test), "label": y[1]},
        select="V007",
        baselines=False,
    )
    (f,) = report.findings
    assert (f.split, f.columns, f.n_affected) == ("test", ("x2",), 80)
    assert f.examples == (0, 25, 50, 75, 100) and f.metrics["value"] == -1


def test_numbers_match_the_table_path(torch):
    x, _ = plant(features(integral=True), col=2, value=-99.0, share=0.04)
    y = np.random.default_rng(9).integers(0, 2, len(x))
    frame = pd.DataFrame({f"x{j}": x[:, j] for j in range(x.shape[1])} | {"label": y})
    (table,) = datavet.audit(frame, target="label", select="V007").findings
    (tensor,) = run(x, torch).findings
    assert table.columns == tensor.columns == ("x2",)
    assert table.metrics == tensor.metrics
    assert (table.n_affected, table.examples) == (tensor.n_affected, tensor.examples)
    assert tensor.message == table.message.replace("Column", "Feature", 1)


# --- the scan: exact counts and the raw sample merge over blocks ----------------------------


def test_sentinel_values_are_sentinel_shaped_and_counted_exactly():
    assert all(sentinel_shaped(float(v)) for v in SENTINELS) and len(set(SENTINELS)) == 30
    col = np.array([0.0, -1.0, -999.0, 999.0, 99.5, 9.0, -99.0, np.nan, np.inf, -999.0, 0.0])
    got = dict(zip(SENTINELS.tolist(), sentinel_counts(col).tolist()))
    assert {k: v for k, v in got.items() if v} == {0.0: 2, -1.0: 1, -999.0: 2, 999.0: 1, -99.0: 1}
    counts = {0.0: 2, -1: 1, -999.0: 2, 999: 1, -99.0: 1, 5.0: 3}
    assert (sentinel_counts(col, counts) == sentinel_counts(col)).all()


@pytest.mark.parametrize("f", [6, 300])
def test_block_profiles_merge_to_the_whole(f):
    x, _ = plant(features(n=6000, f=f, integral=True), col=2, value=-999.0)
    x[::7, 1] = 0.0
    plan = TensorPlan(resolve_layout((f,), "float64"))
    whole = profile_block(x, None, 0, plan, "train").tensor
    cuts = [0, 333, 1000, 1001, 6000]
    parts = fold(profile_block(x[a:b], None, a, plan, "train") for a, b in zip(cuts, cuts[1:]))
    assert (parts.tensor.sentinels == whole.sentinels).all()
    assert whole.sentinels[2, np.searchsorted(SENTINELS, -999.0)] == (x[:, 2] == -999).sum()
    if f <= 256:
        assert whole.raw is None and parts.tensor.raw is None  # the baselines' sample is raw
    else:
        assert whole.raw is not None and parts.tensor.raw is not None
        assert len(whole.raw.rows) == whole.raw.capacity == 4166
        assert (parts.tensor.raw.rows == whole.raw.rows).all()
        assert (parts.tensor.raw.values == whole.raw.values).all()
        assert (whole.raw.values == x[whole.raw.rows]).all()


def test_raw_sample_keeps_rows_in_order_and_merges_in_any_grouping():
    x = np.arange(200.0).reshape(100, 2)
    a = RawSample.of(x[:40], 0, 30).merge(RawSample.of(x[40:], 40, 30))
    b = RawSample.of(x, 0, 30)
    assert (a.rows == b.rows).all() and (np.diff(a.rows) > 0).all() and len(a.rows) == 30
    assert (a.values == x[a.rows]).all()
