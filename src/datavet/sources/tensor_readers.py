"""Readers: one array read a block of samples at a time (in memory, memory-mapped, a torch
tensor, a member of an ``.npz`` archive), and :class:`ArraySource`, the tensor source over them."""

from __future__ import annotations

import mmap
import zipfile
import zlib
from dataclasses import dataclass

import numpy as np

from datavet.errors import InputError
from datavet.sources.tensor_base import (
    MAX_WHOLE_BYTES,
    TensorInfo,
    TensorSource,
    _check_torch_tensor,
    read_npy_header,
    refuse_objects,
    tensor_to_numpy,
)


class _Reader:
    shape: tuple[int, ...]
    dtype: np.dtype
    dtype_name: str

    def read(self, start: int, stop: int) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def done(self, start: int, stop: int) -> None:
        """Samples ``[start, stop)`` are profiled: memory they hold may be given back."""


class _ArrayReader(_Reader):
    """An in-memory or memory-mapped NumPy array."""

    def __init__(self, arr: np.ndarray) -> None:
        self.arr = arr
        self.shape = tuple(arr.shape)
        self.dtype = arr.dtype
        self.dtype_name = arr.dtype.name
        self._map: mmap.mmap | None = None
        self._data_at = 0
        mm = getattr(arr, "_mmap", None)
        if isinstance(mm, mmap.mmap) and hasattr(mm, "madvise") and hasattr(mmap, "MADV_DONTNEED"):
            base = np.frombuffer(mm, dtype=np.uint8)
            self._data_at = arr.ctypes.data - base.ctypes.data
            del base
            self._map = mm

    def read(self, start: int, stop: int) -> np.ndarray:
        return self.arr[start:stop]

    def done(self, start: int, stop: int) -> None:
        # Pages of a memory-mapped file that were read stay resident (and count in RSS) until
        # the mapping goes; drop them once their block is profiled. They are file pages of a
        # read-only mapping, so a later read just faults them in again.
        if self._map is None:
            return
        if self.arr.flags.c_contiguous:
            row = self.arr.itemsize * int(np.prod(self.shape[1:], dtype=np.int64))
            lo, hi = self._data_at + start * row, self._data_at + stop * row
        else:  # a Fortran-order file: a block of samples is spread over the whole mapping
            lo, hi = 0, len(self._map)
        lo -= lo % mmap.PAGESIZE
        hi = min(hi, len(self._map))
        if hi > lo:
            self._map.madvise(mmap.MADV_DONTNEED, lo, hi - lo)


class _TensorReader(_Reader):
    """A torch tensor (any device); each block is copied to a CPU NumPy array on its own."""

    def __init__(self, tensor, name: str) -> None:
        _check_torch_tensor(tensor, name)  # first: a nested tensor has no shape to read
        self.tensor = tensor
        self.shape = tuple(tensor.shape)
        self.dtype_name = str(tensor.dtype).removeprefix("torch.")
        self.dtype = tensor_to_numpy(tensor.reshape(-1)[:0]).dtype

    def read(self, start: int, stop: int) -> np.ndarray:
        return tensor_to_numpy(self.tensor[start:stop])


