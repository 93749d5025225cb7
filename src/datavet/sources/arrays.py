"""Tensor inputs: ``.npy``, ``.npz`` and ``.pt`` files, NumPy arrays and torch tensors.

A tensor input is read as a stream of ``(offset, inputs, labels)`` blocks: ``inputs`` has shape
``(n, *sample_shape)``, ``labels`` is ``None`` or has ``n`` rows, and ``offset`` is the index of
the block's first sample in the dataset, so findings name samples by their index.

Nothing here unpickles. ``.npy`` headers (also inside ``.npz``) are parsed with
``ast.literal_eval`` by NumPy's format module and checked (dtype, shape x itemsize against the
bytes present) before any data is read; arrays of Python objects are refused, since loading them
means unpickling. ``.npy`` files are memory-mapped and read a block of samples at a time, and the
pages of a block are handed back once it is profiled, so memory stays bounded by the block, not
the file. ``.npz`` members are streamed out of the zip archive, never loaded whole. ``.pt`` files
are read with ``torch.load(weights_only=True)`` only, with no fallback.
"""

from __future__ import annotations

import difflib
import math
import mmap
import os
import pickle
import sys
import tokenize
import warnings
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from datavet.errors import InputError, UsageError

TENSOR_SUFFIXES = {".npy", ".npz", ".pt", ".pth"}
# Names looked for when the user does not say which array holds what.
INPUT_KEYS = ("inputs", "input", "x", "X", "images", "image", "data", "features", "pixel_values")
LABEL_KEYS = ("label", "labels", "target", "targets", "y", "Y", "class", "classes")
MAX_HEADER = 10_000  # NumPy's own guard against a header built to exhaust memory
MAX_WHOLE_BYTES = 1 << 30  # a Fortran-order .npz member must be read whole: at most 1 GiB
_INPUT_KINDS = "biuf"  # bool, signed, unsigned, float
_LABEL_KINDS = "biufUS"


@dataclass(frozen=True)
class TensorInfo:
    """What a tensor input holds, known before the scan (for a DataLoader: its first batch)."""

    sample_shape: tuple[int, ...]
    dtype: np.dtype  # the dtype blocks arrive in
    dtype_name: str  # the dtype as stored ("bfloat16" arrives as float32)
    label_shape: tuple[int, ...] | None  # per-sample label shape; None without labels
    label_dtype: np.dtype | None = None


@dataclass
class TensorSource:
    """A named stream of blocks of samples with their global sample offsets.

    Subclasses implement :meth:`info` and :meth:`blocks`. ``label`` is the name the labels get
    in the report (the key or array they came from, or ``"label"``).
    """

    name: str
    format: str
    label: str | None = None
    num_rows: int | None = None
    channel_axis: int | str | None = None  # as asked: an axis, "none", or None (decide)
    uri: str | None = None
    notes: list[str] = field(default_factory=list)

    def info(self) -> TensorInfo:  # pragma: no cover
        raise NotImplementedError

    def blocks(
        self, max_values: int, max_rows: int
    ) -> Iterator[tuple[int, np.ndarray, np.ndarray | None]]:  # pragma: no cover
        """Yield ``(offset, inputs, labels)`` in dataset order, at most ``max_rows`` samples and
        (unless one sample is larger) ``max_values`` input values at a time."""
        raise NotImplementedError


# --- readers: one array, read a block of samples at a time -----------------------------------


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


# --- the source over readers -----------------------------------------------------------------


@dataclass
class ArraySource(TensorSource):
    """Inputs (and labels) held by readers: arrays, memory maps, tensors, archive members."""

    x: _Reader | None = None
    y: _Reader | None = None

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


# --- checks ----------------------------------------------------------------------------------


def refuse_objects(dtype: np.dtype, name: str) -> None:
    if dtype.hasobject:
        raise InputError(
            name,
            "refused: the array holds Python objects (dtype object); reading it would unpickle "
            "them, and unpickling can run arbitrary code, so datavet never does "
            "(np.load(allow_pickle=False)). Save a numeric array instead",
        )


