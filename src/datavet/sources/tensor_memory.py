"""Tensors already in memory: NumPy arrays, torch tensors, ``(inputs, labels)`` pairs and dicts
of arrays (also what a ``.pt`` file holds once loaded)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from datavet.errors import InputError, UsageError
from datavet.sources.tensor_base import (
    _check_torch_tensor,
    check_dtype,
    is_torch_tensor,
    pick_keys,
    tensor_to_numpy,
)
from datavet.sources.tensor_readers import (
    ArraySource,
    _ArrayReader,
    _check_lengths,
    _Reader,
    _TensorReader,
)


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


def as_table_arrays(data, role: str):
    """A torch tensor of one or two dimensions, or an ``(X, y)`` tuple whose X is one (with one
    label per row), as NumPy arrays on the CPU, so it opens as a table like the same NumPy input
    (columns x0, x1, ...) and the same numbers get the same findings, drift included. Anything
    else (images, sequences, one-hot or mask labels, which the table path refuses) is returned
    as it is, for the tensor path."""
    pair = isinstance(data, tuple) and len(data) == 2
    x, y = data if pair else (data, None)
    if not is_torch_tensor(x):
        return data
    _check_torch_tensor(x, f"<{role} {'tensors' if pair else 'tensor'}>")
    if not 1 <= x.ndim <= 2:
        return data
    if is_torch_tensor(y):
        _check_torch_tensor(y, f"<{role} tensors>")
        if y.ndim > 2 or (y.ndim == 2 and y.shape[1] != 1):
            return data
        y = tensor_to_numpy(y)
    x = tensor_to_numpy(x)
    return (x, y) if pair else x


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
