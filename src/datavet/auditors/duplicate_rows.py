from __future__ import annotations

from datavet.auditors.base import (
    AuditContext,
    Auditor,
    fmt,
    keyless,
    keyless_text,
    pct,
    rows_text,
)
from datavet.findings import Severity
from datavet.scan.rowchecks import by_chance, chance_duplicates


class DuplicateRows(Auditor):
    """Rows that repeat an earlier row of the same split exactly (features and label).

    **What it checks**
    Each split on its own: rows whose features (the same canonical 128-bit hashes as S001) and
    label equal an earlier row's. The count is of the extra copies; the first copy is not counted.
    A split is reported once it holds at least ``min_count`` duplicate rows.

    Coarse data repeats rows by itself: with a few values per feature, distinct examples often
    coincide. The rule estimates the repeats chance alone makes: each row's chance of equalling
    another row (the share of its value in each column, from the value counts, multiplied over
    the features and the label as if independent), summed over the rows; a row holding a value
    seen once (an amount in cents, a measurement) has none. When that predicts at least
    10 repeats and the duplicates are fewer than twice as many, the finding is an info that
    gives the estimate: such repeats are real examples, and dropping them would distort the
    distribution. Not for image and sequence inputs: two equal images of hundreds of values are
    the same sample, never a coincidence; when every copy repeats one sample, the message says
    so (a blank or all-NaN image, or a placeholder written where loading failed).

    **Why it matters**
    Duplicates weight some examples more than others without anyone deciding so, and when the
    data is later split, copies of one row end up on both sides (see S001). Many duplicates
    often mean a join that multiplied rows or a file appended twice.

    **How to fix**
    Drop exact duplicates before splitting (``df.drop_duplicates()``), or find the join or
    export step that made them.
    """

    code = "S002"
    name = "duplicate-rows"
    severity = Severity.WARNING
    summary = "identical rows within a split"
    thresholds = {"min_count": 1}
    needs = ("row_keys", "row_checks")

    def check(self, ctx: AuditContext):
        for profile in ctx.splits:
            found, left_out = keyless(
                ctx, lambda checks, split=profile.split: checks.duplicates.get(split)
            )
            if found is None or found.n < self.options["min_count"] or not found.n:
                continue
            metrics = {
                "count": found.n,
                "fraction": found.n / profile.rows,
                "distinct_repeated": found.groups,
            }
            if left_out:
                with_keys = ctx.rows.duplicates.get(profile.split)
                metrics["count_with_row_keys"] = with_keys.n if with_keys else 0
            exactly = "exactly" if not left_out else f"({keyless_text(left_out)})"
            natural = False
            note = ""
            hint = "drop exact duplicates before splitting"
            if image_like(profile):  # images, sequences: equal samples are copies, not chance
                if found.groups == 1 and found.n >= 2:  # 3 equal samples or more
                    note = f" {one_sample_text(profile, found.n + 1)}"
                    hint = (
                        "find why so many samples are the same one (blank images, a "
                        "placeholder written where loading failed?); " + hint
                    )
            else:
                expected = chance_repeats_of(profile, left_out, with_label=True)
                metrics["expected_by_chance"] = expected
                natural = by_chance(found.n, expected)
                if natural:
                    note = (
                        f" From each column's value counts (taken as independent), about "
                        f"{expected:,.0f} of {profile.rows:,} rows repeat one by chance alone: "
                        "these are likely distinct examples that coincide, not copies."
                    )
                    hint = (
                        "keep natural repeats (dropping them distorts the distribution); drop "
                        "them only if they are copies from a join or an append"
                    )
            yield self.finding(
                f"{found.n:,} rows of {profile.split} ({pct(found.n, profile.rows)}) repeat an "
                f"earlier row {exactly} ({found.groups:,} distinct rows repeated): "
                f"{rows_text(found.examples, found.n)}.{note}",
                severity=Severity.INFO if natural else None,
                split=profile.split,
                n_affected=found.n,
                examples=found.examples,
                metrics=metrics,
                hint=hint,
            )


def chance_repeats_of(profile, left_out=(), *, with_label: bool) -> float:
    """The rows of a split expected to repeat an earlier row's features (and its label, with
    ``with_label``) by chance alone."""
    names = [n for n in profile.columns if n not in left_out]
    label = profile.label if with_label else None
    return chance_duplicates(profile.columns, names, profile.rows, label=label)


def image_like(profile) -> bool:
    """Whether ``profile`` holds image or sequence samples (tensor inputs of many values per
    sample, not (N, D) features): equal samples there are copies, never a chance match."""
    return profile.tensor is not None and profile.tensor.layout.kind != "features"


def one_sample_text(profile, copies: int) -> str:
    """What ``copies`` samples of ``profile`` that are all one sample look like, in words."""
    value = _only_value(profile) if copies == profile.rows else None
    if value is not None:
        return (
            f"All {copies:,} samples of {profile.split} are the same sample, every value "
            f"{value}: a blank sample, or a placeholder written where loading failed?"
        )
    return (
        f"Every copy is of one sample ({copies:,} equal samples): a blank or all-NaN sample, "
        "or a placeholder written where loading failed?"
    )


def _only_value(profile) -> str | None:
    """'0', 'NaN', ...: the one value every element of every channel holds, if there is one."""
    seen = set()
    for col in profile.columns.values():
        if col.rows and col.missing == col.rows:
            seen.add("NaN")
        elif col.missing or col.inf or col.n_distinct != 1 or not col.min <= col.max:
            return None
        else:
            seen.add(fmt(col.min))
    return seen.pop() if len(seen) == 1 else None
