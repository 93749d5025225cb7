"""The scan's shortcuts give the results of the plain computations they replace.

- text columns are counted, matched and hashed once per distinct value (``hashing.Strings``);
- the sample keeps only rows under a cut-off computed from the number of rows (``Reservoir.cut``);
- near-duplicate hashes are computed in the main scan instead of a second pass;
- ``match_rows`` builds its table on the smaller side.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import datavet
from datavet.engines.local import LocalEngine, profile_source
from datavet.engines.plan import plan_tables
from datavet.scan import Profile, Reservoir, ScanPlan
from datavet.scan.columns import ColumnStats, _count, _numeric_text, _sketch
from datavet.scan.hashing import _text_lanes, column_lanes
from datavet.scan.neardup import NearRows
from datavet.scan.rowchecks import match_rows
from datavet.sources import open_source

TEXT = st.one_of(
    st.none(),
    st.sampled_from(["a", "A ", " a", "12", "1e-3", "nan", "", "héllo", "x  y", "inf"]),
    st.text(max_size=4),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXT, max_size=300), st.integers(0, 10_000))
def test_text_stats_equal_row_by_row(values, offset):
    arr = pa.array(values, pa.string())
    stats = ColumnStats.of("c", arr, offset)
    present = arr.drop_null()
    assert stats.missing == arr.null_count
    assert (stats.numeric_text, stats.text_values) == _numeric_text(arr, offset)
    np.testing.assert_array_equal(stats.keys.hashes, _sketch(present).hashes)
    plain = _count(present, offset)
    assert (stats.values.counts, stats.values.total, stats.values.exact) == (
        plain.counts,
        plain.total,
        plain.exact,
    )
    # the lanes: dictionary hashes taken by code equal hashing every row
    missing = np.asarray(arr.is_null().to_numpy(zero_copy_only=False), bool)
    rowwise = _text_lanes(
        np.where(missing, "", arr.to_numpy(zero_copy_only=False)).astype(object), missing
    )
    for a, b in zip(column_lanes(arr), rowwise):
        np.testing.assert_array_equal(a, b)


def test_small_dictionary_lanes_are_remembered_by_value_and_order():
    from datavet.scan.hashing import value_lanes

    first = value_lanes(pa.array(["red", "green", "blue"]))
    again = value_lanes(pa.array(["red", "green", "blue"]))
    other = value_lanes(pa.array(["blue", "red", "green"]))  # another batch's order
    assert again[0] is first[0]  # hashed once
    plain = _text_lanes(np.array(["blue", "red", "green"], object), np.zeros(3, bool))
    for a, b in zip(other, plain):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError):
        first[0][0] = 0  # shared between batches: nobody may write into it


def test_text_screening_equal_on_large_batches():
    rng = np.random.default_rng(3)
    for values in (
        [f"id{i}" for i in rng.permutation(20_000)],  # all distinct: screened out
        list(rng.choice(["a", "b", None], 20_000)),  # few values: counted exactly
    ):
        arr = pa.array(values, pa.string())
        stats = ColumnStats.of("c", arr, 65_536)
        plain = _count(arr.drop_null(), 65_536)
        assert (stats.values.counts, stats.values.exact) == (plain.counts, plain.exact)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3000), st.integers(1, 400), st.integers(1, 700), st.integers(0, 5))
def test_sample_cut_gives_the_same_sample(rows, k, batch, seed):
    table = pa.table({"i": np.arange(rows)})
    cut = Reservoir.cut(rows, k, seed, chunk=257)
    plain, fast = Reservoir(k), Reservoir(k)
    for b in table.to_batches(max_chunksize=batch):
        start = b.column(0)[0].as_py()
        plain = plain.merge(Reservoir.of(b, start, k, seed))
        fast = fast.merge(Reservoir.of(b, start, k, seed, cut))
    np.testing.assert_array_equal(plain.positions, fast.positions)
    assert plain.table.equals(fast.table) and plain.seen == fast.seen == rows


def _frames(n=3000):
    rng = np.random.default_rng(7)
    train = pd.DataFrame(
        {
            "x": rng.standard_normal(n),
            "name": rng.choice(["Ann", " ann", "BOB", None, "12"], n),
            "user_id": [f"u{i}" for i in range(n)],
            "when": pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 300, n), "D"),
            "label": rng.integers(0, 2, n),
        }
    )
    test = train.iloc[:600].copy()
    test["user_id"] = [f"t{i}" for i in range(600)]  # ID-like: left out of the near hashes
    test["x"] = test["x"] * (1 + 1e-10)  # near, not exact
    test.loc[test.index[:50], "name"] = test["name"][:50].str.upper()
    return train, test


def test_near_hashes_in_the_scan_equal_the_second_pass(tmp_path):
    train, test = _frames()
    paths = {}
    for split, df in (("train", train), ("test", test)):
        paths[split] = tmp_path / f"{split}.parquet"
        df.to_parquet(paths[split], row_group_size=700)
    sources = {s: open_source(str(p), role=s, target="label") for s, p in paths.items()}
    plan = plan_tables(sources["train"], sources["test"], "label", 500)
    columns = ("label", "name", "x")  # user_id is ID-like, "when" the time column
    near_plan = ScanPlan(
        target=plan.target,
        hash_columns=plan.hash_columns,
        sample_rows=500,
        near_columns=columns,
        near_digits=6,
    )
    train_p = profile_source(sources["train"], near_plan, "train", batch_rows=256, workers=2)
    newest = train_p.columns["when"].tmax
    test_plan = ScanPlan(**{**near_plan.__dict__, "time_column": "when", "time_before": newest})
    test_p = profile_source(sources["test"], test_plan, "test", batch_rows=256, workers=2)
    for split, profile in (("train", train_p), ("test", test_p)):
        folded = NearRows.of(profile.hashes, profile.older, profile.older_rows)
        second = LocalEngine(batch_rows=300).near_rows(
            sources[split],
            columns=list(columns),
            exact_columns=list(plan.hash_columns),
            as_number=plan.as_number,
            time_column="when" if split == "test" else None,
            time_before=newest,
        )
        np.testing.assert_array_equal(folded.pos, second.pos)
        np.testing.assert_array_equal(folded.near, second.near)
        np.testing.assert_array_equal(folded.exact, second.exact)
        if split == "test":
            assert (folded.older, folded.time_examples) == (second.older, second.time_examples)
            assert folded.older > 0


@pytest.mark.parametrize("declare", [False, True])
def test_audit_same_report_with_and_without_the_second_pass(tmp_path, monkeypatch, declare):
    train, test = _frames()
    train.to_parquet(tmp_path / "train.parquet")
    test.to_parquet(tmp_path / "test.parquet")
    kw = {"target": "label", **({"group": "user_id", "time": "when"} if declare else {})}
    args = (str(tmp_path / "train.parquet"), str(tmp_path / "test.parquet"))
    calls = []
    real_pass = LocalEngine._near_pass
    monkeypatch.setattr(LocalEngine, "_near_pass", lambda *a: calls.append(1) or real_pass(*a))
    one_pass = json.loads(datavet.audit(*args, **kw).to_json())
    assert not calls  # Parquet: the near hashes came from the main scan
    monkeypatch.setattr(LocalEngine, "near_guess", lambda *a: None)
    two_pass = json.loads(datavet.audit(*args, **kw).to_json())
    assert calls
    for report in (one_pass, two_pass):
        report.pop("duration_s", None)
    assert one_pass == two_pass
    assert "S007" in {f["code"] for f in one_pass["findings"]}


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 60), st.integers(0, 60), st.integers(0, 9))
def test_match_rows_either_side(n_rows, n_ref, values):
    rng = np.random.default_rng(n_rows * 100 + n_ref)
    rows = rng.integers(0, values + 1, (n_rows, 2)).astype(np.uint64)
    ref = rng.integers(0, values + 1, (n_ref, 2)).astype(np.uint64)
    got = match_rows(rows, ref)
    expect = [
        next((j for j in range(n_ref) if (ref[j] == rows[i]).all()), -1) for i in range(n_rows)
    ]
    assert got.tolist() == expect


def test_profile_of_batch_without_a_cut_is_unchanged():
    batch = pa.record_batch({"a": pa.array(["x", None, "y"]), "b": pa.array([1.0, 2.0, 2.0])})
    p = Profile.of_batch(batch, 10, ScanPlan(hash_columns=("a", "b")), "train")
    assert p.columns["a"].missing_rows == (11,) and p.sample.positions.tolist() == [10, 11, 12]
    assert p.hashes.near() is None


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), max_size=300),
    st.sampled_from(["float64", "int64", "bool"]),
    st.integers(0, 70_000),
)
def test_a_column_without_nan_or_inf_skips_the_masks_for_the_same_stats(values, kind, offset):
    """Every value finite: no NaN/inf masks and no copies, the statistics of the masked path."""
    import datavet.scan.columns as columns

    if kind == "int64":
        arr = pa.array([int(v) % 1000 for v in values], pa.int64())
    elif kind == "bool":
        arr = pa.array([v > 0 for v in values], pa.bool_())
    else:
        arr = pa.array(values, pa.float64())
    fast = ColumnStats.of("c", arr, offset)
    import math
    import types

    shim = types.SimpleNamespace(**{k: getattr(math, k) for k in dir(math) if k[0] != "_"})
    shim.isfinite = lambda _v: False  # the masked path, whatever the sum
    real, columns.math = columns.math, shim
    try:
        masked = ColumnStats.of("c", arr, offset)
    finally:
        columns.math = real
    assert fast.finite == masked.finite  # the same mean and M2, to the bit
    assert (fast.min, fast.max) == (masked.min, masked.max) or not len(arr)
    assert (fast.missing, fast.posinf, fast.neginf) == (masked.missing, 0, 0)
    assert (fast.values.counts, fast.values.exact) == (masked.values.counts, masked.values.exact)
    if kind == "int64" and len(arr):
        np.testing.assert_array_equal(fast.keys.hashes, masked.keys.hashes)
