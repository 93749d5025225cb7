from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor, Skip, pct, plural
from datavet.findings import Severity


class UnseenTestClass(Auditor):
    """A class appears in the test labels but never in train.

    **What it checks**
    Exact class counts of both splits (classification only): every test class that train does
    not have, with its number of test rows.

    **Why it matters**
    A model cannot predict a class it never saw: every such test row is an error whatever the
    model, and metrics computed with a class list taken from train silently drop them. It often
    means a split by time or source that moved a whole class to one side, or labels spelt
    differently in the two files ("Cat" vs "cat", 1 vs "1").

    **How to fix**
    Stratify the split by label; or, if the class is new on purpose, decide how the model should
    treat it (an "other" class, open-set detection) and evaluate that explicitly. Check that
    labels are encoded the same way in both files.
    """

    code = "L003"
    name = "unseen-test-class"
    severity = Severity.ERROR
    summary = "a test label never seen in train"
    needs = ("classification", "test")

    def check(self, ctx: AuditContext):
        train, test = ctx.train.label, ctx.test.label
        if test is None:
            raise Skip("the test split has no target column")
        if not (train.values.exact and test.values.exact):
            raise Skip("more than 1,024 classes; class counts are not exact")
        seen = set(train.values.keys())
        unseen = [(v, n) for v, n in test.values.most_common() if v not in seen]
        if not unseen:
            return
        rows = sum(n for _, n in unseen)
        listed = ", ".join(f"{v!r} ({plural(n, 'row')})" for v, n in unseen[:10])
        more = f" and {len(unseen) - 10} more" if len(unseen) > 10 else ""
        yield self.finding(
            f"{len(unseen)} test class(es) never appear in train: {listed}{more}; "
            f"{rows:,} test rows ({pct(rows, test.present)}) cannot be predicted right.",
            split="test",
            columns=(test.name,),
            n_affected=rows,
            metrics={"classes": len(unseen), "rows": rows, "fraction": rows / test.present},
            hint="stratify the split by label; check labels are spelt and typed alike",
        )
