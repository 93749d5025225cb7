from __future__ import annotations

import numpy as np

from datavet.auditors.base import AuditContext, Auditor, Skip, pct, rows_text
from datavet.findings import Severity
from datavet.scan.rowchecks import match_rows


class NearDuplicates(Auditor):
    """Test rows that equal a train row after rounding and normalising, but not exactly.

    **What it checks**
    A second pass hashes every row after normalisation: floats rounded to 6 significant digits
    (``digits``), text case-folded with white space trimmed and collapsed, ID-like and declared
    group/time columns left out. Test rows whose normalised hash matches a train row, but whose
    exact hash does not (those are S001), are counted, with example pairs. Exact over all rows,
    streaming, like S001.

    **Why it matters**
    A copy that went through a CSV round trip, a unit rescale and back, a re-export with another
    float precision, or an extra space in a text field is still the same example. Exact-match
    checks miss it and the test score counts it as unseen.

    **How to fix**
    De-duplicate on normalised values before splitting (round floats, normalise text), or split
    by the entity the rows came from.
    """

    code = "S007"
    name = "near-duplicate-rows"
    severity = Severity.WARNING
    summary = "test rows equal to train rows after rounding/normalising, not exactly"
    thresholds = {"digits": 6}

    def check(self, ctx: AuditContext):
        ctx.require_test()
        if ctx.near is None:
            raise Skip("the near-duplicate pass did not run")
        if not ctx.near_columns:
            raise Skip("no columns left to compare after leaving out ID-like columns")
        train, test = ctx.near["train"], ctx.near["test"]
        near_at = match_rows(test.near, train.near)
        exact_at = match_rows(test.exact, train.exact)
        hit = np.flatnonzero((near_at >= 0) & (exact_at < 0))
        if not len(hit):
            return
        hit = hit[np.argsort(test.pos[hit], kind="stable")]
        examples = tuple(test.pos[hit[:5]].tolist())
        pairs = ", ".join(f"test {test.pos[i]} ~ train {train.pos[near_at[i]]}" for i in hit[:3])
        yield self.finding(
            f"{len(hit):,} test rows ({pct(len(hit), ctx.test.rows)}) equal a train row after "
            f"rounding to {int(self.options['digits'])} significant digits and normalising text, "
            f"though not exactly: {rows_text(examples, len(hit))}; e.g. {pairs}.",
            split="test",
            n_affected=int(len(hit)),
            examples=examples,
            metrics={"count": int(len(hit)), "fraction": len(hit) / ctx.test.rows},
            hint="de-duplicate on normalised values before splitting",
        )
