"""The tensor scan: layouts, per-channel statistics, sample hashes, constant positions, and the
merge law (the profile of a split equals the merge of the profiles of any cut into blocks)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from datavet.auditors.constant_feature import tensor_message
from datavet.errors import UsageError
from datavet.scan.tensor_block import (
    TensorPlan,
    fold,
    pooled_names,
    profile_block,
    sample_hashes,
)
from datavet.scan.tensor_layout import Layout, resolve_layout

from .conftest import images

# --- layout ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, requested, axis, kind, channels",
    [
        ((7,), None, 0, "features", 7),
        ((), None, None, "features", 1),
        ((3, 32, 32), None, 0, "image", 3),  # (N, C, H, W)
        ((32, 32, 3), None, 2, "image", 3),  # channels last, found from the shape
        ((32, 32, 3), 1, 0, "image", 32),  # ... unless the axis is given
        ((28, 28), None, None, "image", 1),  # square: a one-channel image
        ((50, 6), None, 1, "sequence", 6),  # (N, T, F)
        ((28, 28), -1, 1, "sequence", 28),
        ((50, 6), "none", None, "image", 1),
        ((2, 4, 8, 8), None, 0, "other", 2),  # (N, C, D, H, W)
    ],
)
def test_channel_axis(shape, requested, axis, kind, channels):
    layout = resolve_layout(shape, "float32", requested)
    assert (layout.channel_axis, layout.kind, layout.n_channels) == (axis, kind, channels)
    assert layout.reason


@pytest.mark.parametrize(
    "requested, message", [(0, "sample axis"), (4, "out of range"), ("x", "axis number")]
)
def test_bad_channel_axis(requested, message):
    with pytest.raises(UsageError, match=message):
        resolve_layout((3, 8, 8), "float32", requested)


def test_a_huge_channel_axis_asks_for_the_right_one():
    with pytest.raises(UsageError, match="--channel-axis"):
        resolve_layout((2000, 5, 5), "float32", None)


def test_to_channels_moves_the_channel_axis_first():
    x = np.arange(2 * 6 * 5 * 3).reshape(2, 6, 5, 3)
    layout = resolve_layout((6, 5, 3), "int64")  # channels last
    xc = layout.to_channels(x)
    assert xc.shape == (2, 3, 30)
    np.testing.assert_array_equal(xc[1, 2], x[1, :, :, 2].ravel())


# --- per-channel statistics --------------------------------------------------------------------


def plan_for(x: np.ndarray, label: str | None = None, mode: str = "none", axis=None) -> TensorPlan:
    return TensorPlan(resolve_layout(x.shape[1:], x.dtype.name, axis), label, mode, 64)


def test_channel_stats_match_numpy_and_count_samples():
    x = images(60, (3, 5, 5)).astype(np.float64)
    x[4, 1, 0, 0] = x[4, 1, 2, 2] = np.nan  # two NaN values in one sample
    x[9, 1, 3, 3] = np.nan
    x[11, 2, 0, 1] = np.inf
    x[12, 2, 0, 1] = -np.inf
    x[12, 2, 0, 2] = np.inf  # both signs in one sample: counted for each sign, once in inf
    p = profile_block(x, None, 100, plan_for(x), "train")
    assert list(p.columns) == ["channel 0", "channel 1", "channel 2"]
    c1, c2 = p.columns["channel 1"], p.columns["channel 2"]
    assert (c1.rows, c1.missing, c1.missing_rows) == (60, 2, (104, 109))
    assert (c2.posinf, c2.neginf, c2.inf, c2.inf_rows) == (2, 1, 2, (111, 112))
    assert p.tensor.nan_values.tolist() == [0, 3, 0]
    assert p.tensor.posinf_values.tolist() == [0, 0, 2]
    assert p.tensor.neginf_values.tolist() == [0, 0, 1]
    for c, col in enumerate(p.columns.values()):
        v = x[:, c].ravel()
        v = v[np.isfinite(v)]
        assert col.finite.n == v.size
        assert math.isclose(col.mean, v.mean(), rel_tol=1e-12)
        assert math.isclose(col.std, v.std(), rel_tol=1e-9)
        assert (col.min, col.max) == (v.min(), v.max())
        assert col.n_distinct is None  # values vary: not counted


def test_features_layout_profiles_columns_like_a_table():
    x = np.array([[1.0, 7.0], [2.0, 7.0], [np.nan, 7.0], [4.0, 7.0]])
    p = profile_block(x, None, 0, plan_for(x), "train")
    x0, x1 = p.columns["x0"], p.columns["x1"]
    assert (x0.missing, x0.missing_rows, x0.n_distinct) == (1, (2,), 3)
    assert x1.n_distinct == 1 and x1.values.most_common(1) == [(7.0, 4)]


def test_large_values_do_not_overflow_the_moments():
    x = np.full((4, 2, 3, 3), 1e308)  # channel 0 holds 36 values, one of them -1e308
    x[0, 0, 0, 0] = -1e308
    p = profile_block(x, None, 0, plan_for(x), "train")
    col = p.columns["channel 0"]
    assert math.isfinite(col.mean) and math.isclose(col.mean, 1e308 / 36 * 34, rel_tol=1e-9)
    assert col.std > 0  # inf (the squares overflow, as in Moments.of), never a warning


# --- sample hashes -----------------------------------------------------------------------------


def hashes(x: np.ndarray) -> np.ndarray:
    return profile_block(x, None, 0, plan_for(x), "train").hashes.arrays()[1]


def test_hashes_are_canonical():
    base = np.array([[[1.0, 0.0], [255.0, 3.0]]] * 2)
    as_uint8 = base.astype(np.uint8)
    neg_zero = base.copy()
    neg_zero[:, 0, 1] = -0.0
    nan_a = base.copy()
    nan_a[:, 1, 1] = np.nan
    nan_b = nan_a.astype(np.float32)  # another NaN bit pattern after the cast
    assert (hashes(base) == hashes(as_uint8)).all()
    assert (hashes(base) == hashes(neg_zero)).all()
    assert (hashes(nan_a) == hashes(nan_b)).all()
    assert (hashes(nan_a) != hashes(base)).all()


def test_hashes_depend_on_position_and_shape():
    x = np.arange(12, dtype=np.float64).reshape(1, 2, 6)
    swapped = x.copy()
    swapped[0, 0, [0, 1]] = swapped[0, 0, [1, 0]]
    reshaped = x.reshape(1, 6, 2)
    h = hashes(x)[0]
    assert (hashes(swapped)[0] != h).all()
    assert (hashes(reshaped)[0] != h).all()


def test_one_differing_value_always_changes_lane_zero():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(200, 64))
    y = x.copy()
    y[np.arange(200), rng.integers(0, 64, 200)] += 1.0
    hx = sample_hashes(x, None, (64,))
    hy = sample_hashes(y, None, (64,))
    assert (hx[:, 0] != hy[:, 0]).all() and (hx[:, 1] != hy[:, 1]).all()
    assert len({tuple(r) for r in hx.tolist()}) == 200


def test_in_place_hashing_equals_a_copy():
    x = np.random.default_rng(4).normal(size=(30, 10))
    expected = sample_hashes(x, None, (10,))
    assert (sample_hashes(x.copy(), None, (10,), in_place=True) == expected).all()


# --- constant positions ------------------------------------------------------------------------


def constant_message(x: np.ndarray, axis=None) -> tuple[str, object]:
    p = profile_block(x, None, 0, plan_for(x, axis=axis), "train")
    parts = p.tensor.constant_parts(p.columns)
    return (None, None) if parts is None else (tensor_message(parts, "train"), parts)


def test_mnist_like_border_is_one_summary():
    rng = np.random.default_rng(5)
    x = rng.integers(1, 255, size=(50, 28, 28)).astype(np.uint8)
    x[:, :2, :] = 0
    x[:, -1:, :] = 0
    x[:, :, :1] = 0
    x[:, 5, 0] = 0  # already in the border
    x[:, 27, 14] = 0
    message, parts = constant_message(x)
    n = 2 * 28 + 28 + 25  # top two rows, bottom row, left column (minus overlaps)
    assert parts.constant == n and parts.positions == 784
    assert message == (
        f"{n} of 784 input positions are constant in train (one value in every sample): "
        "the border (all within 2 pixels of the edge)."
    )


def test_full_frame_block_channels_and_nothing():
    x = images(20, (2, 10, 10))
    x[:, :, [0, -1], :] = 1.0
    x[:, :, :, [0, -1]] = 1.0
    assert (
        "the border (the outer pixel on every side) in channel 0 and channel 1"
        in (constant_message(x)[0])
    )
    y = images(20, (1, 12, 12))
    y[:, :, 4:7, 5:9] = 0.5
    assert constant_message(y)[0].endswith("a 3x4 block at rows 4-6, columns 5-8.")
    z = images(20, (3, 6, 6))
    z[:, 1] = 2.0
    message, parts = constant_message(z)
    assert message == "Input channel 'channel 1' is constant in train (every value 2)."
    assert parts.columns == ("channel 1",) and parts.constant == 36 and parts.others == 0
    assert constant_message(images(20, (3, 6, 6)))[0] is None


def test_sequence_padding_and_features():
    x = images(30, (12, 4))  # (N, T, F)
    x[:, 9:, :] = 0.0
    message, _ = constant_message(x)
    assert message.endswith("steps 9-11 in every channel (padding?).")
    f = np.random.default_rng(6).normal(size=(30, 5))
    f[:, 1] = 3.0
    f[:, 4] = -1.0
    message, parts = constant_message(f)
    assert message == (
        "2 of 5 input features are constant in train (one value in every sample): "
        "'x1' (3), 'x4' (-1)."
    )
    assert parts.columns == ("x1", "x4")


def test_nan_positions_are_not_constant_and_constant_ignores_nan():
    x = images(10, (1, 4, 4))
    x[:, 0, 0, 0] = np.nan  # all NaN: not "constant" (V001 reports it)
    x[:, 0, 1, 1] = 5.0
    x[3, 0, 1, 1] = np.nan  # constant among its non-NaN values
    _, parts = constant_message(x)
    assert parts.constant == 1


# --- thumbnails --------------------------------------------------------------------------------


def test_thumbnails_first_samples_and_flagged_ones():
    x = images(40, (3, 64, 48))
    x[25, 0, 10, 10] = np.nan
    x[31, 2, 0, 0] = np.inf
    y = np.arange(40) % 4
    plan = TensorPlan(resolve_layout(x.shape[1:], "float32"), "label", "class", 64)
    p = fold(profile_block(x[i : i + 7], y[i : i + 7], i, plan, "train") for i in range(0, 40, 7))
    assert [t.index for t in p.tensor.thumbnails] == [0, 1, 2, 3, 4, 5]
    assert [(t.index, t.flag) for t in p.tensor.flagged] == [(25, "nan"), (31, "inf")]
    t = p.tensor.flagged[0]
    assert t.pixels.shape == (32, 24, 3) and t.pixels.dtype == np.uint8
    assert t.label == "1" and t.marks[5, 5] == 1 and t.marks.sum() == 1
    summary = p.tensor.summary(p.columns)
    assert [s["index"] for s in summary["thumbnails"]] == [0, 1, 2, 3, 4, 5, 25, 31]


def test_no_thumbnails_for_non_images():
    x = images(10, (12, 4))
    p = profile_block(x, None, 0, plan_for(x), "train")
    assert p.tensor.thumbnails == () and p.tensor.summary(p.columns)["constant_map"] is None


# --- pooled features for the baselines ---------------------------------------------------------


def test_pooled_features_are_block_means():
    x = images(4, (2, 16, 16)).astype(np.float64)
    x[0, 0, 0, 0] = np.nan
    plan = TensorPlan(resolve_layout(x.shape[1:], "float64"), None, "none", 64)
    p = profile_block(x, None, 0, plan, "train")
    names = pooled_names(plan.layout)
    assert len(names) == 2 * 64 and names[0] == "channel 0 cell 0,0"
    table = p.sample.table
    assert table.column_names == names
    cell = x[1, 1, 2:4, 6:8].mean()
    assert math.isclose(table.column("channel 1 cell 1,3")[1].as_py(), cell, rel_tol=1e-12)
    assert math.isclose(
        table.column("channel 0 cell 0,0")[0].as_py(), np.nanmean(x[0, 0, :2, :2]), rel_tol=1e-12
    )


def test_wide_features_are_grouped():
    layout = resolve_layout((1000,), "float32")
    names = pooled_names(layout)
    assert len(names) == 256 and names[0] == "x0-x2" and names[-1] == "x996-x999"


# --- the merge law -----------------------------------------------------------------------------

special = st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0, 3.0])


@st.composite
def tensor_splits(draw):
    n = draw(st.integers(1, 40))
    shape = draw(st.sampled_from([(2, 4, 4), (5,), (6, 3), (3, 2, 2, 2)]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = rng.normal(size=(n, *shape)).round(1)
    flat = x.reshape(n, -1)
    for _ in range(draw(st.integers(0, 6))):
        flat[rng.integers(0, n), rng.integers(0, flat.shape[1])] = draw(special)
    if draw(st.booleans()):
        flat[:, 0] = 1.5  # a constant position
    if draw(st.booleans()) and n > 1:
        flat[n - 1] = flat[0]  # a duplicate sample
    y = rng.integers(0, 3, n)
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, n - 1)), max_size=4))) - {n})
    return x, y, cuts


def profile_cut(x, y, cuts, plan):
    bounds = [0, *cuts, len(x)]
    return fold(
        profile_block(x[a:b], y[a:b], a, plan, "train") for a, b in zip(bounds, bounds[1:]) if b > a
    )


def same_float(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


@settings(max_examples=60, deadline=None)
@given(tensor_splits())
def test_merge_of_blocks_equals_the_whole(case):
    x, y, cuts = case
    plan = TensorPlan(resolve_layout(x.shape[1:], "float64"), "label", "class", 16)
    whole = profile_block(x, y, 0, plan, "train")
    merged = profile_cut(x, y, cuts, plan)
    assert merged.rows == whole.rows
    assert list(merged.columns) == list(whole.columns)
    for name, w in whole.columns.items():
        m = merged.columns[name]
        assert (m.rows, m.missing, m.posinf, m.neginf) == (w.rows, w.missing, w.posinf, w.neginf)
        assert (m.missing_rows, m.inf_rows) == (w.missing_rows, w.inf_rows)
        assert m.finite.n == w.finite.n and (m.min, m.max) == (w.min, w.max)
        assert same_float(m.mean, w.mean) and same_float(m.std, w.std)
        assert m.n_distinct == w.n_distinct
        if w.n_distinct == 1:
            assert m.values.counts == w.values.counts
    tw, tm = whole.tensor, merged.tensor
    assert tm.layout == tw.layout and tm.integral == tw.integral
    for field in ("nan_values", "posinf_values", "neginf_values"):
        assert getattr(tm, field).tolist() == getattr(tw, field).tolist()
    np.testing.assert_array_equal(tm.positions.present, tw.positions.present)
    np.testing.assert_array_equal(tm.positions.lo, tw.positions.lo)
    np.testing.assert_array_equal(tm.positions.hi, tw.positions.hi)
    assert [t.index for t in tm.thumbnails] == [t.index for t in tw.thumbnails]
    assert [t.index for t in tm.flagged] == [t.index for t in tw.flagged]
    pw, hw, lw = whole.hashes.arrays()
    pm, hm, lm = merged.hashes.arrays()
    assert (pw == pm).all() and (hw == hm).all() and (lw == lm).all()
    assert whole.label.values.counts == merged.label.values.counts
    assert merged.sample.positions.tolist() == whole.sample.positions.tolist()
    assert merged.sample.table.column_names == whole.sample.table.column_names
    for name in whole.sample.table.column_names:
        a = merged.sample.table.column(name).to_numpy(zero_copy_only=False)
        b = whole.sample.table.column(name).to_numpy(zero_copy_only=False)
        np.testing.assert_array_equal(a, b)  # NaN equal to NaN
    parts_w = tw.constant_parts(whole.columns)
    parts_m = tm.constant_parts(merged.columns)
    assert (parts_w is None) == (parts_m is None)
    if parts_w is not None:
        assert tensor_message(parts_w, "train") == tensor_message(parts_m, "train")


@settings(max_examples=30, deadline=None)
@given(tensor_splits(), st.integers(0, 3))
def test_tensor_stats_merge_is_associative(case, k):
    x, y, _ = case
    if len(x) < 3:
        return
    plan = TensorPlan(resolve_layout(x.shape[1:], "float64"), "label", "class", 16)
    a, b, c = (
        profile_block(x[i::3], y[i::3], 0, plan, "train").tensor for i in range(3)
    )  # any three parts (offsets do not matter for these fields)
    left, right = a.merge(b).merge(c), a.merge(b.merge(c))
    for field in ("nan_values", "posinf_values", "neginf_values"):
        assert getattr(left, field).tolist() == getattr(right, field).tolist()
    np.testing.assert_array_equal(left.positions.lo, right.positions.lo)
    np.testing.assert_array_equal(left.positions.present, right.positions.present)
    assert left.integral == right.integral


def test_layouts_must_agree_to_merge():
    x = images(4, (2, 3, 3))
    a = profile_block(x, None, 0, plan_for(x), "train").tensor
    other = Layout((2, 3, 3), "float32", None, "other")
    b = profile_block(x, None, 4, TensorPlan(other), "train").tensor
    with pytest.raises(ValueError, match="cannot merge"):
        a.merge(b)
