"""The tensor pass: every block of a tensor split read once, in order, and profiled by the
engine's workers (:func:`datavet.scan.tensor_block.profile_block`, a pure function of the
block); the block profiles are merged in order (:func:`datavet.scan.tensor_block.fold`).

The engine decides where blocks are profiled: the local engine on a few threads (NumPy releases
the GIL), see :meth:`datavet.engines.local.LocalEngine.profile_tensors`. The block size shrinks
as workers are added, so the memory held by blocks in flight stays about ``IN_FLIGHT_VALUES``
values whatever the number of cores.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from datavet.errors import InputError, UsageError
from datavet.scan.profile import Profile
from datavet.scan.reservoir import DEFAULT_SAMPLE_ROWS
from datavet.scan.tensor_block import (
    TensorPlan,
    fold,
    pooled_names,
    profile_block,
    sample_budget,
    without_labels,
)
from datavet.scan.tensor_layout import Layout, resolve_layout

IN_FLIGHT_VALUES = 1 << 22  # input values in blocks being profiled at once, over all workers
MIN_BLOCK_VALUES = 1 << 18  # (each value costs ~24 bytes of float64 copies and hash words)
MAX_WORKERS = 4  # threads profiling tensor blocks (the local engine's default: up to this)
# a torch Dataset/DataLoader (possibly endless) is read up to this many samples by default
DEFAULT_MAX_SAMPLES = 1_000_000

# map_blocks(function, tasks) -> function(*task) for every task, in task order
MapBlocks = Callable[[Callable, Iterable[tuple]], Iterator]


def serial(function: Callable, tasks: Iterable[tuple]) -> Iterator:
    """A ``map_blocks`` that profiles every block on this thread."""
    return (function(*task) for task in tasks)


def scan_split(
    source,
    plan: TensorPlan,
    split: str,
    *,
    batch_rows: int,
    map_blocks: MapBlocks = serial,
    workers: int = 1,
    max_samples: int | None = None,
) -> tuple[Profile, str]:
    """Profile every block of a tensor source; returns (profile, label mode used).

    Blocks are read in order on this thread and profiled by ``map_blocks`` (``workers`` of
    them at once). Labels of one vector of C >= 2 values per sample are read as one-hot rows
    and kept as such when all but a few rows of the whole split are (:func:`_settle_one_hot`), so
    neither where a bad row sits nor the batch size decides."""
    block_values = max(MIN_BLOCK_VALUES, IN_FLIGHT_VALUES // max(1, workers))
    mode = plan.label_mode
    deciding = mode == "decide"
    width = 0  # values per label row
    notes = source.notes

    def tasks() -> Iterator[tuple]:
        nonlocal mode, plan, width
        for offset, x, y in source.blocks(block_values, batch_rows):
            if len(x) == 0:
                continue
            if max_samples is not None and offset + len(x) > max_samples:
                x, y = (
                    x[: max(0, max_samples - offset)],
                    None if y is None else y[: max_samples - offset],
                )
                _capped(source, split, max_samples, notes)
                if len(x) == 0:
                    return
            if tuple(x.shape[1:]) != plan.layout.shape:
                raise InputError(
                    source.name,
                    f"samples from {offset:,} on have shape {tuple(x.shape[1:])}, earlier ones "
                    f"{plan.layout.shape}",
                )
            if mode == "decide":
                mode = _label_mode(y, source, split, notes)
                width = 0 if y is None else int(np.prod(y.shape[1:], dtype=np.int64))
                plan = TensorPlan(plan.layout, plan.label, mode, plan.sample_rows, plan.seed)
            if workers > 1 and x.base is not None:
                # Read a view (of a memory map, a tensor) now, on this thread: the source gives
                # its pages back when the next block is asked for, before a worker would read.
                x = np.array(x)
            yield x, y, offset, plan, split

    profile = fold(map_blocks(profile_block, tasks()))
    profile = profile or Profile(split=split)
    if deciding and mode == "onehot":
        profile, mode = _settle_one_hot(profile, width, split, notes)
    profile.source = source.name
    profile.format = source.format
    # Read by L002: a loader that draws its rows in random order trains on no fixed order.
    profile.shuffled_by = _shuffled_by(source)
    return profile, mode


def _capped(source, split: str, max_samples: int, notes: list[str]) -> None:
    note = (
        f"{split}: capped: only the first {max_samples:,} samples of {source.name} were read "
        "(a Dataset or DataLoader is read up to max_samples, default "
        f"{DEFAULT_MAX_SAMPLES:,}; pass max_samples= to read more)"
    )
    if note not in notes:
        notes.append(note)


def _label_mode(y: np.ndarray | None, source, split: str, notes: list[str]) -> str:
    """The label mode from the first block's label shape alone: one vector of C >= 2 numbers per
    sample is read as one-hot rows until the whole split is seen (:func:`_settle_one_hot`)."""
    if y is None:
        return "none"
    shape = tuple(y.shape[1:])
    if shape in ((), (1,)):
        return "class"
    if len(shape) == 1 and y.dtype.kind in "biuf":
        return "onehot"
    notes.append(
        f"{split}: labels have shape {shape} per sample (not class indices or one-hot rows): "
        "label rules skipped"
    )
    return "none"


def _settle_one_hot(
    profile: Profile, width: int, split: str, notes: list[str]
) -> tuple[Profile, str]:
    """Keep the one-hot reading of a split's label vectors when all but a few rows are one-hot
    (at most :data:`ONE_HOT_OUTLIERS` of them: the others are then missing labels, V003,
    wherever they are); else the labels are something else (multi-label rows where most rows
    carry one tag, soft labels, several targets) and the label rules are skipped."""
    label = profile.label
    if label is None or not label.rows:
        return profile, "onehot"
    other = label.missing  # rows that are not one-hot (a NaN row is not one-hot either)
    if other <= ONE_HOT_OUTLIERS * label.rows:
        notes.append(
            f"{split}: labels are one-hot rows of {width} values: the class is the index of the "
            "1 (a row that is not one-hot counts as a missing label"
            + (f": {other:,} of {label.rows:,} here)" if other else ")")
        )
        return profile, "onehot"
    notes.append(
        f"{split}: labels have shape ({width},) per sample and {other:,} of {label.rows:,} rows "
        "are not one-hot (not class indices or one-hot rows: multi-label or soft labels?): "
        "label rules skipped"
    )
    return without_labels(profile), "none"


def _shuffled_by(source) -> str | None:
    """The sampler's name when ``source`` is a DataLoader that draws its samples in random
    order (a RandomSampler, SubsetRandomSampler, WeightedRandomSampler, or a sampler with
    ``shuffle=True`` such as DistributedSampler's); else None."""
    loader = getattr(source, "obj", None)
    batches = getattr(loader, "batch_sampler", None)
    for sampler in (getattr(loader, "sampler", None), getattr(batches, "sampler", None)):
        name = type(sampler).__name__
        if name in SHUFFLING_SAMPLERS or getattr(sampler, "shuffle", False) is True:
            return name
    return None


# One-hot labels with more rows than this share that are not one-hot are not one-hot labels
# (multi-label rows, soft labels): a broken row is rare, a second tag is not
ONE_HOT_OUTLIERS = 0.05

# torch's samplers that draw a dataset's indices in random order
SHUFFLING_SAMPLERS = ("RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler")


@dataclass
class TensorRun:
    """What the tensor pass gives ``audit``: the profiles and what the report says of them."""

    profiles: dict[str, Profile]
    target: str | None
    target_note: str | None
    features: list[str]  # the baselines' features (pooled, in the sample table)
    columns: dict[str, tuple[tuple[str, str, str], ...]]  # S004's view: split -> columns
    notes: list[str] = field(default_factory=list)


def profile_tensors(
    train,
    test=None,
    *,
    sample_rows: int = DEFAULT_SAMPLE_ROWS,
    batch_rows: int = 65_536,
    map_blocks: MapBlocks = serial,
    workers: int = 1,
    max_samples: int | None = None,
) -> TensorRun:
    """Profile tensor splits (TensorSources) into Profiles the auditors read like tables.

    ``max_samples``: read at most this many samples of each split; by default a torch Dataset
    or DataLoader (which may never end) is read up to ``DEFAULT_MAX_SAMPLES`` and arrays whole.
    A capped split says so in the notes. ``map_blocks`` and ``workers``: the engine's (see
    :func:`scan_split`)."""
    from datavet.sources.arrays import TensorSource

    def cap(src) -> int | None:
        if max_samples is not None:
            return max_samples
        # a stream may be endless (a torch IterableDataset, a repeated Hugging Face one)
        streams = ("dataset", "dataloader", "hf-iterable")
        return DEFAULT_MAX_SAMPLES if src.format in streams else None

    for role, src in (("train", train), ("test", test)):
        if src is not None and not isinstance(src, TensorSource):
            raise UsageError(
                f"train and test must both be tensors or both be tables; {role} is a table "
                f"({src.name})"
            )
    info = train.info()
    for src in (train, test):
        shape = None if src is None else (info if src is train else src.info()).sample_shape
        if shape is not None and 0 in shape:
            raise InputError(
                src.name,
                f"samples of shape ({', '.join(map(str, shape))}) hold no values (an axis of "
                "length 0); nothing to audit",
            )
    layout = resolve_layout(info.sample_shape, info.dtype_name, train.channel_axis)
    label = train.label if info.label_shape is not None else None
    plan = TensorPlan(layout, label, "decide", sample_budget(layout, sample_rows))
    profiles = {}
    train_profile, mode = scan_split(
        train,
        plan,
        "train",
        max_samples=cap(train),
        batch_rows=batch_rows,
        map_blocks=map_blocks,
        workers=workers,
    )
    profiles["train"] = train_profile
    if mode == "none":
        label = None
    splits = [("train", train, layout)]
    if test is not None:
        tinfo = test.info()
        if tinfo.sample_shape == layout.shape:
            tlayout = Layout(
                layout.shape, tinfo.dtype_name, layout.channel_axis, layout.kind, layout.reason
            )
        else:
            tlayout = resolve_layout(tinfo.sample_shape, tinfo.dtype_name, test.channel_axis)
        tlabel = label if tinfo.label_shape is not None and label is not None else None
        # labels shaped as train's are read as train's are (a test row that is not one-hot is
        # a missing label); others decide on their own
        tmode = "none"
        if tlabel:
            tmode = mode if tinfo.label_shape == info.label_shape else "decide"
        tplan = TensorPlan(tlayout, tlabel, tmode, sample_budget(tlayout, sample_rows))
        profiles["test"], _ = scan_split(
            test,
            tplan,
            "test",
            max_samples=cap(test),
            batch_rows=batch_rows,
            map_blocks=map_blocks,
            workers=workers,
        )
        splits.append(("test", test, tlayout))
    notes = []
    columns = {}
    for split, src, lay in splits:
        p = profiles[split]
        notes.append(f"{split}: {p.rows:,} samples, {lay.describe()}, {lay.dtype} ({lay.reason})")
        notes.extend(n for n in src.notes if n not in notes)
        shape = "x".join(map(str, lay.shape)) or "1"
        cols = [(n, lay.dtype, "bool" if lay.dtype == "bool" else "numeric") for n in lay.channels]
        cols.append(("sample shape", shape, f"shape {shape}"))
        if p.label is not None:
            cols.append((p.label.name, p.label.dtype, p.label.kind))
        columns[split] = tuple(cols)
    features = pooled_names(layout)
    if label is not None and features != list(layout.channels):
        notes.append(
            f"baselines on tensors use {len(features):,} pooled features per sample "
            f"(block means: {features[0]!r}, ...)"
        )
    return TensorRun(profiles, label, None, features, columns, notes)