def check_dtype(dtype: np.dtype, name: str, what: str) -> None:
    """Inputs must be numbers or booleans; labels may also be text."""
    refuse_objects(dtype, name)
    if dtype.names is not None:
        raise InputError(
            name,
            f"the {what} are a structured array (fields {', '.join(dtype.names)}); save inputs "
            "and labels as separate arrays (np.savez(path, inputs=X, label=y))",
        )
    kinds = _INPUT_KINDS if what == "inputs" else _LABEL_KINDS
    if dtype.kind not in kinds:
        raise InputError(
            name, f"the {what} have dtype {dtype}; expected numbers or booleans for {what}"
        )


def read_npy_header(fp, name: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, fortran_order, dtype) from a ``.npy`` stream, without reading any data."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(fp)
        if version == (1, 0):
            header = fmt.read_array_header_1_0(fp, max_header_size=MAX_HEADER)
        elif version == (2, 0):
            header = fmt.read_array_header_2_0(fp, max_header_size=MAX_HEADER)
        else:
            reader = getattr(fmt, "_read_array_header", None)
            if reader is None:
                raise ValueError(f"unsupported .npy format version {version}")
            header = reader(fp, version, max_header_size=MAX_HEADER)
    except (ValueError, EOFError, OSError, SyntaxError, tokenize.TokenError) as exc:
        raise InputError(name, f"not a valid .npy array ({exc})") from None
    shape, fortran, dtype = header
    return tuple(int(s) for s in shape), bool(fortran), dtype


def _closest(key: str, keys: list[str]) -> str:
    close = difflib.get_close_matches(key, keys, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def pick_keys(
    keys: list[str],
    inputs: str | None,
    target: str | None,
    name: str,
    *,
    role: str,
    what: str = "arrays",
) -> tuple[str, str | None, list[str]]:
    """(inputs key, label key or None, notes) among the named arrays of an archive or dict."""
    notes: list[str] = []
    listed = ", ".join(map(repr, keys))
    label = None
    if target is not None:
        if target in keys:
            label = target
        elif role == "train":
            raise InputError(
                name,
                f"no array {target!r} for the target{_closest(target, keys)} It holds: {listed}",
            )
    else:
        label = next((k for k in LABEL_KEYS if k in keys), None)
        if label is not None:
            notes.append(f"labels: {role} {what[:-1]} {label!r} (found by name; pass --target)")
    if inputs is not None:
        if inputs not in keys:
            raise InputError(
                name,
                f"no array {inputs!r} for the inputs{_closest(inputs, keys)} It holds: {listed}",
            )
    else:
        rest = [k for k in keys if k != label]
        if len(rest) == 1:
            inputs = rest[0]
        else:
            inputs = next((k for k in INPUT_KEYS if k in rest), None)
        if inputs is None:
            raise UsageError(
                f"{name}: holds {what} {listed}; pass --inputs KEY to say which holds the "
                "inputs (and --target KEY for the labels)"
            )
    if inputs == label:
        raise UsageError(f"{name}: {inputs!r} cannot be both the inputs and the labels")
    return inputs, label, notes


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


# --- files -----------------------------------------------------------------------------------


def _check_file(path: Path, name: str) -> None:
    if not path.exists():
        raise InputError(name, "no such file or directory")
    if path.is_dir():
        raise InputError(name, "is a directory; expected a .npy, .npz or .pt file")
    if not os.access(path, os.R_OK):
        raise InputError(name, "permission denied")
    if path.stat().st_size == 0:
        raise InputError(name, "file is empty (0 bytes)")


def open_npy(path: Path, name: str, *, target: str | None, channel_axis) -> ArraySource:
    with path.open("rb") as fp:
        shape, _, dtype = read_npy_header(fp, name)
        data_at = fp.tell()
    check_dtype(dtype, name, "inputs")
    data = math.prod(shape) * dtype.itemsize  # Python ints: a damaged shape cannot overflow
    present = path.stat().st_size - data_at
    if present < data:
        raise InputError(
            name,
            f"truncated: the header declares shape {shape} {dtype} ({data:,} bytes of data) but "
            f"the file holds {max(present, 0):,}",
        )
    if target is not None:
        raise UsageError(
            f"{name}: a .npy file holds one array (the inputs), so there is no {target!r} to use "
            "as the target; save inputs and labels together with np.savez(path, inputs=X, "
            "label=y)"
        )
    if len(shape) == 0:
        raise InputError(name, "the inputs are a single number (a 0-d array), not samples")
    if data == 0:
        arr = np.zeros(shape, dtype)
    else:
        try:
            arr = np.load(path, mmap_mode="r", allow_pickle=False)
        except (ValueError, OSError, OverflowError) as exc:
            raise InputError(name, f"could not map the array: {exc}") from None
    x = _ArrayReader(arr)
    return ArraySource(
        name=name, format="npy", num_rows=shape[0], channel_axis=channel_axis, uri=str(path), x=x
    )


def open_npz(
    path: Path, name: str, *, inputs: str | None, target: str | None, role: str, channel_axis
) -> ArraySource:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, NotImplementedError, ValueError) as exc:  # bad names
        raise InputError(name, f"not a valid .npz (zip) archive: {exc}") from None
    members = {
        (m.filename[:-4] if m.filename.endswith(".npy") else m.filename): m
        for m in archive.infolist()
        if m.filename and not m.is_dir()  # a damaged entry can have no name
    }
    if not members:
        raise InputError(name, "the archive holds no arrays")
    in_key, label_key, notes = pick_keys(list(members), inputs, target, name, role=role)
    x = _ZipMemberReader(archive, members[in_key], f"{name}[{in_key}]")
    check_dtype(x.dtype, f"{name}[{in_key}]", "inputs")
    y = None
    if label_key is not None:
        y = _ZipMemberReader(archive, members[label_key], f"{name}[{label_key}]")
        check_dtype(y.dtype, f"{name}[{label_key}]", "labels")
    _check_lengths(x, y, name)
    return ArraySource(
        name=name,
        format="npz",
        label=label_key,
        num_rows=x.shape[0],
        channel_axis=channel_axis,
        uri=str(path),
        notes=notes,
        x=x,
        y=y,
    )


