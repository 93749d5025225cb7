"""KMV sketches, group counts, significant-digit rounding and ID-like names."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from datavet.scan.groups import GroupCounts
from datavet.scan.idlike import looks_like_key_name
from datavet.scan.kmv import KMV
from datavet.scan.neardup import round_significant


def sketch(values, k=64):
    from datavet.scan.hashing import hash_values

    return KMV.of(hash_values(pa.array(values)), k)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 500), max_size=400), st.integers(1, 5))
def test_kmv_merge_equals_whole(values, parts):
    cuts = np.array_split(np.array(values, dtype=np.int64), parts)
    merged = KMV(64)
    for c in cuts:
        merged = merged.merge(sketch(c))
    whole = sketch(np.array(values, dtype=np.int64))
    np.testing.assert_array_equal(merged.hashes, whole.hashes)
    if len(set(values)) < 64:
        assert whole.exact and whole.distinct() == len(set(values))


def test_kmv_estimates_past_k():
    a = sketch(np.arange(0, 50_000), k=1024)
    b = sketch(np.arange(25_000, 75_000), k=1024)
    assert a.distinct() == pytest.approx(50_000, rel=0.1)
    assert a.containment(b) == pytest.approx(0.5, abs=0.06)
    small = sketch(np.arange(100), k=1024)
    assert small.containment(a) == 1.0 and a.containment(small) == pytest.approx(0.002, abs=0.002)


def test_group_counts_merge_and_share():
    a = GroupCounts.of(pa.array(["p1", "p2", "p1"]), 0).merge(GroupCounts.of(pa.array(["p3"]), 3))
    b = GroupCounts.of(pa.array(["p2", "p2", "p9"]), 0)
    assert sorted(a.rows.tolist()) == [1, 1, 2]
    assert sorted(a.first.tolist()) == [0, 1, 3]
    shared = b.shared_with(a)
    assert int(b.rows[shared].sum()) == 2 and int(shared.sum()) == 1


def test_round_significant():
    x = np.array([1.23456789, 1.23456789 * (1 + 1e-9), -0.0, np.nan, np.inf, 987654321.0])
    r = round_significant(x, 6)
    assert r[0] == r[1] == 1.23457 and r[2] == 0.0 and not np.signbit(r[2])
    assert np.isnan(r[3]) and np.isinf(r[4]) and r[5] == 987654000.0


def test_round_significant_equals_computing_every_power_of_ten():
    """The powers of ten are looked up in a table: bit for bit the numbers np.power gives,
    over every magnitude a float can have (subnormals, the largest, 0, NaN, inf)."""

    def computed(x, digits):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            m = np.floor(np.log10(np.abs(x)))
            m[~np.isfinite(m)] = 0
            scale = np.power(10.0, digits - 1 - m)
            out = np.round(x * scale) / scale
        bad = ~np.isfinite(out)
        out[bad] = x[bad]
        return out + 0.0

    rng = np.random.default_rng(0)
    mags = rng.uniform(-323, 308, 20000)
    x = np.concatenate(
        [
            rng.choice([-1.0, 1.0], 20000) * rng.uniform(1, 10, 20000) * 10.0 ** np.floor(mags),
            [0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, 1e-310, 1.7976931348623157e308],
            [0.1, 0.5, 999999.5, 1e22, 1e23, 123456789.0, -2.5e-7],
        ]
    )
    with np.errstate(over="ignore", invalid="ignore"):
        for digits in (1, 2, 6, 10, 15, 17, 80):
            got, want = round_significant(x, digits), computed(x, digits)
            assert np.array_equal(got.view(np.uint64), want.view(np.uint64)), digits


@pytest.mark.parametrize(
    "name, key",
    [
        ("patient_id", True),
        ("user", True),
        ("uuid", True),
        ("SessionID", True),
        ("row_index", True),
        ("visits", False),
        ("age", False),
        ("income", False),
        ("width", False),
    ],
)
def test_key_names(name, key):
    assert looks_like_key_name(name) is key
