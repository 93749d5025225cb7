from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor, Skip, pct, plural, rows_text
from datavet.findings import Severity


class GroupLeakage(Auditor):
    """Groups (subjects, patients, users, devices) with rows in both train and test.

    **What it checks**
    With ``--group COL``: every distinct value of the group column in each split (counted
    exactly, by 128-bit hash), the groups present in both, how many rows they hold on each side,
    and the share of test rows that belong to a group train has seen.
    It fires once at least ``min_groups`` groups are shared. Rows with no group value (null,
    NaN: anonymous or guest rows) belong to no group, so they never count as shared (V001
    reports the missing values); the finding says how many there are.

    **Why it matters**
    It is the most common leak: samples of one subject split across train
    and validation. The model learns the subject (their handwriting, their heart rate, their
    device's noise) and the test score measures recognition of people it has seen, not
    generalisation to new ones. Identical-row checks (S001) see none of it.

    **How to fix**
    Split by group: ``GroupShuffleSplit`` / ``GroupKFold`` in scikit-learn, or assign whole
    subjects to one side before anything else.
    """

    code = "S005"
    name = "group-leakage"
    severity = Severity.ERROR
    summary = "one group's (subject's) rows in both train and test (--group)"
    thresholds = {"min_groups": 1}
    sections = ("leakage",)

    def check(self, ctx: AuditContext):
        if ctx.group is None:
            raise Skip("no group column given (pass --group COL)")
        ctx.require_test()
        train, test = ctx.train.groups, ctx.test.groups
        if train is None or test is None:
            raise Skip(f"group column {ctx.group!r} is missing from a split")
        shared_test = test.shared_with(train)
        shared_train = train.shared_with(test)
        n = int(shared_test.sum())
        if n < self.options["min_groups"]:
            return
        test_rows = int(test.rows[shared_test].sum())
        train_rows = int(train.rows[shared_train].sum())
        examples = tuple(sorted(test.first[shared_test].tolist())[:5])
        ungrouped = ""
        if test.missing or train.missing:
            ungrouped = (
                f" Rows with no {ctx.group!r} value are in no group: {test.missing:,} in test, "
                f"{train.missing:,} in train."
            )
        yield self.finding(
            f"{plural(n, 'group')} of {ctx.group!r} ({pct(n, len(test.keys))} of test's "
            f"{len(test.keys):,}) have rows in both train and test: {test_rows:,} test rows "
            f"({pct(test_rows, ctx.test.rows)}) and {train_rows:,} train rows; first test rows of "
            f"such groups: {rows_text(examples, None)}.{ungrouped}",
            split="test",
            columns=(ctx.group,),
            n_affected=test_rows,
            examples=examples,
            metrics={
                "groups": n,
                "test_rows": test_rows,
                "train_rows": train_rows,
                "test_fraction": test_rows / ctx.test.rows,
                "test_groups": len(test.keys),
                "train_groups": len(train.keys),
                "test_rows_without_group": test.missing,
                "train_rows_without_group": train.missing,
            },
            hint="split by group (GroupShuffleSplit / GroupKFold) so each subject is on one side",
        )