class _ZipMemberReader(_Reader):
    """A ``.npy`` member of an ``.npz`` archive, decompressed forward a block at a time."""

    def __init__(self, archive: zipfile.ZipFile, member: zipfile.ZipInfo, name: str) -> None:
        self.archive, self.member, self.name = archive, member, name
        self._fp, header = self._open()
        self.shape, fortran, self.dtype = header
        # before the size check: an object array stores pickles, not itemsize bytes per value
        refuse_objects(self.dtype, name)
        self.dtype_name = self.dtype.name
        data = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        present = member.file_size - self._header_bytes
        if present < data:
            raise InputError(
                name,
                f"truncated: the header declares shape {self.shape} {self.dtype} "
                f"({data:,} bytes of data) but the archive member holds {max(present, 0):,}",
            )
        self._row = self.dtype.itemsize * int(np.prod(self.shape[1:], dtype=np.int64))
        self._pos = 0
        self._whole: np.ndarray | None = None
        if fortran and len(self.shape) > 1:
            if data > MAX_WHOLE_BYTES:
                raise InputError(
                    name,
                    f"a Fortran-order array of {data:,} bytes cannot be streamed by sample; "
                    "save it in C order (np.ascontiguousarray) and audit again",
                )
            raw = _read_exact(self._fp, data, name)
            self._whole = np.frombuffer(raw, self.dtype).reshape(self.shape, order="F")

    def _open(self):
        try:
            fp = self.archive.open(self.member)
            header = read_npy_header(fp, self.name)
        except (
            zipfile.BadZipFile,
            OSError,
            EOFError,
            ValueError,
            zlib.error,
            NotImplementedError,
            RuntimeError,
        ) as exc:
            raise InputError(self.name, f"corrupt archive member: {exc}") from None
        self._header_bytes = fp.tell()
        return fp, header

    def read(self, start: int, stop: int) -> np.ndarray:
        if self._whole is not None:
            return self._whole[start:stop]
        if start < self._pos:  # read again from the start (not needed by the scan itself)
            self._fp.close()
            self._fp, _ = self._open()
            self._pos = 0
        if start > self._pos:
            _read_exact(self._fp, (start - self._pos) * self._row, self.name)
        raw = _read_exact(self._fp, (stop - start) * self._row, self.name)
        self._pos = stop
        return np.frombuffer(raw, self.dtype).reshape((stop - start, *self.shape[1:]))


def _read_exact(fp, nbytes: int, name: str) -> bytes:
    try:
        raw = fp.read(nbytes)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
        # zlib errors and CRC mismatches of a damaged archive
        raise InputError(name, f"corrupt data: {exc}") from None
    except Exception as exc:  # zlib.error is not an OSError
        raise InputError(name, f"corrupt data: {type(exc).__name__}: {exc}") from None
    if len(raw) != nbytes:
        raise InputError(name, f"truncated: expected {nbytes:,} more bytes, got {len(raw):,}")
    return raw


@dataclass
class ArraySource(TensorSource):
    """Inputs (and labels) held by readers: arrays, memory maps, tensors, archive members."""

    x: _Reader | None = None
    y: _Reader | None = None
    # a file in the x_train/y_train/x_test/y_test layout read as train: its test half, the
    # test split when no other is given
    paired_test: ArraySource | None = None

    def test_half(self) -> ArraySource | None:
        """The test split the file or dict of this train split holds (x_test/y_test beside
        x_train/y_train), read as this split is read (channel axis, format); None if none."""
        test = self.paired_test
        if test is not None:
            test.channel_axis, test.format, test.uri = self.channel_axis, self.format, self.uri
        return test

    def info(self) -> TensorInfo:
        return TensorInfo(
            sample_shape=tuple(self.x.shape[1:]),
            dtype=self.x.dtype,
            dtype_name=self.x.dtype_name,
            label_shape=None if self.y is None else tuple(self.y.shape[1:]),
            label_dtype=None if self.y is None else self.y.dtype,
        )

    def blocks(self, max_values: int, max_rows: int):
        n = self.x.shape[0]
        per_sample = max(1, int(np.prod(self.x.shape[1:], dtype=np.int64)))
        step = max(1, min(max_rows, max_values // per_sample))
        for start in range(0, n, step):
            stop = min(n, start + step)
            inputs = self.x.read(start, stop)
            labels = self.y.read(start, stop) if self.y is not None else None
            yield start, inputs, labels
            self.x.done(start, stop)
            if self.y is not None:
                self.y.done(start, stop)


def _check_lengths(x: _Reader, y: _Reader | None, name: str) -> None:
    if len(x.shape) == 0:
        raise InputError(name, "the inputs are a single number (a 0-d array), not samples")
    if y is None:
        return
    if len(y.shape) == 0 or y.shape[0] != x.shape[0]:
        raise InputError(
            name,
            f"labels must have one row per sample: {x.shape[0]:,} samples but labels of shape "
            f"{y.shape}",
        )
