from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor, plural
from datavet.findings import Severity


class TooFewRows(Auditor):
    """The training split has too few rows for its statistics or a model to mean anything.

    **What it checks**
    The number of rows of train: it fires below ``min_rows`` (2). With a single row every
    column looks constant and no spread can be estimated, so the per-column rules that need
    two rows (F001, F002, F003) and the baselines skip themselves; this rule says why the
    report is nearly empty instead of letting it read as a clean pass.

    **Why it matters**
    A one-row table usually means a broken export, a filter that removed almost everything,
    or the wrong file. An audit of it that reports "0 findings" would be a lie by omission.

    **How to fix**
    Check the export or filter that produced the file. For a larger floor (say 30 rows), set
    the threshold: ``thresholds = {"S009": {"min_rows": 30}}``.
    """

    code = "S009"
    name = "too-few-rows"
    severity = Severity.WARNING
    summary = "train has fewer rows than any statistic needs (1 row)"
    thresholds = {"min_rows": 2}

    def check(self, ctx: AuditContext):
        train = ctx.train
        if train.rows >= self.options["min_rows"]:
            return
        yield self.finding(
            f"train has {plural(train.rows, 'row')}, fewer than {self.options['min_rows']:,}: "
            "constant, spread and scale checks and the baselines cannot run on it.",
            split="train",
            n_affected=train.rows,
            metrics={"rows": train.rows, "min_rows": self.options["min_rows"]},
            hint="check the export or filter that produced this file",
        )