def import_torch(name: str, what: str = "read .pt files"):
    try:
        import torch
    except ImportError:
        raise UsageError(
            f"{name}: PyTorch is needed to {what}: pip install 'datavet[torch]'"
        ) from None
    return torch


def _torch_version(torch) -> tuple[int, int]:
    parts = torch.__version__.split("+")[0].split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (ValueError, IndexError):
        return (0, 0)


def open_pt(
    path: Path, name: str, *, inputs: str | None, target: str | None, role: str, channel_axis
) -> ArraySource:
    torch = import_torch(name)
    if _torch_version(torch) < (2, 6):
        # CVE-2025-32434: torch.load(weights_only=True) itself runs code before 2.6.
        raise UsageError(
            f"{name}: reading .pt files safely needs torch>=2.6 (this is {torch.__version__}); "
            "pip install -U 'torch>=2.6'"
        )
    try:
        with warnings.catch_warnings():
            # torch's deprecation chatter (TypedStorage, quantized tensors, nested tensors) is
            # not the user's business: a tensor it cannot audit gets its own one-line error
            warnings.simplefilter("ignore")
            try:
                obj = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
            except RuntimeError as exc:
                if "mmap" not in str(exc):
                    raise
                # Files in the legacy (non-zip) format cannot be memory-mapped; still weights-only.
                obj = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        raise InputError(name, _refusal(exc)) from None
    except Exception as exc:  # noqa: BLE001 - only torch.load runs here: a damaged file
        # can fail deep in the unpickler (IndexError, KeyError, struct.error...): the file is
        # unreadable, which is the user's answer, not an internal error
        raise InputError(name, f"not a readable .pt file: {_first_line(exc)}") from None
    source = from_loaded(obj, name, inputs=inputs, target=target, role=role)
    source.format = "pt"
    source.uri = str(path)
    source.channel_axis = channel_axis
    return source


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


def _refusal(exc: BaseException) -> str:
    text = str(exc)
    what = "objects other than tensors"
    for line in text.splitlines():
        if "Unsupported global" in line:
            # "... Unsupported global: GLOBAL mymodule.MyClass was not an allowed global ..."
            glob = line.split("GLOBAL", 1)[-1].strip().split()[0] if "GLOBAL" in line else ""
            if glob:
                what = f"a pickled Python object ({glob})"
            break
    return (
        f"refused: the file holds {what}; loading it would unpickle it, and unpickling can run "
        "arbitrary code, so datavet reads .pt files with torch.load(weights_only=True) only "
        "and never falls back. Save plain tensors: torch.save({'inputs': X, 'label': y}, path)"
    )


# --- in memory -------------------------------------------------------------------------------


def is_torch_tensor(obj) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor)


