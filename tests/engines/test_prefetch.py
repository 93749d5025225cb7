"""The local engine reads the source's batches on a thread of its own (``prefetched``): same
items in the same order, the reader's exception raised where the item would have come, and an
early stop leaves no reader thread behind."""

from __future__ import annotations

import threading

import pytest

from datavet.engines.local import prefetched


def test_items_come_in_order():
    assert list(prefetched(iter(range(100)), 2)) == list(range(100))


def test_the_readers_exception_is_raised_in_the_consumer():
    def items():
        yield 1
        yield 2
        raise ValueError("bad row group")

    got = []
    with pytest.raises(ValueError, match="bad row group"):
        for item in prefetched(items(), 1):
            got.append(item)
    assert got == [1, 2]


def test_an_early_stop_ends_the_reader():
    before = {t.name for t in threading.enumerate()}
    gen = prefetched(iter(range(10_000)), 1)
    assert next(gen) == 0
    gen.close()
    names = [t.name for t in threading.enumerate() if t.name not in before]
    assert "datavet-read" not in names
