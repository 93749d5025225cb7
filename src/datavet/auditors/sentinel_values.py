from __future__ import annotations

import math

import numpy as np

from datavet.auditors.base import AuditContext, Auditor, ColumnItem, fmt, grouped, pct
from datavet.findings import Severity
from datavet.framework import COUNT, NOT_NEGATIVE, POSITIVE, UNIT
from datavet.scan.profile import Profile
from datavet.scan.tensor_values import sentinel_dict


def sentinel_shaped(value: float) -> bool:
    """0, -1, or +-9...9 with two or more nines (99, -999, 9999, ...): the values people type
    for "unknown"."""
    if not math.isfinite(value) or value != int(value):
        return False
    v = abs(int(value))
    if value in (0, -1):
        return True
    return v >= 99 and set(str(v)) == {"9"}


class SentinelValues(Auditor):
    """A numeric feature holds a spike at a stand-in value (0, -1, -999, 9999, ...) far outside
    the rest of its values: missing data filled in with a placeholder.

    **What it checks**
    Numeric features (not ID-like columns) in each split, and a regression target. A candidate is a
    value that looks typed-in (0, -1, or 99, 999, 9999, ... with either sign) and covers at
    least ``min_share`` (1%) of the column's non-missing rows and ``min_rows`` (10) rows (exact
    counts up to 1,024 distinct values, a heavy-hitter sketch beyond). The other values come
    from the row sample (up to 50,000 rows): at least ``min_rest`` (20) of them with at least
    ``min_distinct`` (5) distinct values. The candidate fires when it lies outside their whole
    range, at least ``min_z`` (4) robust standard deviations (1.4826 x the median absolute
    deviation) from their median, and separated from the nearest of them by a gap of at least
    ``min_gap_iqr`` (1) times their interquartile range. A zero-inflated amount (0 next to
    amounts spread from 1 to 100,000) is not far from a spread that wide, and a blank pixel (0
    next to intensities 1..16) sits right next to the others: both stay quiet. A 0 that covers
    more than ``max_zero_share`` (20%) of the rows is more often a structural zero ("none": no
    payment, log(max(1, x)) of nothing) than missing data, and is left alone too; so is a 0
    below values that themselves come close to 0 (the smallest under ``min_zero_gap`` (30%) of
    their median: magnesium in glass, measured from 0.33 with a median of 3.5, can be absent).
    A 0 whose sample rows are exactly the rows where another column of at most 12 values
    takes one level (``hours_per_week`` = 0 exactly where ``employed`` = 0) is a real "none"
    that column explains, and is left alone; a level that is itself a stand-in (-999,
    "unknown") or a missing value explains nothing (a record that lost several fields at
    once), and a code such as 999 stays a finding even where another column explains it (999
    for "no upper bound" exactly where the answer was yes-yes is still read as a number).
    A regression target is judged the same way, in a finding of its own (a class label's -1 is
    a class: the label rules look at it). On 2,345 real tables it named 14 columns in 13
    tables, among them a PSAT score of 0 (range 20-80), houses with 0 baths, "999" for "above
    250" and -99 / -999 / 999 missing-value codes.

    Tensors: the features of 2-D feature tensors (``(N, D)`` torch tensors, ``.npy``/``.npz``/
    ``.pt`` arrays) are checked the same way, named as in the report ('x0', 'x1', ...); there
    the candidate's rows are counted exactly, and more than 256 features (the baselines' sample
    then holds group means) are judged on a sample of raw rows (about 1,250,000 values, at
    least 1,000 rows). Images and sequences are not checked: a 0 there is a black pixel or a
    padded step.

    **Why it matters**
    A missing blood pressure written as 0, an unknown year as 9999, "never contacted" as 999
    days: the placeholder is a real number to the model. It drags the mean and the scaling,
    a linear model fits a slope through it, and a tree learns "value == 999" as a pattern that
    stands for whatever made the value missing. NaN checks (V001) pass because nothing is NaN.

    **How to fix**
    Replace the placeholder with a missing value (``df[col] = df[col].replace(-999, np.nan)``),
    then impute it on purpose and add an "is missing" indicator column; or confirm with the data
    owner that the value is real and ignore the rule for that column.
    """

    code = "V007"
    name = "sentinel-values"
    severity = Severity.WARNING
    summary = "a numeric feature has a spike at 0 / -1 / -999 / 9999 far outside its other values"
    thresholds = {
        "min_share": 0.01,
        "min_rows": 10,
        "min_rest": 20,
        "min_distinct": 5,
        "min_z": 4,
        "min_gap_iqr": 1.0,
        "max_zero_share": 0.2,
        "min_zero_gap": 0.3,
    }
    ranges = {
        "min_share": UNIT,
        "min_rest": COUNT,
        "min_distinct": COUNT,
        "min_z": POSITIVE,
        "min_gap_iqr": NOT_NEGATIVE,
        "max_zero_share": UNIT,
        "min_zero_gap": UNIT,
    }

    def check(self, ctx: AuditContext):
        hint = "replace the placeholder with NaN, impute it on purpose and add a missing flag"
        for profile in ctx.splits:
            target = self._target(ctx, profile)
            if target is not None:
                yield self.finding(
                    f"The target {target.column!r} in {profile.split} has {target.detail}; "
                    + (
                        "a model trained on it learns to predict the placeholder."
                        if profile.split == "train"
                        else "a model scored on it is judged against the placeholder."
                    ),
                    split=profile.split,
                    columns=(target.column,),
                    n_affected=target.n_affected,
                    examples=target.examples,
                    metrics=dict(target.metrics),
                    hint="drop the rows whose target is the placeholder (or set it to NaN): a "
                    "target has no value to impute",
                )
            items = self._split(ctx, profile)
            noun = "Column" if profile.tensor is None else "Feature"
            yield from grouped(
                self,
                items,
                single=lambda it, split=profile.split, noun=noun: self.finding(
                    f"{noun} {it.column!r} in {split} has {it.detail}.",
                    split=split,
                    columns=(it.column,),
                    n_affected=it.n_affected,
                    examples=it.examples,
                    metrics=dict(it.metrics),
                    hint=hint,
                ),
                headline=f"have a placeholder value far outside their other values in "
                f"{profile.split}",
                split=profile.split,
                hint=hint,
            )

    def _split(self, ctx: AuditContext, profile: Profile) -> list[ColumnItem]:
        o = self.options
        table = profile.sample.table
        tensor = profile.tensor
        if table is None:
            return []
        if tensor is not None and (tensor.layout.kind != "features" or tensor.sentinels is None):
            return []  # images, sequences: a 0 there is a black pixel or a padded step
        index = {} if tensor is None else {n: j for j, n in enumerate(tensor.layout.channels)}
        names = set(table.column_names)
        items = []
        for col in profile.columns.values():
            if not col.is_numeric or col.name in ctx.key_columns:
                continue
            raw = tensor is not None and tensor.raw is not None
            if col.name not in names and not raw:
                continue
            present = col.present
            if present < o["min_rows"]:
                continue
            counts: dict = col.values.counts
            exact = col.values.exact
            if tensor is not None and tensor.sentinels is not None:
                # (N, F) features: exact counts of the candidates
                counts, exact = sentinel_dict(tensor.sentinels[index[col.name]]), True
            candidates = self._candidates(counts, present)
            if not candidates:
                continue
            if tensor is not None and tensor.raw is not None:
                x, rows = _finite(tensor.raw.values[:, index[col.name]], tensor.raw.rows)
            else:
                x, rows = _numbers(table.column(col.name), profile.sample.positions)
            for value, count in candidates:
                item = self._judge(col.name, float(value), count, present, x, rows, exact)
                if item is not None and tensor is None and value == 0:
                    skip = {ctx.target, *ctx.key_columns}
                    if explained_by(table, col.name, float(value), skip, o["min_rows"]):
                        item = None  # hours = 0 exactly where employed = 0: a real value
                if item is not None:
                    items.append(item)
                    break
        return items

    def _target(self, ctx: AuditContext, profile: Profile) -> ColumnItem | None:
        """A regression target's placeholder (price -1 or -999 for "unknown"), judged as a
        feature's; a class label's -1 is a class, the label rules' business."""
        label, table = profile.label, profile.sample.table
        if ctx.task != "regression" or label is None or profile.tensor is not None:
            return None
        if table is None or ctx.target not in table.column_names:
            return None
        present = label.present
        candidates = self._candidates(label.values.counts, present)
        if not candidates:
            return None
        x, rows = _numbers(table.column(ctx.target), profile.sample.positions)
        for value, count in candidates:
            item = self._judge(
                ctx.target, float(value), count, present, x, rows, label.values.exact
            )
            if item is not None:
                return item
        return None

    def _candidates(self, counts: dict, present: int) -> list[tuple[float, int]]:
        """The typed-in values (:func:`sentinel_shaped`) that cover enough of a column's
        ``present`` rows to judge, most common first; a 0 on more than ``max_zero_share`` of
        them is a structural zero, no candidate."""
        o = self.options
        floor = max(o["min_rows"], o["min_share"] * present)
        found = [
            (v, c)
            for v, c in counts.items()
            if c >= floor
            and isinstance(v, (int, float))
            and sentinel_shaped(float(v))
            and not (v == 0 and c > o["max_zero_share"] * present)
        ]
        return sorted(found, key=lambda vc: -vc[1])

    def _judge(self, name, value, count, present, x, rows, exact) -> ColumnItem | None:
        o = self.options
        hit = x == value
        rest = x[~hit]
        if len(rest) < o["min_rest"] or len(np.unique(rest)) < o["min_distinct"]:
            return None
        if value == 0 and count > o["max_zero_share"] * present:
            return None
        lo, hi = float(rest.min()), float(rest.max())
        if lo <= value <= hi:
            return None
        median = float(np.median(rest))
        if value == 0 and lo > 0 and lo < o["min_zero_gap"] * median:
            return None
        q1, q3 = np.percentile(rest, [25, 75])
        gap = lo - value if value < lo else value - hi
        if gap < o["min_gap_iqr"] * float(q3 - q1):
            return None
        mad = 1.4826 * float(np.median(np.abs(rest - median)))
        if not mad > 0:
            return None
        z = abs(value - median) / mad
        if z < o["min_z"]:
            return None
        approx = "" if exact else "at least "
        examples = tuple(int(p) for p in rows[np.flatnonzero(hit)[:5]])
        shown = int(value) if value == int(value) else value
        return ColumnItem(
            name,
            f"{shown} in {approx}{count:,} rows ({pct(count, present)}), while its other values "
            f"run from {fmt(lo)} to {fmt(hi)} (median {fmt(median)}; {shown} is {z:.0f} robust "
            "standard deviations away): a placeholder for missing data",
            count,
            metrics={"value": value, "share": count / present, "robust_z": z},
            examples=examples,
        )


