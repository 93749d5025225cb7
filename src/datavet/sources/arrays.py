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

The pieces: :mod:`~datavet.sources.tensor_base` (the source type and the shared checks),
:mod:`~datavet.sources.tensor_readers` (block readers), :mod:`~datavet.sources.tensor_files`
(``.npy``/``.npz``/``.pt``), :mod:`~datavet.sources.tensor_memory` (arrays and tensors in memory);
this module picks among them (:func:`is_tensor_input`, :func:`open_tensor`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from datavet.errors import UsageError
from datavet.sources.tensor_base import (
    INPUT_KEYS,
    LABEL_KEYS,
    MAX_HEADER,
    MAX_WHOLE_BYTES,
    TENSOR_SUFFIXES,
    TensorInfo,
    TensorSource,
    _check_torch_tensor,
    check_dtype,
    is_torch_tensor,
    pick_keys,
    read_npy_header,
    refuse_objects,
    tensor_to_numpy,
)
from datavet.sources.tensor_files import (
    _check_file,
    _first_line,
    import_torch,
    open_npy,
    open_npz,
    open_pt,
)
from datavet.sources.tensor_memory import (
    _is_label_list,
    _position,
    a_type,
    from_arrays,
    from_loaded,
    is_array_like,
)
from datavet.sources.tensor_readers import ArraySource, _ArrayReader, _Reader, _TensorReader


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


__all__ = [
    "INPUT_KEYS",
    "LABEL_KEYS",
    "MAX_HEADER",
    "MAX_WHOLE_BYTES",
    "TENSOR_SUFFIXES",
    "ArraySource",
    "TensorInfo",
    "TensorSource",
    "_ArrayReader",
    "_Reader",
    "_TensorReader",
    "_check_torch_tensor",
    "_first_line",
    "_is_label_list",
    "_position",
    "a_type",
    "check_dtype",
    "from_arrays",
    "from_loaded",
    "import_torch",
    "is_array_like",
    "is_tensor_input",
    "is_torch_tensor",
    "open_npy",
    "open_npz",
    "open_pt",
    "open_tensor",
    "pick_keys",
    "read_npy_header",
    "refuse_objects",
    "tensor_to_numpy",
]
