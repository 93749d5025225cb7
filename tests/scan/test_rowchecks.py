"""Row checks split by hash prefix: the merge of per-bucket results equals the whole."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from datavet.scan import Profile, ScanPlan
from datavet.scan.rowchecks import SplitRows, row_checks


def split_rows(values, labels, offset=0, columns=("a", "b")) -> SplitRows:
    table = pa.table({"a": values[0], "b": values[1], "label": labels})
    plan = ScanPlan(target="label", hash_columns=columns)
    batch = table.to_batches()[0]
    return SplitRows.of(Profile.of_batch(batch, offset, plan, "x").hashes)


rows = st.lists(
    st.tuples(st.integers(0, 4), st.sampled_from([0.0, 1.5, float("nan")]), st.integers(0, 2)),
    min_size=1,
    max_size=80,
)


def to_split(data, missing_label_every=0):
    a = [r[0] for r in data]
    b = [r[1] for r in data]
    y = [
        None if missing_label_every and i % missing_label_every == 0 else r[2]
        for i, r in enumerate(data)
    ]
    return split_rows((pa.array(a, pa.int64()), pa.array(b, pa.float64())), pa.array(y, pa.int64()))


@settings(max_examples=120, deadline=None)
@given(rows, rows, st.integers(1, 4))
def test_bucketed_results_merge_to_the_whole(train_data, test_data, bits):
    train, test = to_split(train_data, 7), to_split(test_data)
    whole = row_checks(train, test)
    merged = None
    for tr, te in zip(train.bucket(bits), test.bucket(bits)):
        part = row_checks(tr, te)
        merged = part if merged is None else merged.merge(part)
    assert merged.overlap == whole.overlap
    assert merged.cross_conflicts == whole.cross_conflicts
    for split in ("train", "test"):
        assert merged.duplicates[split] == whole.duplicates[split]
        assert merged.conflicts[split] == whole.conflicts[split]


def test_counts_by_hand():
    # train: (1, 0.5) x3 with labels 0, 0, 1; (2, nan) once. test: (2, nan) label 1, (1, 0.5) 0
    train = split_rows(
        (pa.array([1, 1, 1, 2]), pa.array([0.5, 0.5, 0.5, float("nan")])), pa.array([0, 0, 1, 1])
    )
    test = split_rows((pa.array([2, 1]), pa.array([float("nan"), 0.5])), pa.array([0, 0]))
    r = row_checks(train, test)
    assert (r.duplicates["train"].n, r.duplicates["train"].examples) == (1, (1,))
    assert (r.conflicts["train"].n, r.conflicts["train"].groups) == (3, 1)
    assert r.overlap.n == 2 and r.overlap.examples == (0, 1)
    assert r.overlap.pairs == ((0, 3), (1, 0)) and r.overlap.groups == 2
    # test row 0 (label 0) matches train row 3 (label 1): a conflict; test row 1 has a copy
    assert r.cross_conflicts.n == 1 and r.cross_conflicts.examples == (0,)
    assert np.all(train.bucket(0)[0].pos == train.pos)
