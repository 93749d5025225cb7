from __future__ import annotations

import numpy as np
import pandas as pd

from datavet.auditors.base import AuditContext, Auditor, pct, plural, rows_text
from datavet.auditors.train_test_overlap import match_rows
from datavet.findings import Severity
from datavet.scan.hashing import MISSING_HASH


class ConflictingLabels(Auditor):
    """Rows with identical features but different labels.

    **What it checks**
    Within each split: groups of rows whose features are identical (the 128-bit row hashes of
    S001/S002) and whose labels are not all the same; the count is of rows in such groups.
    Across splits: test rows identical to a train row in features but with another label.
    Rows whose label is missing are left out (V003 reports them).

    **Why it matters**
    No model can fit both labels of one input: they cap the best reachable accuracy and show up
    as a loss floor that no architecture moves. They come from labelling disagreement, labels
    attached to the wrong rows, or features too coarse to tell cases apart. Across splits, the
    test set grades the model against the opposite of what it learned.

    **How to fix**
    Review the conflicting groups (the example rows); relabel or drop them, or add the feature
    that tells them apart. De-duplicate before splitting.
    """

    code = "S003"
    name = "conflicting-labels"
    severity = Severity.WARNING
    summary = "identical features with different labels"

    def check(self, ctx: AuditContext):
        ctx.require_target()
        for profile in ctx.splits:
            if profile.label is None:
                continue
            pos, rows, labels = profile.hashes.arrays()
            labelled = labels != MISSING_HASH
            pos, rows, labels = pos[labelled], rows[labelled], labels[labelled]
            cand = np.flatnonzero(pd.Series(rows[:, 0]).duplicated(keep=False).to_numpy())
            if not len(cand):
                continue
            frame = pd.DataFrame(
                {"h0": rows[cand, 0], "h1": rows[cand, 1], "y": labels[cand], "row": pos[cand]}
            )
            n_labels = frame.groupby(["h0", "h1"])["y"].transform("nunique")
            bad = frame[n_labels.to_numpy() > 1]
            if bad.empty:
                continue
            groups = bad.groupby(["h0", "h1"]).ngroups
            examples = tuple(np.sort(bad["row"].to_numpy())[:5].tolist())
            yield self.finding(
                f"{len(bad):,} rows of {profile.split} ({pct(len(bad), profile.rows)}) share "
                f"their features with a row of another label ({plural(groups, 'group')}): "
                f"{rows_text(examples, len(bad))}.",
                split=profile.split,
                columns=(profile.label.name,),
                n_affected=len(bad),
                examples=examples,
                metrics={"rows": len(bad), "groups": groups},
                hint="review and relabel or drop the groups; add the feature that separates them",
            )
        if ctx.test is None or ctx.test.label is None:
            return
        train_pos, train_rows, train_labels = _labelled(ctx.train.hashes.arrays(shared=True))
        test_pos, test_rows, test_labels = _labelled(ctx.test.hashes.arrays(shared=True))
        at = match_rows(test_rows, train_rows)
        hit = np.flatnonzero(at >= 0)
        if not len(hit):
            return
        # A test row conflicts when no train copy of it carries its label.
        frame = pd.DataFrame({"h0": train_rows[:, 0], "h1": train_rows[:, 1], "y": train_labels})
        same = frame.merge(
            pd.DataFrame(
                {"h0": test_rows[hit, 0], "h1": test_rows[hit, 1], "y": test_labels[hit], "i": hit}
            ),
            on=["h0", "h1", "y"],
            how="inner",
        )["i"].unique()
        conflict = np.setdiff1d(hit, same)
        if not len(conflict):
            return
        examples = tuple(test_pos[conflict[:5]].tolist())
        pairs = ", ".join(f"test {test_pos[i]} vs train {train_pos[at[i]]}" for i in conflict[:3])
        yield self.finding(
            f"{len(conflict):,} test rows ({pct(len(conflict), ctx.test.rows)}) are identical to "
            f"a train row in features but carry another label: {rows_text(examples, len(conflict))}"
            f"; e.g. {pairs}.",
            split="test",
            columns=(ctx.target,),
            n_affected=int(len(conflict)),
            examples=examples,
            metrics={"rows": int(len(conflict))},
            hint="de-duplicate before splitting; review the labels of these rows",
        )


def _labelled(arrays: tuple[np.ndarray, np.ndarray, np.ndarray]):
    pos, rows, labels = arrays
    keep = labels != MISSING_HASH
    return pos[keep], rows[keep], labels[keep]
