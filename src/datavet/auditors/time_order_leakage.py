from __future__ import annotations

from datetime import datetime, timezone

from datavet.auditors.base import AuditContext, Auditor, Skip, pct, rows_text
from datavet.findings import Severity


class TimeOrderLeakage(Auditor):
    """Test rows older than the newest train rows, in a split meant to be by time.

    **What it checks**
    With ``--time COL`` (or the only date/time column, when there is exactly one): each split's
    time range, how far they overlap, and (from a second pass over test) how many test rows are
    older than the newest train row. With ``--time`` it fires whenever such rows exist. With a
    detected column it fires only when the split looks meant to be temporal, that is when most
    test rows are newer than all of train but some are not (at most ``max_auto_older``, 50%);
    a random split, where nearly every test row overlaps, is not reported. ``--time`` also takes
    a numeric column (years, epoch seconds), and in a data frame a text column in ISO-8601 form
    (``2020-01-15``, ``2020-01-15T10:00:00+01:00``, as ``pd.read_csv`` leaves dates), read as
    dates/times in UTC with a note (values that are not dates become missing); other text is
    skipped, with a note to parse it as dates first.

    **Why it matters**
    A model is used on the future. If the test set mixes in rows from the training period, the
    test score includes interpolation the model will never be asked to do, and features that
    drift with time look stable. Worse, train rows from after a test row can carry its outcome.

    **How to fix**
    Split at a cut-off time: every train row before it, every test row after it (and a gap
    between them when labels take time to arrive).
    """

    code = "S008"
    name = "time-order-leakage"
    severity = Severity.WARNING
    summary = "test rows older than the newest train rows (--time)"
    thresholds = {"max_auto_older": 0.5}
    needs = ("near_hashes",)
    sections = ("leakage",)

    def check(self, ctx: AuditContext):
        if ctx.time is None:
            raise Skip("no time column (pass --time COL)")
        ctx.require_test()
        a, b = ctx.train.columns.get(ctx.time), ctx.test.columns.get(ctx.time)
        if a is None or b is None:
            raise Skip(f"time column {ctx.time!r} is missing from a split")
        for col in (a, b):
            if col.kind not in ("temporal", "numeric", "null"):
                held = "text" if col.kind == "string" else f"{col.dtype} values"
                raise Skip(
                    f"time column {ctx.time!r} holds {held}, not ISO-8601 dates/times or "
                    "numbers: parse it as dates (pd.to_datetime with its format) to check the "
                    "split's time order"
                )
        if a.time_range is None or b.time_range is None:
            raise Skip(f"time column {ctx.time!r} has no values in a split")
        if ctx.near is None:
            raise Skip("the second pass over test did not run")
        older = ctx.near["test"].older
        if older == 0:
            return
        share = older / ctx.test.rows
        if not ctx.time_declared and share > self.options["max_auto_older"]:
            return  # a random split: overlap everywhere is expected
        (a_min, a_max), (b_min, b_max) = a.time_range, b.time_range
        lo, hi = max(a_min, b_min), min(a_max, b_max)
        overlap = (hi - lo) / (b_max - b_min) if b_max > b_min else 1.0
        examples = ctx.near["test"].time_examples
        unit = _unit(a.dtype) if a.kind == "temporal" else None
        yield self.finding(
            f"{older:,} test rows ({pct(older, ctx.test.rows)}) are older than the newest train "
            f"row ({_when(a_max, unit)}); train spans {_when(a_min, unit)} to "
            f"{_when(a_max, unit)}, test {_when(b_min, unit)} to {_when(b_max, unit)} "
            f"({100 * max(overlap, 0):.0f}% of test's time range overlaps train's): "
            f"{rows_text(examples, older)}.",
            split="test",
            columns=(ctx.time,),
            n_affected=older,
            examples=examples,
            metrics={"older_rows": older, "older_fraction": share, "range_overlap": overlap},
            hint="split at a cut-off time: train before it, test after it",
        )


def _unit(dtype: str) -> str:
    for unit in ("ns", "us", "ms"):
        if f"[{unit}" in dtype:
            return unit
    return "ms" if dtype == "date64[ms]" else "s"


def _when(value: float, unit: str | None) -> str:
    """A date/time value in ``unit`` since the epoch as a UTC date; a number (``unit`` None,
    a numeric time column: a year, epoch seconds) as itself."""
    if unit is None:
        return f"{value:.15g}"
    per_second = {"s": 1, "ms": 1e3, "us": 1e6, "ns": 1e9}[unit]
    try:
        return datetime.fromtimestamp(value / per_second, tz=timezone.utc).strftime(
            "%Y-%m-%d %H:%M:%S"
        )
    except (OverflowError, OSError, ValueError):
        return str(value)
