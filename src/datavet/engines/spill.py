"""Row hashes kept on disk during a scan (:class:`HashSpill`), for splits too large to keep
them in memory: the row checks (``scan/rowchecks.py``) and the near-duplicate check
(``scan/neardup.py``) read them back a few hash partitions, or a slice of rows, at a time."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import weakref

import numpy as np

from datavet.scan.hashing import SPILL_BITS

_U = np.uint64


class HashSpill:
    """A split's row hashes written to disk during the scan, radix-partitioned by the top
    ``SPILL_BITS`` bits of the hash over the shared features (the hash S001 compares splits on),
    so a row, its duplicates and its copy in the other split land in the same partition.

    One file of fixed-width records (row position, feature hash, label hash, shared hash): each
    batch's records are sorted by partition (stably: row order within a partition) and written
    at the batch's own place (its first row x the record width), so batches may arrive in any
    order and from any thread; a small index keeps where each batch's partitions start. The
    near-duplicate hashes (S007), when the scan computed them, go to a second file in row
    order, beside the exact shared hashes, to be read in slices. Memory: one batch's records
    and the index (``2**SPILL_BITS`` counts a batch); the files are deleted with this object."""

    def __init__(self, directory: str | None = None):

        try:
            self.dir = tempfile.mkdtemp(prefix="datavet-hashes-", dir=directory)
        except OSError as exc:
            raise self._error(directory or tempfile.gettempdir(), exc) from None
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.dir, True)
        self.counts = np.zeros(1 << SPILL_BITS, np.int64)
        self.rows = 0
        self.has_shared: bool | None = None
        self.near_width: int | None = None
        self._index: dict[int, np.ndarray] = {}  # first row of a batch -> partition starts
        self._lock = threading.Lock()
        self._fd = os.open(os.path.join(self.dir, "rows"), os.O_RDWR | os.O_CREAT, 0o600)
        self._near_fd: int | None = None
        weakref.finalize(self, os.close, self._fd)

    @property
    def width(self) -> int:
        return 6 if self.has_shared else 4

    def add(self, offset: int, rows, labels, shared=None, near=None) -> None:
        """Write one batch's hashes (``offset``: its first row). Thread-safe."""
        n = len(rows)
        with self._lock:
            if self.has_shared is None:
                self.has_shared = shared is not None
                self.near_width = None if near is None else near.shape[1]
                if near is not None:
                    path = os.path.join(self.dir, "near")
                    self._near_fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
                    weakref.finalize(self, os.close, self._near_fd)
            if (shared is not None) != self.has_shared and not (
                shared is not None and np.array_equal(shared, rows)
            ):
                raise RuntimeError("spilled hashes: a batch with and one without shared hashes")
            if (near is None) != (self.near_width is None) or offset in self._index:
                raise RuntimeError(f"spilled hashes: batch at row {offset} does not fit")
            self._index[offset] = np.zeros(0, np.int64)  # claimed
        rec = np.empty((n, self.width), _U)
        rec[:, 0] = np.arange(offset, offset + n, dtype=np.int64).view(_U)
        rec[:, 1:3] = rows
        rec[:, 3] = labels
        if self.has_shared:
            rec[:, 4:6] = rows if shared is None else shared
        # the partition as the narrowest integer it fits: NumPy's stable argsort is a radix
        # sort for 8 and 16-bit keys (the same order, about 10x faster than on int64)
        key = ((rec[:, 4] if self.has_shared else rec[:, 1]) >> _U(64 - SPILL_BITS)).astype(
            np.uint8 if SPILL_BITS <= 8 else np.uint16 if SPILL_BITS <= 16 else np.int64
        )
        counts = np.bincount(key, minlength=1 << SPILL_BITS)
        rec = rec[np.argsort(key, kind="stable")]
        try:
            self._write(self._fd, rec, offset)
            if self.near_width is not None:
                exact = rows if shared is None else shared
                block = np.ascontiguousarray(np.hstack([near, exact]), dtype=_U)
                self._write(self._near_fd, block, offset)
        except OSError as exc:
            raise self._error(self.dir, exc) from None
        starts = np.concatenate([[0], np.cumsum(counts)])
        with self._lock:
            self._index[offset] = starts
            self.counts += counts
            self.rows += n

    @staticmethod
    def _write(fd: int, block: np.ndarray, offset: int) -> None:
        data = memoryview(block).cast("B")
        at = offset * block.shape[1] * 8
        while len(data):  # pwrite may write less than asked
            done = os.pwrite(fd, data, at)
            data, at = data[done:], at + done

    @staticmethod
    def _error(where: str, exc: OSError):
        from datavet.errors import EngineError

        return EngineError(
            f"cannot write the row hashes to a temporary file in {where} "
            f"({exc.strerror or exc}): a large split keeps them on disk, about 100 bytes a row; "
            "point TMPDIR at a folder with room"
        )

    def close(self) -> None:
        """Nothing to flush (every write went straight to the file); kept for callers."""

    def partition(self, lo: int, hi: int) -> tuple[np.ndarray, ...]:
        """(positions, (n, 2) feature hashes, label hashes, (n, 2) shared hashes) of partitions
        ``lo`` to ``hi - 1``, in row order (batches in row order, each batch's rows of a
        partition in row order, partitions of a batch one after another: sorted by position
        when the range spans several partitions)."""
        w = self.width
        parts = []
        for offset in sorted(self._index):
            starts = self._index[offset]
            a, b = int(starts[lo]), int(starts[hi])
            if b > a:
                data = os.pread(self._fd, (b - a) * w * 8, (offset + a) * w * 8)
                parts.append(np.frombuffer(data, dtype=_U).reshape(-1, w))
        rec = np.concatenate(parts) if parts else np.zeros((0, w), _U)
        del parts
        at = rec[:, 0].view(np.int64)
        if hi - lo > 1 and len(rec) and at.min() == 0 and at.max() == len(rec) - 1:
            # every row (the positions 0 .. n - 1, each once: batches write at their own place
            # in the file, so none overlap): put each record at its position, no sort
            ordered = np.empty_like(rec)
            ordered[at] = rec
            rec = ordered
        elif hi - lo > 1 and len(rec):
            rec = rec[np.argsort(rec[:, 0], kind="stable")]
        pos = rec[:, 0].view(np.int64).copy()
        rows = np.ascontiguousarray(rec[:, 1:3])
        labels = rec[:, 3].copy()
        shared = np.ascontiguousarray(rec[:, 4:6]) if self.has_shared else rows
        return pos, rows, labels, shared

    def near_slices(self, step: int = 1 << 18):
        """(first row, (n, w) near hashes, (n, 2) exact shared hashes) in slices of ``step``
        rows, in row order."""
        if self.near_width is None:
            return
        width = self.near_width + 2
        for start in range(0, self.rows, step):
            n = min(step, self.rows - start)
            data = os.pread(self._near_fd, n * width * 8, start * width * 8)
            block = np.frombuffer(data, dtype=_U).reshape(n, width)
            yield start, np.ascontiguousarray(block[:, :-2]), np.ascontiguousarray(block[:, -2:])

    def near_rows(self) -> np.ndarray | None:
        if self.near_width is None:
            return None
        parts = [near for _, near, _ in self.near_slices()]
        return np.concatenate(parts) if parts else np.zeros((0, self.near_width), _U)

    def load(self) -> list[tuple]:
        """Every hash back in memory, as one ``RowHashes`` chunk."""
        if not self.rows:
            return []
        pos, rows, labels, shared = self.partition(0, 1 << SPILL_BITS)
        del pos
        near = self.near_rows()
        return [(0, rows, labels, shared if self.has_shared else None, near)]

    @property
    def nbytes(self) -> int:  # in memory: none of the hashes
        return 0
