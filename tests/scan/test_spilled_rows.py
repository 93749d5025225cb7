"""Row hashes spilled to disk in hash partitions (engines/spill.py HashSpill) give the same
S001-S003 and S007 findings as the hashes held in memory, partition by partition."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import datavet
from datavet.engines import local
from datavet.engines.spill import HashSpill
from datavet.scan import rowchecks
from datavet.scan.hashing import RowHashes
from datavet.scan.rowchecks import SplitRows, partition_ranges, row_checks, spilled_checks


def _tables(n_train: int = 3000, n_test: int = 800, seed: int = 1):
    rng = np.random.default_rng(seed)

    def frame(n):
        return {
            "a": rng.integers(0, 40, n).astype(float),  # few values: many equal rows
            "b": rng.integers(0, 3, n).astype(float),
            "c": rng.choice(["x", "y", "z"], n),
            "label": rng.integers(0, 2, n),
        }

    train, test = frame(n_train), frame(n_test)
    train["a"][::97] = np.nan  # NaN equals NaN in the row hashes
    for k in range(40):  # exact copies of train rows in test, some with another label
        i, j = 7 * k + 3, 11 * k + 5
        for col in ("a", "b", "c"):
            test[col][j] = train[col][i]
        test["label"][j] = train["label"][i] ^ (k % 3 == 0)
    for k in range(30):  # near copies: equal to 6 significant digits, not exactly
        i, j = 13 * k + 1, 12 * k + 440
        test["a"][j] = train["a"][i] * (1 + 1e-9) + 1e-9
        test["b"][j], test["c"][j], test["label"][j] = train["b"][i], train["c"][i], 0
    return pa.table(train), pa.table(test)


def _findings(report):
    rows = {"S001", "S002", "S003", "S007"}
    return sorted(
        (f.code, f.split, tuple(f.columns), f.n_affected, f.message)
        for f in report.findings
        if f.code in rows
    )


@pytest.fixture
def files(tmp_path):
    train, test = _tables()
    paths = {}
    for split, table in (("train", train), ("test", test)):
        pq.write_table(table, tmp_path / f"{split}.parquet", row_group_size=500)
        pacsv.write_csv(table, tmp_path / f"{split}.csv")
        paths[split] = tmp_path / f"{split}.parquet"
        paths[split + "_csv"] = tmp_path / f"{split}.csv"
    return paths


SPILLS: list[HashSpill] = []


class _Counted(HashSpill):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        SPILLS.append(self)


def _audit(train, test, monkeypatch, spill_rows, partition_rows=None):
    SPILLS.clear()
    monkeypatch.setattr(local, "SPILL_ROWS", spill_rows)
    monkeypatch.setattr(local, "HashSpill", _Counted)
    if partition_rows is not None:
        monkeypatch.setattr(rowchecks, "PARTITION_ROWS", partition_rows)
    return datavet.audit(str(train), str(test), target="label", baselines=False, batch_rows=256)


@pytest.mark.parametrize("spill_rows", [100, 1000])  # both splits spilled; train only
def test_spilled_parquet_audit_matches_in_memory(files, monkeypatch, spill_rows):
    in_memory = _findings(_audit(files["train"], files["test"], monkeypatch, 10**9))
    spilled = _findings(_audit(files["train"], files["test"], monkeypatch, spill_rows, 300))
    assert [s.rows for s in SPILLS] == ([3000, 800] if spill_rows < 800 else [3000])
    assert {f[0] for f in in_memory} >= {"S001", "S002", "S003", "S007"}
    assert spilled == in_memory


def test_spilled_csv_audit_matches_in_memory(files, monkeypatch):
    """A CSV's rows are not known up front: the scan spills once it has seen enough."""
    in_memory = _findings(_audit(files["train_csv"], files["test_csv"], monkeypatch, 10**9))
    spilled = _findings(_audit(files["train_csv"], files["test_csv"], monkeypatch, 700, 200))
    assert [s.rows for s in SPILLS] == [3000, 800]
    assert spilled and spilled == in_memory


def test_spilled_audit_with_a_row_key_matches_in_memory(tmp_path, monkeypatch):
    """With an ID column, S001/S002 are checked again without it (rows copied under a fresh
    key): the spilled hashes are not read back into memory for that, and the findings agree."""
    train, test = _tables(1500, 800, seed=2)
    train = train.append_column("order_id", pa.array(np.arange(1500) + 10_000))
    test = test.append_column("order_id", pa.array(np.arange(800) + 90_000))
    paths = []
    for split, table in (("train", train), ("test", test)):
        pq.write_table(table, tmp_path / f"{split}.parquet", row_group_size=300)
        paths.append(tmp_path / f"{split}.parquet")
    in_memory = _audit(*paths, monkeypatch, 10**9)
    unspill = RowHashes.unspill

    def never(self):
        assert self.spill is None, "spilled hashes read back into memory"
        unspill(self)

    monkeypatch.setattr(RowHashes, "unspill", never)
    spilled = _audit(*paths, monkeypatch, 100, 250)
    assert [s.rows for s in SPILLS] == [1500, 800]
    assert _findings(spilled) == _findings(in_memory)
    assert any(f[0] == "S001" and "order_id" in f[4] for f in _findings(in_memory))


