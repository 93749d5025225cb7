from __future__ import annotations

import numpy as np
import pandas as pd

from datavet.auditors.base import AuditContext, Auditor, pct, rows_text
from datavet.findings import Severity


class DuplicateRows(Auditor):
    """Rows that repeat an earlier row of the same split exactly (features and label).

    **What it checks**
    Each split on its own: rows whose features (the same canonical 128-bit hashes as S001) and
    label equal an earlier row's. The count is of the extra copies; the first copy is not counted.

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

    def check(self, ctx: AuditContext):
        for profile in ctx.splits:
            pos, rows, labels = profile.hashes.arrays()
            if len(pos) < 2:
                continue
            # Rows whose first 64-bit lane repeats are candidates; all 128 bits plus the label
            # decide among them (cheap: there are few candidates in most data).
            cand = np.flatnonzero(pd.Series(rows[:, 0]).duplicated(keep=False).to_numpy())
            frame = pd.DataFrame({"h0": rows[cand, 0], "h1": rows[cand, 1], "y": labels[cand]})
            dup_c = frame.duplicated(keep="first").to_numpy()
            dup = np.zeros(len(pos), dtype=bool)
            dup[cand[dup_c]] = True
            n = int(dup.sum())
            if n < self.options["min_count"]:
                continue
            first = pos[np.flatnonzero(dup)[:5]]
            groups = int(frame[dup_c].drop_duplicates().shape[0])
            yield self.finding(
                f"{n:,} rows of {profile.split} ({pct(n, profile.rows)}) repeat an earlier row "
                f"exactly ({groups:,} distinct rows repeated): {rows_text(first.tolist(), n)}.",
                split=profile.split,
                n_affected=n,
                examples=tuple(first.tolist()),
                metrics={"count": n, "fraction": n / profile.rows, "distinct_repeated": groups},
                hint="drop exact duplicates before splitting",
            )
