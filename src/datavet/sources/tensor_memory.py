"""Tensors already in memory: NumPy arrays, torch tensors, ``(inputs, labels)`` pairs and dicts
of arrays (also what a ``.pt`` file holds once loaded)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from datavet.errors import InputError, UsageError
from datavet.sources.tensor_base import (
    INPUT_KEYS,
    LABEL_KEYS,
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

SPLITS = ("train", "test")


def split_halves(keys) -> dict[str, tuple[str, str | None]] | None:
    """The train and test arrays of a file in the Keras layout (``x_train``, ``y_train``,
    ``x_test``, ``y_test``; also ``X_train``, ``images_test``, ``label_train``...):
    ``{"train": (inputs, labels or None), "test": (...)}``; None unless both inputs are there."""
    keys = set(keys)
    out = {}
    for split in SPLITS:
        x = next((f"{k}_{split}" for k in INPUT_KEYS if f"{k}_{split}" in keys), None)
        y = next((f"{k}_{split}" for k in LABEL_KEYS if f"{k}_{split}" in keys), None)
        if x is None:
            return None
        out[split] = (x, y)
    return out


@dataclass
class Keys:
    """Which named arrays hold what, for one split: ``label_name`` is what the report calls the
    labels; ``test``: the (inputs, labels) keys of the test half of a Keras-layout file read
    as the train split (the test split when no other is given)."""

    inputs: str
    label: str | None
    label_name: str | None
    notes: list[str]
    test: tuple[str, str | None] | None = None


def choose_keys(
    keys: list[str], inputs: str | None, target: str | None, name: str, *, role: str
) -> Keys:
    """The arrays of an archive or dict that hold the inputs and labels of split ``role``.

    A file in the Keras layout (``x_train``, ``y_train``, ``x_test``, ``y_test``) is read as
    train ``x_train``/``y_train`` and test ``x_test``/``y_test`` (the test half comes with the
    train split, for an audit given no other test split); as the test split, keys asked for
    that end in ``_train`` are read as their ``_test`` twins. Arrays left unread are named in a
    note."""
    halves = split_halves(keys)
    notes: list[str] = []
    if halves is not None and inputs is None and target is None:
        in_key, label_key = halves[role]
        notes.append(f"{name}: x_train/y_train/x_test/y_test layout")
    else:
        if halves is not None and role == "test":
            twins = {f"{k}_train": f"{k}_test" for k in (*INPUT_KEYS, *LABEL_KEYS)}
            asked = (inputs, target)
            inputs, target = (twins[k] if twins.get(k) in keys else k for k in asked)
            for was, now in zip(asked, (inputs, target), strict=True):
                if was != now:
                    notes.append(f"{name}: test split: {now!r} read for {was!r} (its test twin)")
        for x, y in (halves or {}).values():  # one key of a half given: the other goes with it
            if inputs == x and target is None:
                target = y
            elif target == y and y is not None and inputs is None:
                inputs = x
        in_key, label_key, picked = pick_keys(keys, inputs, target, name, role=role)
        notes += picked
    half = next((s for s in SPLITS if halves and halves[s] == (in_key, label_key)), None)
    label_name = label_key
    test = None
    used = {in_key, label_key}
    if half is not None:  # one half of the Keras layout: the other belongs to the other split
        used |= {*halves["train"], *halves["test"]}
        if label_key is not None:
            label_name = label_key.rsplit("_", 1)[0]
        labels = f" with labels {label_key!r}" if label_key else ""
        if half == "train" and role == "train":
            test = halves["test"]
            tx, ty = test
            rest = f"{tx!r} and {ty!r} are" if ty else f"{tx!r} is"
            what = f"train is {in_key!r}{labels}; {rest} the test split unless another is given"
        else:
            what = f"{role} is {in_key!r}{labels}"
        if notes and notes[0] == f"{name}: x_train/y_train/x_test/y_test layout":
            notes[0] += f": {what}"
        else:
            notes.insert(0, f"{name}: x_train/y_train/x_test/y_test layout: {what}")
    unused = [k for k in keys if k not in used]
    if unused:
        notes.append(
            f"{name}: {'array' if len(unused) == 1 else 'arrays'} not audited: "
            f"{', '.join(map(repr, unused))} (--inputs/--target choose the arrays; a test split "
            "saved in a file of its own is audited with --test)"
        )
    return Keys(in_key, label_key, label_name, notes, test)


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
        keys = choose_keys(list(tensors), inputs, target, name, role=role)
        source = _dict_split(tensors, keys.inputs, keys.label, keys.label_name, name)
        source.notes = keys.notes
        if keys.test is not None:
            tx, ty = keys.test
            source.paired_test = _dict_split(tensors, tx, ty, keys.label_name, name)
            source.paired_test.notes = [
                f"{name}: test is {tx!r}"
                + (f" with labels {ty!r}" if ty else "")
                + " (x_train/y_train/x_test/y_test layout; no other test split was given)"
            ]
        return source
    raise InputError(
        name,
        f"holds {a_type(obj)}; expected a tensor, a tuple (inputs, labels) or a dict of tensors",
    )


def _dict_split(tensors: dict, x: str, y: str | None, label: str | None, name: str):
    return from_arrays(
        tensors[x],
        None if y is None else tensors[y],
        name,
        label=label,
        fmt="torch" if is_torch_tensor(tensors[x]) else "numpy",
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
