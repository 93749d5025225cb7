"""What every tensor input is (:class:`TensorSource`, :class:`TensorInfo`), and the checks
every reader shares: dtypes (objects are refused: reading them would unpickle), ``.npy``
headers, which named array holds the inputs and which the labels, torch tensors."""

from __future__ import annotations

import difflib
import sys
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass, field

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
                raise InputError(name, f"not a valid .npy array (unsupported format {version})")
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


# --- torch tensors ---------------------------------------------------------------------------


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
