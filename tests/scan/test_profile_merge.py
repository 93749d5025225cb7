"""The Profile of a table equals the merge of the profiles of any split of it into batches."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from datavet.scan import Moments, Profile, ScanPlan, ValueCounter
from datavet.scan.labels import PositionBins, bin_width

PLAN = ScanPlan(target="label", hash_columns=("a", "b", "s"), sample_rows=16)

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
value = st.one_of(
    finite, st.just(float("nan")), st.just(float("inf")), st.just(-float("inf")), st.none()
)


@st.composite
def tables(draw):
    n = draw(st.integers(1, 120))
    a = draw(st.lists(value, min_size=n, max_size=n))
    b = draw(st.lists(st.one_of(st.integers(-3, 3), st.none()), min_size=n, max_size=n))
    s = draw(
        st.lists(
            st.one_of(st.sampled_from(["x", "y", "zz", ""]), st.none()), min_size=n, max_size=n
        )
    )
    label = draw(st.lists(st.one_of(st.integers(0, 3), st.none()), min_size=n, max_size=n))
    table = pa.table(
        {
            "a": pa.array(a, pa.float64()),
            "b": pa.array(b, pa.int64()),
            "s": pa.array(s, pa.string()),
            "label": pa.array(label, pa.int64()),
        }
    )
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, n - 1)), max_size=5))) - {n})
    return table, cuts


def profile_of(table: pa.Table, cuts: list[int]) -> Profile:
    bounds = [0, *cuts, table.num_rows]
    parts = [
        Profile.of_batch(
            table.slice(lo, hi - lo).combine_chunks().to_batches()[0], lo, PLAN, "train"
        )
        for lo, hi in zip(bounds, bounds[1:])
        if hi > lo
    ]
    out = parts[0]
    for p in parts[1:]:
        out = out.merge(p)
    return out


def close(x: float, y: float) -> bool:
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-6)


def assert_same(whole: Profile, merged: Profile) -> None:
    assert whole.rows == merged.rows
    assert list(whole.columns) == list(merged.columns)
    for name, w in whole.columns.items():
        m = merged.columns[name]
        assert (w.missing, w.posinf, w.neginf, w.rows) == (m.missing, m.posinf, m.neginf, m.rows)
        assert w.finite.n == m.finite.n
        assert close(w.mean, m.mean) and close(w.std, m.std)
        assert (w.min, w.max) == (m.min, m.max)
        assert w.values.counts == m.values.counts and w.values.exact == m.values.exact
        assert w.missing_rows == m.missing_rows and w.inf_rows == m.inf_rows
    wl, ml = whole.label, merged.label
    assert (wl.missing, wl.missing_rows, wl.integral) == (ml.missing, ml.missing_rows, ml.integral)
    assert wl.values.counts == ml.values.counts
    wp, mp = wl.positions, ml.positions
    assert wp.width == mp.width
    np.testing.assert_array_equal(wp.n, mp.n)
    assert set(wp.classes) == set(mp.classes)
    for k in wp.classes:
        np.testing.assert_array_equal(wp.classes[k], mp.classes[k])
    np.testing.assert_allclose(wp.mean, mp.mean, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(wp.m2, mp.m2, rtol=1e-9, atol=1e-9)
    for x, y in zip(whole.hashes.arrays(), merged.hashes.arrays()):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(whole.sample.positions, merged.sample.positions)
    assert whole.sample.table.to_pandas().equals(merged.sample.table.to_pandas())  # NaN == NaN


@settings(max_examples=150, deadline=None)
@given(tables())
def test_profile_of_whole_equals_merge_of_batches(case):
    table, cuts = case
    assert_same(profile_of(table, []), profile_of(table, cuts))


@settings(max_examples=60, deadline=None)
@given(tables(), st.data())
def test_merge_is_associative(case, data):
    table, _ = case
    n = table.num_rows
    if n < 3:
        return
    i = data.draw(st.integers(1, n - 2))
    j = data.draw(st.integers(i + 1, n - 1))
    p = [
        Profile.of_batch(
            table.slice(lo, hi - lo).combine_chunks().to_batches()[0], lo, PLAN, "train"
        )
        for lo, hi in ((0, i), (i, j), (j, n))
    ]
    assert_same(p[0].merge(p[1]).merge(p[2]), p[0].merge(p[1].merge(p[2])))


def test_variance_survives_a_large_offset():
    # Sum and sum-of-squares gives variance 0 (or negative) here; Chan's merge does not.
    rng = np.random.default_rng(0)
    x = 1e9 + rng.normal(0, 1, 10_000)
    merged = Moments()
    for chunk in np.array_split(x, 37):
        merged = merged.merge(Moments.of(chunk))
    assert math.isclose(merged.std, x.std(), rel_tol=1e-6)
    assert 0.97 < merged.std < 1.03
    naive = math.sqrt(max(0.0, (x**2).mean() - x.mean() ** 2))
    assert not math.isclose(naive, x.std(), rel_tol=1e-3)  # the failure Chan avoids


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=400), st.integers(2, 30))
def test_value_counter_sketch_bound(values, capacity):
    arr = np.array(values)
    truth = {int(v): int((arr == v).sum()) for v in np.unique(arr)}
    vals, counts = list(truth), np.array(list(truth.values()))
    half = len(arr) // 2
    a = (
        ValueCounter.from_counts(*_counts(arr[:half]), capacity=capacity)
        if half
        else ValueCounter(capacity)
    )
    b = ValueCounter.from_counts(*_counts(arr[half:]), capacity=capacity)
    merged = a.merge(b)
    whole = ValueCounter.from_counts(vals, counts, capacity=capacity)
    bound = len(arr) / (capacity + 1)
    for sketch in (merged, whole):
        assert sketch.total == len(arr)
        assert len(sketch.counts) <= capacity
        for v, c in truth.items():
            est = sketch.counts.get(v, 0)
            assert c - bound - 1e-9 <= est <= c
        if len(truth) <= capacity:
            assert sketch.exact and sketch.counts == truth


def _counts(arr):
    u, c = np.unique(arr, return_counts=True)
    return [int(x) for x in u], c


def test_bin_width_depends_only_on_last_row():
    assert bin_width(0) == 1
    assert bin_width(1023) == 1
    assert bin_width(1024) == 2
    assert bin_width(999_999) == 1024
    a = PositionBins.of(pa.array([0, 1] * 1000), 0)
    b = PositionBins.of(pa.array([1] * 5000), 2000)
    whole = PositionBins.of(pa.array([0, 1] * 1000 + [1] * 5000), 0)
    merged = a.merge(b)
    assert merged.width == whole.width == bin_width(6999)
    np.testing.assert_array_equal(merged.n, whole.n)
    for k in whole.classes:
        np.testing.assert_array_equal(merged.classes[k], whole.classes[k])


def test_sample_merged_in_row_order_equals_the_sample_of_the_whole():
    """Batches merged in row order append their sample rows without a copy; in any other order
    (or without the cut-off) the merge selects and sorts: both give the sample of the whole."""
    from datavet.scan.reservoir import Reservoir

    n, k = 5000, 300
    batch = pa.RecordBatch.from_pydict({"x": np.arange(n) * 0.5, "s": [str(i) for i in range(n)]})
    whole = Reservoir.of(batch, 0, k)
    for cut in (Reservoir.cut(n, k), None):
        parts = [Reservoir.of(batch.slice(o, 700), o, k, cut=cut) for o in range(0, n, 700)]
        for order in (parts, parts[::-1], parts[1::2] + parts[::2]):
            merged = Reservoir(k)
            for part in order:
                merged = merged.merge(part)
            assert merged.seen == n
            assert np.array_equal(merged.positions, whole.positions)
            assert np.array_equal(merged.keys, whole.keys)
            assert merged.table.equals(whole.table)