def _check_torch_tensor(t, name: str) -> None:
    if getattr(t, "is_nested", False):
        raise InputError(
            name,
            "nested (ragged) tensors are not supported: samples must share one shape; pad them "
            "(torch.nested.to_padded_tensor) and save the padded tensor",
        )
    if getattr(t, "is_meta", False) or t.device.type == "meta":
        raise InputError(name, "a tensor on the meta device holds no data (only its shape)")
    if getattr(t, "is_quantized", False):
        raise InputError(
            name,
            f"quantized tensors ({t.dtype}) are not supported; save tensor.dequantize() instead",
        )
    if t.is_sparse or t.layout != sys.modules["torch"].strided or t.is_complex():
        raise InputError(
            name,
            f"tensors of type {t.dtype} ({t.layout}) are not supported; pass dense real tensors",
        )
    if t.dtype not in _torch_ok_dtypes():
        raise InputError(name, f"tensors of dtype {t.dtype} are not supported")


def _torch_ok_dtypes() -> set:
    torch = sys.modules["torch"]
    return {
        torch.bool,
        torch.uint8,
        torch.int8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.float16,
        torch.bfloat16,
        torch.float32,
        torch.float64,
        *(getattr(torch, n) for n in ("uint16", "uint32", "uint64") if hasattr(torch, n)),
    }


def tensor_to_numpy(t) -> np.ndarray:
    """A CPU NumPy copy (or view) of a tensor; bfloat16 becomes float32 (NumPy has none)."""
    torch = sys.modules["torch"]
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    if t.dtype == torch.bfloat16:
        t = t.float()
    if t.is_conj() or t.is_neg():
        t = t.resolve_conj().resolve_neg()
    return t.numpy()


def _reader(value, name: str, what: str) -> _Reader:
    if is_torch_tensor(value):
        reader = _TensorReader(value, name)
    else:
        if not isinstance(value, np.ndarray):
            value = np.asarray(value)
        reader = _ArrayReader(value)
    check_dtype(reader.dtype, name, what)
    return reader


def is_array_like(value) -> bool:
    return isinstance(value, np.ndarray) or is_torch_tensor(value)


def from_arrays(
    x, y, name: str, *, label: str | None = None, fmt: str = "numpy", channel_axis=None
) -> ArraySource:
    """Inputs ``x`` (array or tensor) and labels ``y`` (array, tensor, list, or None)."""
    xr = _reader(x, name, "inputs")
    yr = None
    if y is not None:
        if isinstance(y, (list, tuple)) and not is_array_like(y):
            y = np.asarray(y)
        yr = _reader(y, name, "labels")
    _check_lengths(xr, yr, name)
    return ArraySource(
        name=name,
        format=fmt,
        label=(label or "label") if yr is not None else None,
        num_rows=xr.shape[0],
        channel_axis=channel_axis,
        x=xr,
        y=yr,
    )


def from_loaded(
    obj, name: str, *, inputs: str | None, target: str | None, role: str
) -> ArraySource:
    """What ``torch.load`` returned (or an in-memory dict/tuple): a tensor, a tuple or list
    ``(inputs, labels, ...)``, or a dict of tensors."""
    fmt = "torch" if is_torch_tensor(obj) else "numpy"
    values = (
        obj.values()
        if isinstance(obj, Mapping)
        else obj
        if isinstance(obj, (tuple, list))
        else [obj]
    )
    for value in values:  # before anything reads a shape: a nested tensor has none
        if is_torch_tensor(value):
            _check_torch_tensor(value, name)
    if is_array_like(obj):
        if target is not None and role == "train":
            raise UsageError(
                f"{name}: holds a single tensor (the inputs), so there is no {target!r} to use as "
                "the target; save (inputs, labels) or a dict of both"
            )
        return from_arrays(obj, None, name, fmt=fmt)
    if isinstance(obj, (tuple, list)):
        items = list(obj)
        i_in = _position(inputs, len(items), name, "--inputs", default=0)
        i_lab = _position(
            target, len(items), name, "--target", default=1 if len(items) > 1 else None
        )
        for i in (i_in, i_lab):
            if (
                i is not None
                and not is_array_like(items[i])
                and not (i == i_lab and _is_label_list(items[i]))
            ):
                raise InputError(
                    name,
                    f"element {i} is {a_type(items[i])}, not a tensor; expected "
                    "(inputs, labels) tensors",
                )
        return from_arrays(
            items[i_in],
            None if i_lab is None else items[i_lab],
            name,
            fmt="torch" if is_torch_tensor(items[i_in]) else "numpy",
        )
    if isinstance(obj, Mapping):
        tensors = {str(k): v for k, v in obj.items() if is_array_like(v)}
        if not tensors:
            kinds = sorted({type(v).__name__ for v in obj.values()})
            raise InputError(
                name, f"holds a dict of {', '.join(kinds) or 'nothing'}, with no tensors in it"
            )
        in_key, label_key, notes = pick_keys(list(tensors), inputs, target, name, role=role)
        source = from_arrays(
            tensors[in_key],
            None if label_key is None else tensors[label_key],
            name,
            label=label_key,
            fmt="torch" if is_torch_tensor(tensors[in_key]) else "numpy",
        )
        source.notes = notes
        return source
    raise InputError(
        name,
        f"holds {a_type(obj)}; expected a tensor, a tuple (inputs, labels) or a dict of tensors",
    )


