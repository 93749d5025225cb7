from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor, keyless, keyless_text, pct, rows_text
from datavet.findings import Severity


class DuplicateRows(Auditor):
    """Rows that repeat an earlier row of the same split exactly (features and label).

    **What it checks**
    Each split on its own: rows whose features (the same canonical 128-bit hashes as S001) and
    label equal an earlier row's. The count is of the extra copies; the first copy is not counted.
    A split is reported once it holds at least ``min_count`` duplicate rows.

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
            yield self.finding(
                f"{found.n:,} rows of {profile.split} ({pct(found.n, profile.rows)}) repeat an "
                f"earlier row {exactly} ({found.groups:,} distinct rows repeated): "
                f"{rows_text(found.examples, found.n)}.",
                split=profile.split,
                n_affected=found.n,
                examples=found.examples,
                metrics=metrics,
                hint="drop exact duplicates before splitting",
            )
