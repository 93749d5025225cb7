"""The many-columns path (scan/wide.py) gives exactly the Profile of the column-by-column path."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

from datavet.scan import wide
from datavet.scan.columns import ColumnStats
from datavet.scan.neardup import near_rows
from datavet.scan.profile import Profile, ScanPlan
from datavet.scan.rowhash import hash_rows


def _mixed(rows: int, seed: int = 0) -> pa.RecordBatch:
    """A wide batch of every kind the block reads, and some it leaves to the column path."""
    rng = np.random.default_rng(seed)
    cols: dict[str, pa.Array] = {}
    for i in range(40):  # floats with NaN, inf, -0.0, repeats
        x = rng.normal(size=rows) * 10.0 ** rng.integers(-3, 6)
        if i % 3 == 0:
            x = np.round(x, 1)
        x[rng.random(rows) < 0.2] = np.nan
        x[rng.random(rows) < 0.05] = np.inf
        x[rng.random(rows) < 0.05] = -np.inf
        x[rng.random(rows) < 0.05] = -0.0
        cols[f"f{i:02d}"] = pa.array(x)
    for i in range(10):  # integers, some with nulls, some huge
        v = rng.integers(-5, 5, rows) * (1 if i % 2 else 2**62 + 1)
        mask = rng.random(rows) < (0.3 if i % 3 == 0 else 0.0)
        cols[f"i{i}"] = pa.array(v, mask=mask)
    cols["u8"] = pa.array(rng.integers(0, 255, rows).astype(np.uint8))
    cols["u64"] = pa.array(rng.integers(0, 2**63, rows).astype(np.uint64) * np.uint64(2) + 1)
    cols["f32"] = pa.array(rng.normal(size=rows).astype(np.float32))
    cols["b"] = pa.array(rng.random(rows) < 0.5)
    cols["bnull"] = pa.array(rng.random(rows) < 0.5, mask=rng.random(rows) < 0.3)
    cols["const"] = pa.array(np.full(rows, 7.0))
    cols["allnan"] = pa.array(np.full(rows, np.nan))
    cols["allinf"] = pa.array(np.full(rows, -np.inf))
    cols["inull"] = pa.array([None] * rows, pa.int32())
    cols["text"] = pa.array([["a", "b", None, "1.5"][k % 4] for k in range(rows)])
    cols["big"] = pa.array(np.full(rows, 1e308) * rng.choice([1.0, 1.5], rows))
    cols["label"] = pa.array(rng.integers(0, 2, rows))
    names = sorted(cols, key=lambda n: n[::-1])  # not in name order
    return pa.RecordBatch.from_arrays([cols[n] for n in names], names=names)


def _same(a, b, where: str = "") -> None:
    """Exact equality: floats bit for bit, dicts in the same order, arrays element-wise."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray), where
        assert a.dtype == b.dtype and a.shape == b.shape, where
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), where
    elif isinstance(a, float) and isinstance(b, float):
        assert (math.isnan(a) and math.isnan(b)) or a == b, (where, a, b)
        assert math.copysign(1, a) == math.copysign(1, b), where
    elif isinstance(a, dict):
        assert isinstance(b, dict), where
        assert [(type(k), k) for k in a] == [(type(k), k) for k in b], where
        for k in a:
            _same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), (where, a, b)
        for k, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{k}]")
    elif hasattr(a, "__slots__") or hasattr(a, "__dataclass_fields__"):
        assert type(a) is type(b), where
        for f in a.__dataclass_fields__:
            _same(getattr(a, f), getattr(b, f), f"{where}.{f}")
    else:
        assert type(a) is type(b) and a == b, (where, a, b)


def _profiles(batch, plan, offset=0, monkeypatch=None):
    fast = Profile.of_batch(batch, offset, plan, "train")
    monkeypatch.setattr(wide, "MIN_COLUMNS", 10**9)
    slow = Profile.of_batch(batch, offset, plan, "train")
    monkeypatch.undo()
    return fast, slow


def _compare(fast: Profile, slow: Profile) -> None:
    assert list(fast.columns) == list(slow.columns)
    for name in slow.columns:
        _same(fast.columns[name], slow.columns[name], name)
    assert len(fast.hashes.chunks) == len(slow.hashes.chunks) == 1
    for k, (x, y) in enumerate(zip(fast.hashes.chunks[0], slow.hashes.chunks[0])):
        if x is None or y is None:
            assert x is None and y is None, k
        elif isinstance(x, int):
            assert x == y
        else:
            _same(x, y, f"hashes[{k}]")