def a_type(value) -> str:
    """The value's type name with its article: a list, an int."""
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def _is_label_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, (int, float, str, bool)) for v in value)


def _position(key, n: int, name: str, flag: str, default: int | None) -> int | None:
    if key is None:
        return default
    try:
        i = int(key)
    except (TypeError, ValueError):
        raise UsageError(
            f"{name}: holds a tuple of {n} items; {flag} must be a position (0 to {n - 1}), "
            f"not {key!r}"
        ) from None
    if not -n <= i < n:
        raise UsageError(f"{name}: {flag} {i} is out of range for a tuple of {n} items")
    return i % n


# --- dispatch --------------------------------------------------------------------------------


def _suffix(data) -> str:
    return Path(os.fspath(data)).suffix.lower()


def is_tensor_input(data) -> bool:
    """Inputs that take the tensor path (the rest are tables)."""
    if isinstance(data, TensorSource):
        return True
    if isinstance(data, (str, os.PathLike)):
        return _suffix(data) in TENSOR_SUFFIXES
    if is_torch_tensor(data):
        return True
    if isinstance(data, np.ndarray):
        return data.ndim > 2
    if isinstance(data, (tuple, list)) and len(data) == 2:
        x = data[0]
        return is_torch_tensor(x) or (isinstance(x, np.ndarray) and x.ndim > 2)
    if isinstance(data, Mapping) and data and all(is_array_like(v) for v in data.values()):
        return True
    from datavet.sources.torch_data import is_torch_data

    return is_torch_data(data)


def open_tensor(
    data,
    *,
    role: str = "train",
    target: str | None = None,
    inputs: str | None = None,
    channel_axis=None,
) -> TensorSource:
    """Open a tensor input (see :func:`is_tensor_input`) for scanning."""
    if isinstance(data, TensorSource):
        return data
    if isinstance(data, (str, os.PathLike)):
        path = Path(data)
        name = str(data)
        _check_file(path, name)
        kind = _suffix(path)
        if kind == ".npy":
            if inputs is not None:
                raise UsageError(f"{name}: a .npy file holds one array; --inputs does not apply")
            return open_npy(path, name, target=target, channel_axis=channel_axis)
        if kind == ".npz":
            return open_npz(
                path, name, inputs=inputs, target=target, role=role, channel_axis=channel_axis
            )
        return open_pt(
            path, name, inputs=inputs, target=target, role=role, channel_axis=channel_axis
        )
    from datavet.sources.torch_data import is_torch_data, open_torch_data

    if is_torch_data(data):
        return open_torch_data(
            data, role=role, inputs=inputs, target=target, channel_axis=channel_axis
        )
    if isinstance(data, np.ndarray) or is_torch_tensor(data):
        kind = "tensor" if is_torch_tensor(data) else "array"
        source = from_loaded(data, f"<{role} {kind}>", inputs=inputs, target=target, role=role)
    elif isinstance(data, (tuple, list)):
        x, y = data
        kind = "tensors" if is_torch_tensor(x) else "arrays"
        source = from_arrays(
            x,
            y,
            f"<{role} {kind}>",
            label=target,
            fmt="torch" if is_torch_tensor(x) else "numpy",
        )
    else:
        source = from_loaded(dict(data), f"<{role} dict>", inputs=inputs, target=target, role=role)
    source.channel_axis = channel_axis
    return source
