"""``torch.utils.data`` inputs: a Dataset (map-style or iterable) or a DataLoader, in batches.

A map-style dataset is read in index order through a DataLoader that keeps the user's batch
size, collate function and workers but not the sampler, so the rows findings name are dataset
indices whatever the DataLoader shuffles. An IterableDataset is read in the order it yields
samples. Batches may be a tensor, a tuple or list ``(inputs, labels, ...)`` (positions chosen
with ``inputs=``/``target=``, default 0 and 1) or a dict (keys chosen the same way). torch is
imported only when such an object is passed, and then it is already loaded.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from datavet.errors import DatavetError, InputError, UsageError
from datavet.sources.tensor_base import (
    TensorInfo,
    TensorSource,
    _check_torch_tensor,
    check_dtype,
    is_torch_tensor,
    pick_keys,
    tensor_to_numpy,
)
from datavet.sources.tensor_files import _first_line
from datavet.sources.tensor_memory import _is_label_list, _position, a_type, is_array_like

DATASET_BATCH = 256  # batch size when the input is a Dataset (or a DataLoader without one)


def is_torch_data(obj) -> bool:
    data = sys.modules.get("torch.utils.data")
    return data is not None and isinstance(obj, (data.Dataset, data.DataLoader))


@dataclass
class TorchDataSource(TensorSource):
    """A Dataset or DataLoader; the first batch is read by :meth:`info` and reused."""

    obj: object = None
    inputs: str | None = None
    target: str | None = None
    role: str = "train"
    _pending: list = field(default_factory=list, repr=False)
    _iter: object = field(default=None, repr=False)
    _info: TensorInfo | None = field(default=None, repr=False)
    _pick: tuple = field(default=(), repr=False)  # ("key", inputs, label) | ("pos", i, j) | ()
    _dtype_name: str = field(default="float32", repr=False)
    _indexed: tuple = field(default=(), repr=False)  # (map-style dataset, batch size) | ()

    def _loader(self):
        from torch.utils.data import DataLoader, IterableDataset, SequentialSampler

        obj = self.obj
        if isinstance(obj, DataLoader):
            dataset = obj.dataset
            if isinstance(dataset, IterableDataset):
                self.notes.append(
                    f"{self.role}: an IterableDataset is read in the order it yields samples; "
                    "rows are positions in that stream"
                )
                return obj
            batched = obj.batch_sampler is not None
            batch_size = obj.batch_size if batched and obj.batch_size else DATASET_BATCH
            sequential = isinstance(obj.sampler, SequentialSampler) and not obj.drop_last
            if not sequential:
                self.notes.append(
                    f"{self.role}: every sample of the DataLoader's dataset is read in index order "
                    f"(its {type(obj.sampler).__name__} is not used), so rows are dataset indices"
                )
            self._indexed = (dataset, batch_size)
            extra = {}
            if obj.num_workers > 0:
                extra = {
                    "worker_init_fn": obj.worker_init_fn,
                    "multiprocessing_context": obj.multiprocessing_context,
                    "prefetch_factor": obj.prefetch_factor,
                    "timeout": obj.timeout,
                }
            return DataLoader(
                dataset,
                batch_size=batch_size,
                shuffle=False,
                num_workers=obj.num_workers,
                collate_fn=obj.collate_fn if batched else None,
                **extra,
            )
        if isinstance(obj, IterableDataset):
            self.notes.append(
                f"{self.role}: an IterableDataset is read in the order it yields samples; rows are "
                "positions in that stream"
            )
        else:
            self._indexed = (obj, DATASET_BATCH)
        return DataLoader(obj, batch_size=DATASET_BATCH, shuffle=False)

    def _next(self, offset: int):
        try:
            return next(self._iter)
        except StopIteration:
            return None
        except DatavetError:
            raise
        except Exception as exc:  # the user's dataset, transform or collate function failed
            failed = self._failing_sample(offset)
            if failed is not None:
                index, cause = failed
                raise InputError(
                    self.name, f"reading sample {index:,} failed: {_first_line(cause)}"
                ) from exc
            hint = ""
            if "collate" in str(exc):
                hint = (
                    "; make the Dataset return tensors or arrays of one shape (a transform such "
                    "as ToTensor(), padding or resizing)"
                )
            raise InputError(
                self.name,
                f"reading the batch at sample {offset:,} failed: {_first_line(exc)}{hint}",
            ) from exc

    def _failing_sample(self, offset: int) -> tuple[int, BaseException] | None:
        """For a map-style dataset: the first sample of the failed batch that fails on its own
        (None when each loads, e.g. when collating them failed)."""
        if not self._indexed:
            return None
        dataset, batch = self._indexed
        try:
            stop = min(offset + batch, len(dataset))
        except TypeError:
            return None
        for index in range(offset, stop):
            try:
                dataset[index]
            except Exception as exc:
                return index, exc
        return None

    def info(self) -> TensorInfo:
        if self._info is None:
            self._iter = iter(self._loader())
            batch = self._next(0)
            if batch is None:
                raise InputError(self.name, "no data rows (the dataset yielded no samples)")
            x, y = self._split(batch)
            self._pending = [(x, y)]
            self._info = TensorInfo(
                sample_shape=tuple(x.shape[1:]),
                dtype=x.dtype,
                dtype_name=self._dtype_name,
                label_shape=None if y is None else tuple(y.shape[1:]),
                label_dtype=None if y is None else y.dtype,
            )
        return self._info

    def blocks(self, max_values: int, max_rows: int):
        info = self.info()
        per_sample = max(1, int(np.prod(info.sample_shape, dtype=np.int64)))
        step = max(1, min(max_rows, max_values // per_sample))
        try:
            yield from self._blocks(info, step)
        finally:
            self._info = None  # a second pass (or one after a capped read) starts anew

    def _blocks(self, info: TensorInfo, step: int):
        offset = 0
        while True:
            if self._pending:
                x, y = self._pending.pop()
            else:
                batch = self._next(offset)
                if batch is None:
                    break
                x, y = self._split(batch)
            if tuple(x.shape[1:]) != info.sample_shape:
                raise InputError(
                    self.name,
                    f"samples have different shapes: {tuple(x.shape[1:])} from sample "
                    f"{offset:,} on, {info.sample_shape} before; datavet needs same-shape samples "
                    "(pad, crop or resize them in the Dataset's transform)",
                )
            for start in range(0, len(x), step):  # a very large batch is profiled in pieces
                stop = min(len(x), start + step)
                yield offset + start, x[start:stop], None if y is None else y[start:stop]
            offset += len(x)

    # -- one batch -> (inputs, labels) ---------------------------------------------------------

    def _split(self, batch) -> tuple[np.ndarray, np.ndarray | None]:
        if is_array_like(batch):
            if self.target is not None and self.role == "train":
                raise UsageError(
                    f"{self.name}: batches are single tensors (no labels), so there is no "
                    f"{self.target!r} to use as the target"
                )
            return self._inputs(batch), None
        if isinstance(batch, Mapping):
            if not self._pick:
                keys = [str(k) for k, v in batch.items() if is_array_like(v) or _is_label_list(v)]
                if not keys:
                    raise InputError(self.name, "batches are dicts without tensors")
                in_key, label_key, notes = pick_keys(
                    keys, self.inputs, self.target, self.name, role=self.role, what="keys"
                )
                self.notes.extend(notes)
                self._pick = ("key", in_key, label_key)
                self.label = label_key
            _, in_key, label_key = self._pick
            x = _get(batch, in_key, self.name)
            y = None if label_key is None else _get(batch, label_key, self.name)
        elif isinstance(batch, (tuple, list)):
            if not self._pick:
                n = len(batch)
                i = _position(self.inputs, n, self.name, "--inputs", default=0)
                j = _position(self.target, n, self.name, "--target", default=1 if n > 1 else None)
                if i == j:
                    raise UsageError(f"{self.name}: position {i} cannot be inputs and labels")
                self._pick = ("pos", i, j)
                self.label = None if j is None else "label"
                if self.inputs is None and self.target is None:
                    labels = "no labels" if j is None else f"labels element {j}"
                    self.notes.append(
                        f"{self.role}: batches are {type(batch).__name__}s of {n}: inputs "
                        f"element {i}, {labels} (pass --inputs/--target to choose)"
                    )
            _, i, j = self._pick
            x, y = batch[i], None if j is None else batch[j]
        else:
            raise InputError(
                self.name,
                f"batches are {type(batch).__name__}; expected a tensor, a tuple (inputs, labels) "
                "or a dict of tensors",
            )
        x = self._inputs(x)
        y = None if y is None else _labels(y, self.name)
        if y is not None and len(y) != len(x):
            raise InputError(
                self.name, f"a batch has {len(x)} inputs but {len(y)} labels; expected one each"
            )
        return x, y

    def _inputs(self, x) -> np.ndarray:
        if is_torch_tensor(x):
            _check_torch_tensor(x, self.name)
            self._dtype_name = str(x.dtype).removeprefix("torch.")
            x = tensor_to_numpy(x)
        elif isinstance(x, np.ndarray):
            self._dtype_name = x.dtype.name
        elif isinstance(x, (list, tuple)) and x and all(is_array_like(v) for v in x):
            parts = [tensor_to_numpy(v) if is_torch_tensor(v) else v for v in x]
            if len({p.shape for p in parts}) > 1:
                shapes = sorted({p.shape for p in parts})[:3]
                raise InputError(
                    self.name,
                    f"samples in a batch have different shapes ({', '.join(map(str, shapes))}); "
                    "datavet needs same-shape samples (pad, crop or resize them)",
                )
            x = np.stack(parts)
            self._dtype_name = x.dtype.name
        else:
            raise InputError(self.name, f"the inputs of a batch are {a_type(x)}, not a tensor")
        check_dtype(x.dtype, self.name, "inputs")
        if x.ndim == 0:
            raise InputError(self.name, "the inputs of a batch are a single number, not samples")
        return x


def _get(batch: Mapping, key: str, name: str):
    for k, v in batch.items():
        if str(k) == key:
            return v
    raise InputError(name, f"a batch has no key {key!r} (keys: {', '.join(map(str, batch))})")


def _labels(y, name: str) -> np.ndarray:
    if is_torch_tensor(y):
        _check_torch_tensor(y, name)
        y = tensor_to_numpy(y)
    elif not isinstance(y, np.ndarray):
        y = np.asarray(y)
        if y.dtype.hasobject:  # a list of mixed Python values: compare them as text
            y = y.astype(str)
    check_dtype(y.dtype, name, "labels")
    if y.ndim == 0:
        y = y.reshape(1)
    return y


def open_torch_data(
    obj, *, role: str, inputs: str | None, target: str | None, channel_axis
) -> TorchDataSource:
    kind = type(obj).__name__
    try:
        rows = len(obj.dataset) if hasattr(obj, "dataset") else len(obj)
    except TypeError:
        rows = None
    fmt = "dataloader" if hasattr(obj, "dataset") and hasattr(obj, "collate_fn") else "dataset"
    return TorchDataSource(
        name=f"<{role} {kind}>",
        format=fmt,
        num_rows=rows,
        channel_axis=channel_axis,
        obj=obj,
        inputs=inputs,
        target=target,
        role=role,
    )
