"""Tensor files: ``.npy`` (memory-mapped), ``.npz`` (members streamed out of the archive) and
``.pt`` (``torch.load(weights_only=True)`` only). Nothing here unpickles."""

from __future__ import annotations

import math
import os
import pickle
import warnings
import zipfile
from pathlib import Path

import numpy as np

from datavet.errors import InputError, UsageError
from datavet.sources.tensor_base import check_dtype, read_npy_header
from datavet.sources.tensor_memory import choose_keys, from_loaded
from datavet.sources.tensor_readers import (
    ArraySource,
    _ArrayReader,
    _check_lengths,
    _ZipMemberReader,
)


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
    keys = choose_keys(list(members), inputs, target, name, role=role)
    source = _npz_split(archive, members, keys.inputs, keys.label, path, name, channel_axis)
    source.label = keys.label_name if keys.label is not None else None
    source.notes = keys.notes
    if keys.test is not None:
        tx, ty = keys.test
        test = _npz_split(archive, members, tx, ty, path, name, channel_axis)
        test.label = keys.label_name if ty is not None else None
        test.notes = [
            f"{name}: test is {tx!r}"
            + (f" with labels {ty!r}" if ty else "")
            + " (x_train/y_train/x_test/y_test layout; no other test split was given)"
        ]
        source.paired_test = test
    return source


def _npz_split(
    archive: zipfile.ZipFile, members: dict, in_key: str, label_key, path: Path, name, channel_axis
) -> ArraySource:
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
