from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor, Skip, pct, plural
from datavet.findings import Severity


class UnseenTestCategory(Auditor):
    """A categorical feature takes values in test that train never has.

    **What it checks**
    Each feature stored as categorical (a pandas ``Categorical``, an Arrow or Parquet
    dictionary column) in train or test: the test values that never occur in train, with how
    many test rows hold them. Needs exact value counts on both sides (at most 1,024 distinct
    values); plain text columns are left alone, since free text is new in every split.
    A column is reported when at least ``min_rows`` test rows hold an unseen value.

    **Why it matters**
    A category the model never saw is encoded as "unknown" (or crashes the encoder) at
    prediction time, and test scores on those rows say nothing about the categories trained
    on. It often means the split was made by time or by site without anyone noticing.

    **How to fix**
    Stratify or group the split so every category appears in train, map rare categories to
    "other" before splitting, or make sure the encoder handles unknown values on purpose.
    """

    code = "V005"
    name = "unseen-test-category"
    severity = Severity.WARNING
    summary = "a categorical feature's test value never seen in train"
    thresholds = {"min_rows": 1}
    needs = ("test",)

    def check(self, ctx: AuditContext):
        test = ctx.test
        if not any(_categorical(c.dtype) for p in (ctx.train, test) for c in p.columns.values()):
            raise Skip("no categorical (dictionary) feature column")
        for col in ctx.train.columns.values():
            other = test.columns.get(col.name)
            if other is None or col.name == ctx.target:
                continue
            if not (_categorical(col.dtype) or _categorical(other.dtype)):
                continue
            if not (col.values.exact and other.values.exact):
                continue
            seen = set(col.values.keys())
            unseen = [(v, n) for v, n in other.values.most_common() if v not in seen]
            rows = sum(n for _, n in unseen)
            if not unseen or rows < self.options["min_rows"]:
                continue
            listed = ", ".join(f"{v!r} ({plural(n, 'row')})" for v, n in unseen[:10])
            more = f" and {len(unseen) - 10} more" if len(unseen) > 10 else ""
            yield self.finding(
                f"Categorical column {col.name!r} has {plural(len(unseen), 'value')} in test "
                f"that train never has: {listed}{more}; {rows:,} test rows "
                f"({pct(rows, other.present)}).",
                split="test",
                columns=(col.name,),
                n_affected=rows,
                metrics={"categories": len(unseen), "rows": rows},
                hint="stratify the split, or map rare categories to 'other' before splitting",
            )


def _categorical(dtype: str) -> bool:
    return str(dtype).startswith("dictionary")
