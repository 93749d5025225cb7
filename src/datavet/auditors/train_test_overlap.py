from __future__ import annotations

import numpy as np
import pandas as pd

from datavet.auditors.base import AuditContext, Auditor, pct, rows_text
from datavet.findings import Severity


def _frame(rows: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"h0": rows[:, 0], "h1": rows[:, 1]})


def match_rows(rows: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """For each 128-bit row hash in ``rows``, the index of its first equal in ``reference``,
    or -1. The first 64-bit lane finds candidates cheaply; the full 128 bits decide."""
    out = np.full(len(rows), -1, dtype=np.int64)
    cand = np.flatnonzero(pd.Series(rows[:, 0]).isin(reference[:, 0]).to_numpy())
    if not len(cand):
        return out
    ref_idx = np.flatnonzero(pd.Series(reference[:, 0]).isin(rows[cand, 0]).to_numpy())
    ref = _frame(reference[ref_idx])
    ref["at"] = ref_idx
    ref = ref.drop_duplicates(["h0", "h1"], keep="first")
    merged = _frame(rows[cand]).merge(ref, on=["h0", "h1"], how="left", sort=False)
    out[cand] = merged["at"].fillna(-1).to_numpy(dtype=np.int64)
    return out


class TrainTestOverlap(Auditor):
    """Test rows whose features also appear, identically, in train.

    **What it checks**
    Every test row against every train row, on the feature columns both splits share (the target
    excluded), with 128-bit hashes of canonicalised rows: ``1`` equals ``1.0``, ``-0.0`` equals
    ``0.0``, and NaN equals NaN, so a copied row with a missing value still matches. Counts are
    exact over all rows; nothing is sampled.

    **Why it matters**
    A test row that the model saw in training measures memory, not generalisation: the test
    score is inflated by exactly the rows that leaked. Copies usually come from de-duplicating
    after splitting, augmentation before splitting, or several samples from one subject.

    **How to fix**
    De-duplicate before splitting; split by group (subject, session, source file) so related
    rows land on one side; drop the overlapping rows from test.
    """

    code = "S001"
    name = "train-test-overlap"
    severity = Severity.ERROR
    summary = "identical rows (features) in train and test"

    def check(self, ctx: AuditContext):
        ctx.require_test()
        train_pos, train_rows, _ = ctx.train.hashes.arrays(shared=True)
        test_pos, test_rows, _ = ctx.test.hashes.arrays(shared=True)
        at = match_rows(test_rows, train_rows)
        hit = np.flatnonzero(at >= 0)
        if not len(hit):
            return
        examples = tuple(test_pos[hit[:5]].tolist())
        pairs = ", ".join(f"test {test_pos[i]} = train {train_pos[at[i]]}" for i in hit[:3])
        yield self.finding(
            f"{len(hit):,} of {ctx.test.rows:,} test rows ({pct(len(hit), ctx.test.rows)}) also "
            f"appear in train (identical features): {rows_text(examples, len(hit))}; "
            f"e.g. {pairs}.",
            split="test",
            n_affected=int(len(hit)),
            examples=examples,
            metrics={
                "count": int(len(hit)),
                "fraction": len(hit) / ctx.test.rows,
                "distinct_train_rows": int(len(np.unique(at[hit]))),
            },
            hint="de-duplicate before splitting; split by group (subject, source) so copies "
            "land on one side",
        )