# A companion's value that stands for "unknown" explains nothing: both columns lost the row.
_UNKNOWN = {"", "na", "n/a", "nan", "none", "null", "nil", "-", "?", "unknown", "missing"}
MAX_LEVELS = 12  # a companion column is a flag or a few categories


def explained_by(table, name: str, value: float, skip: set, min_rows: int) -> str | None:
    """The ``column == level`` that holds on exactly the sample rows where ``name`` equals
    ``value`` (``employed == 0`` for ``hours_per_week == 0``), or None. The companion has at
    most :data:`MAX_LEVELS` values, none missing on those rows, and its level is not itself a
    stand-in (-1, -999, "unknown"): a record that lost several fields at once is not explained."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        x = table.column(name).cast(pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, TypeError):
        return None
    hit = np.asarray(x, dtype=float) == value
    if hit.sum() < min_rows or hit.all():
        return None
    first = int(np.argmax(hit))
    for other in table.column_names:
        if other == name or other in skip:
            continue
        column = table.column(other)
        if pa.types.is_nested(column.type) or column.null_count:
            continue  # a missing value never explains; lists are not levels
        level = column[first].as_py()
        if isinstance(level, float) and not math.isfinite(level):
            continue
        if isinstance(level, (int, float)) and level != 0 and sentinel_shaped(float(level)):
            continue
        if isinstance(level, str) and level.strip().lower() in _UNKNOWN:
            continue
        try:
            same = pc.equal(column, pa.scalar(level, column.type)).to_numpy(zero_copy_only=False)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, TypeError):
            continue
        if not np.array_equal(np.asarray(same, dtype=bool), hit):
            continue
        if pc.count_distinct(column).as_py() <= MAX_LEVELS:
            return f"{other} == {level!r}"
    return None


def _numbers(column, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A sample column as finite float64 values, with their row positions."""
    import pyarrow as pa

    try:
        x = column.cast(pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, TypeError):
        return np.zeros(0), np.zeros(0, np.int64)
    rows = positions if len(positions) == len(x) else np.full(len(x), -1, np.int64)
    return _finite(np.asarray(x, dtype=float), rows)


def _finite(x: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ok = np.isfinite(x)
    return x[ok], rows[ok]