@pytest.mark.parametrize("rows", [1, 3, 7, 8, 9, 40, 300, 1100])
def test_block_profile_equals_column_profile(rows, monkeypatch):
    """Every ColumnStats field (moments bit for bit, value counts in first-appearance order with
    their key types, KMV sketches, first rows), the row hashes, shared hashes and near hashes
    with their per-row detail are the same whether the columns are computed together or one
    by one."""
    batch = _mixed(rows, seed=rows)
    features = [n for n in batch.schema.names if n != "label"]
    assert wide.block_names(batch, features), "the batch takes the block path"
    shared = tuple(sorted(n for n in features if not n.startswith("i"))) + ("absent",)
    near = tuple(n for n in shared if n not in ("f03", "i1", "absent"))
    plan = ScanPlan(target="label", hash_columns=shared, near_columns=near, sample_rows=10, seed=1)
    fast, slow = _profiles(batch, plan, offset=1000, monkeypatch=monkeypatch)
    _compare(fast, slow)
    assert fast.columns["f00"].kind == "numeric" and fast.columns["b"].kind == "bool"
    assert list(fast.columns["b"].values.counts) in ([True, False], [False, True], [True])


def test_value_counts_beyond_capacity_fall_back(monkeypatch):
    """More distinct values in a column than the counter holds: that column is counted as the
    column path counts it (a Misra-Gries sketch), the others still exactly."""
    rng = np.random.default_rng(5)
    rows = 3000
    cols = {f"c{i:02d}": pa.array(rng.normal(size=rows)) for i in range(20)}
    cols["few"] = pa.array(rng.integers(0, 3, rows).astype(float))
    batch = pa.RecordBatch.from_arrays(list(cols.values()), names=list(cols))
    plan = ScanPlan(hash_columns=tuple(sorted(cols)))
    fast, slow = _profiles(batch, plan, monkeypatch=monkeypatch)
    _compare(fast, slow)
    assert not fast.columns["c00"].values.exact and fast.columns["few"].values.exact


def test_hashes_alone_equal_column_path(monkeypatch):
    """hash_rows and near_rows called on their own (a second pass) also fold the block."""
    batch = _mixed(12, seed=3)
    cols = [n for n in batch.schema.names if n != "label"] + ["gone"]
    fast_rows = hash_rows(batch, cols, frozenset())
    fast_near = near_rows(batch, cols, 6, left_out=["text"])
    monkeypatch.setattr(wide, "MIN_COLUMNS", 10**9)
    assert not wide.block_names(batch, cols)
    _same(fast_rows, hash_rows(batch, cols, frozenset()))
    _same(fast_near, near_rows(batch, cols, 6, left_out=["text"]))


def test_merged_batches_equal(monkeypatch):
    """Batches profiled through the block merge into the same Profile as column by column."""
    batch = _mixed(50, seed=9)
    plan = ScanPlan(target="label", hash_columns=tuple(n for n in batch.schema.names))
    parts = [(o, batch.slice(o, 10)) for o in range(0, 50, 10)]
    fast = slow = Profile(split="train")
    for o, b in parts:
        f, s = _profiles(b, plan, offset=o, monkeypatch=monkeypatch)
        fast, slow = fast.merge(f), slow.merge(s)
    _compare_merged(fast, slow)


def _compare_merged(fast: Profile, slow: Profile) -> None:
    for name in slow.columns:
        _same(fast.columns[name], slow.columns[name], name)
    fast.hashes.consolidate()
    slow.hashes.consolidate()
    for x, y in zip(fast.hashes.arrays(), slow.hashes.arrays()):
        _same(x, y)


def test_column_stats_of_unchanged():
    """The block's ColumnStats for a column equals ColumnStats.of on that column alone."""
    batch = _mixed(25, seed=11)
    names = wide.block_names(batch, batch.schema.names)
    block = wide.scan_block(batch, names, 40)
    for name in names:
        _same(block.stats[name], ColumnStats.of(name, batch.column(name), 40), name)


def test_block_in_small_slices_equal(monkeypatch):
    """The block is computed a slice of columns at a time (bounded memory): slices of a few
    columns give the same Profile."""
    batch = _mixed(30, seed=2)
    plan = ScanPlan(target="label", hash_columns=tuple(batch.schema.names), near_columns=("f01",))
    monkeypatch.setattr(wide, "BLOCK_CELLS", 100)  # 3 columns a slice
    fast = Profile.of_batch(batch, 0, plan, "train")
    monkeypatch.setattr(wide, "MIN_COLUMNS", 10**9)
    slow = Profile.of_batch(batch, 0, plan, "train")
    _compare(fast, slow)
