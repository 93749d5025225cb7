from __future__ import annotations

import datetime
import decimal
import math
from typing import TYPE_CHECKING

from datavet.auditors.base import AuditContext, Auditor, ColumnItem, Skip, as_stored, grouped
from datavet.findings import Severity
from datavet.scan.vectors import constant_parts

if TYPE_CHECKING:
    from datavet.scan.tensors import ConstantParts


class ConstantFeature(Auditor):
    """A feature with a single distinct non-missing value in train.

    **What it checks**
    Every feature column of the train split: exactly one distinct value among its non-missing
    rows (for numbers, min == max, with infinities counted as values). Columns that are entirely
    missing are left to V001. For tensor inputs, every input position (a pixel of a channel, a
    step of a sequence) and every channel, summarised in one finding: "37 of 784 input
    positions are constant in train: the border". For vector columns (embeddings), every
    dimension, in one finding per column: "12 of 768 dimensions of vector column 'emb' are
    constant in train". Several constant columns of a table are one finding that lists them
    (the first five in the message, every one in ``columns``).
    A train split with fewer than ``min_rows`` rows is not judged.

    **Why it matters**
    A constant column carries no information. Standardising it divides by a zero standard
    deviation (NaN), and its presence often means a broken join or a sensor that was unplugged.

    **How to fix**
    Drop the column, or find out why it stopped varying.
    """

    code = "F001"
    name = "constant-feature"
    severity = Severity.WARNING
    summary = "one distinct non-null value in train"
    thresholds = {"min_rows": 2}
    column_cell = "std"
    per_column = ("train",)

    def check(self, ctx: AuditContext):
        train = ctx.train
        if train.rows < self.options["min_rows"]:
            raise Skip(f"train has {train.rows} row(s); a column of one row is always constant")
        if train.tensor is not None:  # tensors: one finding for every constant position
            parts = train.tensor.constant_parts(train.columns)
            if parts is not None:
                yield self.finding(
                    tensor_message(parts, "train"),
                    split="train",
                    columns=parts.columns,
                    n_affected=parts.constant,
                    metrics={"positions": parts.positions or 0, "channels": len(parts.channels)},
                    hint="crop or drop inputs that never change; per-position standardisation "
                    "divides by their zero std",
                )
            return
        hint = "drop the column (it carries no information; standardising it divides by 0)"
        items, messages = [], {}
        for col in train.columns.values():
            if col.vector is not None:  # vector columns: constant dimensions, as for tensors
                parts = constant_parts(col.name, col.vector)
                if parts is not None:
                    yield self.finding(
                        parts.message("train"),
                        split="train",
                        columns=(col.name,),
                        n_affected=len(parts.constant),
                        metrics={"dimensions": len(parts.constant)},
                        hint="drop dimensions that never change; per-dimension standardisation "
                        "divides by their zero std",
                    )
                continue
            if col.present == 0 or col.n_distinct != 1:
                continue
            ((value, _),) = col.values.most_common(1)
            value = as_stored(value, col.dtype)
            missing = f" ({col.missing:,} missing)" if col.missing else ""
            messages[col.name] = (
                f"Column {col.name!r} is constant in train: all {col.present:,} non-missing "
                f"values are {_shown(value)}{missing}."
            )
            items.append(
                ColumnItem(col.name, f"all {_shown(value)}", col.present, metrics={"distinct": 1})
            )
        yield from grouped(
            self,
            items,
            single=lambda it: self.finding(
                messages[it.column],
                split="train",
                columns=(it.column,),
                n_affected=it.n_affected,
                metrics={"distinct": 1},
                hint=hint,
            ),
            headline="are constant in train",
            split="train",
            hint=hint,
            count="columns",
        )


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _num(v: float) -> str:
    return str(int(v)) if math.isfinite(v) and v == int(v) and abs(v) < 1e15 else f"{v:.4g}"


def tensor_message(parts: ConstantParts, split: str) -> str:
    """The one finding's message for the constant inputs of a tensor split."""
    if parts.layout.kind == "features":
        listed = ", ".join(f"{n!r} ({_num(v)})" for n, v in parts.channels[:10])
        more = f" (+{len(parts.channels) - 10} more)" if len(parts.channels) > 10 else ""
        return (
            f"{parts.constant:,} of {parts.positions:,} input features are constant in "
            f"{split} (one value in every sample): {listed}{more}."
        )
    if parts.channels:
        listed = _join([repr(n) for n, _ in parts.channels[:8]])
        values = sorted({_num(v) for _, v in parts.channels})
        every = f"every value {values[0]}" if len(values) == 1 else "one value each"
        verb = "is" if len(parts.channels) == 1 else "are"
        word = "channel" if len(parts.channels) == 1 else "channels"
        text = f"Input {word} {listed} {verb} constant in {split} ({every})"
        if parts.others:
            text += (
                f"; besides, {parts.others:,} of the {parts.positions:,} input positions never "
                f"change: {parts.where}"
            )
        return text + "."
    return (
        f"{parts.others:,} of {parts.positions:,} input positions are constant in {split} "
        f"(one value in every sample): {parts.where}."
    )


def _shown(value) -> str:
    """A constant value as a user writes it: dates, times and durations in ISO form, decimals
    as numbers; text (quoted) and numbers as Python writes them."""
    if isinstance(value, datetime.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (datetime.timedelta, decimal.Decimal)):
        return str(value)
    return repr(value)