def _hashes(n, rng, width=None):
    rows = rng.integers(0, 50, (n, 2)).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    labels = rng.integers(0, 2, n).astype(np.uint64)
    near = None if width is None else rng.integers(0, 2**63, (n, width)).astype(np.uint64)
    return rows, labels, near


def test_hash_spill_reads_back_what_was_written():
    rng = np.random.default_rng(3)
    spill = HashSpill()
    chunks = []
    for offset in range(0, 1000, 250):
        rows, labels, near = _hashes(250, rng, width=3)
        chunks.append((offset, rows, labels, None, near))
    for chunk in chunks[::-1]:  # batches may arrive in any order (worker threads)
        spill.add(*chunk)
    kept = RowHashes(list(chunks))
    kept.consolidate()
    (_, rows, labels, _, near) = kept.chunks[0]
    back = RowHashes(spill=spill)
    pos, b_rows, b_labels = back.arrays()
    assert np.array_equal(pos, np.arange(1000))
    assert np.array_equal(b_rows, rows) and np.array_equal(b_labels, labels)
    assert np.array_equal(back.near(), near)
    with pytest.raises(RuntimeError, match="does not fit"):
        rows, labels, near = _hashes(10, rng, width=3)
        spill.add(250, rows, labels, None, near)  # that batch is there already


def test_partitioned_row_checks_equal_checks_over_everything():
    rng = np.random.default_rng(5)
    tr_rows, tr_labels, _ = _hashes(4000, rng)
    te_rows, te_labels, _ = _hashes(900, rng)
    tr_labels[::31] = rowchecks.MISSING_HASH
    whole = row_checks(
        SplitRows(np.arange(4000), tr_rows, tr_labels, tr_rows),
        SplitRows(np.arange(900), te_rows, te_labels, te_rows),
    )
    spill_tr, spill_te = HashSpill(), HashSpill()
    for start in range(0, 4000, 1000):
        spill_tr.add(start, tr_rows[start : start + 1000], tr_labels[start : start + 1000])
    spill_te.add(0, te_rows, te_labels)
    for train, test in (
        (RowHashes(spill=spill_tr), RowHashes(spill=spill_te)),
        (RowHashes(spill=spill_tr), RowHashes.of(0, te_rows, te_labels)),  # test in memory
    ):
        for limit in (1, 500, 10**9):
            assert spilled_checks(train, test, limit=limit) == whole
    assert whole.overlap.n and whole.duplicates["train"].n and whole.conflicts["train"].n


def test_hash_spill_without_room_is_an_engine_error(tmp_path):
    from datavet.errors import EngineError

    with pytest.raises(EngineError, match="TMPDIR"):
        HashSpill(directory=str(tmp_path / "missing"))


def test_partition_ranges_cover_every_partition_once():
    counts = np.array([5, 0, 7, 3, 9, 0, 0, 1])
    ranges = partition_ranges(counts, 10)
    assert ranges[0][0] == 0 and ranges[-1][1] == len(counts)
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    assert all(counts[lo:hi].sum() <= 10 or hi - lo == 1 for lo, hi in ranges)


def test_hash_spill_partitions_come_back_in_row_order():
    """Any run of partitions, the whole file included (put in place by position, not sorted),
    comes back as the rows of those partitions in row order, with their own hashes."""
    from datavet.scan.hashing import SPILL_BITS

    rng = np.random.default_rng(11)
    spill = HashSpill()
    chunks = []
    for offset in range(0, 3000, 700):
        n = min(700, 3000 - offset)
        rows, labels, _ = _hashes(n, rng)
        shared = rng.integers(0, 2**63, (n, 2)).astype(np.uint64) * np.uint64(3)
        chunks.append((offset, rows, labels, shared, None))
    for chunk in chunks[::-1]:
        spill.add(*chunk)
    rows = np.concatenate([c[1] for c in chunks])
    labels = np.concatenate([c[2] for c in chunks])
    shared = np.concatenate([c[3] for c in chunks])
    key = (shared[:, 0] >> np.uint64(64 - SPILL_BITS)).astype(np.int64)
    for lo, hi in [(0, 1 << SPILL_BITS), (0, 1), (3, 40), (100, 256), (255, 256)]:
        want = np.flatnonzero((key >= lo) & (key < hi))
        pos, b_rows, b_labels, b_shared = spill.partition(lo, hi)
        assert np.array_equal(pos, want)
        assert np.array_equal(b_rows, rows[want]) and np.array_equal(b_labels, labels[want])
        assert np.array_equal(b_shared, shared[want])
