from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor, group_many, pct, rows_text
from datavet.findings import Severity


class NanValues(Auditor):
    """NaN, None, null or NaT in a feature column.

    **What it checks**
    Every feature column of every split, every row: missing values (null, None, NaN, NaT) are
    counted exactly, never estimated from a sample, and reported per column and split with the
    first row positions. Vector columns (embeddings: a list or array of numbers per row) are
    looked into: a row counts when its vector is null or holds a NaN element, and the finding
    names the rows, the element positions and the dimensions the NaN sit in. When more than
    five columns of a split hold missing values they are one finding listing the columns (the
    first five in the message with their counts; every column in ``columns`` and its count in
    ``metrics``).
    A column is reported once it holds at least ``min_count`` missing values.

    **Why it matters**
    One NaN in an input makes the forward pass NaN, then the loss, then (after one update) every
    weight it touches. Most frameworks do not stop: training goes on printing ``nan``. A missing
    value that a pipeline fills with 0 is quieter and just as wrong.

    **How to fix**
    Impute (the train median, plus a "was missing" indicator column) with statistics fitted on
    train only, or drop the affected rows; find out why the values are missing first.
    """

    code = "V001"
    name = "nan-values"
    severity = Severity.ERROR
    summary = "NaN / None / NaT in a feature"
    thresholds = {"min_count": 1}
    column_cell = "nan"
    per_column = ("train", "test")

    def check(self, ctx: AuditContext):
        for profile in ctx.splits:
            found = list(self._columns(profile))
            if profile.tensor is None:
                found = group_many(self, found, headline="have NaN/missing values")
            yield from found

    def _columns(self, profile):
        for col in profile.columns.values():
            if col.missing < self.options["min_count"]:
                continue
            if profile.tensor is not None:
                # tensor inputs: one stats entry per channel, counted in samples
                plural = "s" if col.missing != 1 else ""
                rows = rows_text(col.missing_rows, col.missing, unit="sample")
                message = (
                    f"Input {col.name} holds NaN in {col.missing:,} sample{plural} of "
                    f"{profile.split} ({pct(col.missing, col.rows)}): {rows}."
                )
            elif col.vector is not None and col.vector.null_rows < col.rows:
                # some rows hold a vector: NaN elements, not "entirely missing"
                message = _vector_message(col, profile.split)
            elif col.missing == col.rows:
                message = (
                    f"Column {col.name!r} is entirely missing in {profile.split} "
                    f"(all {col.rows:,} rows)."
                )
            else:
                plural = "s" if col.missing != 1 else ""
                rows = rows_text(col.missing_rows, col.missing)
                message = (
                    f"Column {col.name!r} has {col.missing:,} NaN/missing value{plural} in "
                    f"{profile.split} ({pct(col.missing, col.rows)}): {rows}."
                )
            yield self.finding(
                message,
                split=profile.split,
                columns=(col.name,),
                n_affected=col.missing,
                examples=col.missing_rows,
                metrics=_metrics(col),
                hint="impute with train-fitted statistics plus a missing-indicator column, "
                "or drop the rows",
            )


def _metrics(col) -> dict:
    out = {"count": col.missing, "fraction": col.missing / col.rows}
    if col.vector is not None:
        out["nan_elements"] = col.vector.nan_values
        out["null_rows"] = col.vector.null_rows
        out["empty_rows"] = col.vector.empty_rows
    return out


def _vector_message(col, split: str) -> str:
    vec = col.vector
    nan_rows = col.missing - vec.null_rows
    parts = []
    if nan_rows:
        plural = "s" if nan_rows != 1 else ""
        parts.append(f"{nan_rows:,} row{plural} holding NaN ({vec.where('nan')})")
    nulls = vec.null_rows - vec.empty_rows
    if nulls:
        parts.append(f"{nulls:,} null row{'s' if nulls != 1 else ''} (no vector)")
    if vec.empty_rows:
        many = vec.empty_rows != 1
        parts.append(f"{vec.empty_rows:,} empty vector{'s' if many else ''} (no elements)")
    return (
        f"Vector column {col.name!r} has {col.missing:,} missing or NaN row"
        f"{'s' if col.missing != 1 else ''} in {split} ({pct(col.missing, col.rows)}): "
        f"{rows_text(col.missing_rows, col.missing)}; {' and '.join(parts)}."
    )
