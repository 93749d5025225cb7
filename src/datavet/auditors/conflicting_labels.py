from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor, Skip, pct, plural, rows_text
from datavet.findings import Severity


class ConflictingLabels(Auditor):
    """Rows with identical features but different labels.

    **What it checks**
    Within each split: groups of rows whose features are identical (the 128-bit row hashes of
    S001/S002) and whose labels are not all the same; the count is of rows in such groups.
    Across splits: test rows identical to a train row in features but with another label.
    Rows whose label is missing are left out (V003 reports them). Classification only: for a
    regression target, equal inputs with different targets are the noise a model averages over.

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
    needs = ("target", "row_checks")

    def check(self, ctx: AuditContext):
        if ctx.task == "regression":
            raise Skip(
                "regression target: rows with equal features and different targets are noise "
                "the model averages, not conflicting labels"
            )
        for profile in ctx.splits:
            found = ctx.rows.conflicts.get(profile.split)
            if profile.label is None or found is None or not found.n:
                continue
            yield self.finding(
                f"{found.n:,} rows of {profile.split} ({pct(found.n, profile.rows)}) share "
                f"their features with a row of another label ({plural(found.groups, 'group')}): "
                f"{rows_text(found.examples, found.n)}.",
                split=profile.split,
                columns=(profile.label.name,),
                n_affected=found.n,
                examples=found.examples,
                metrics={"rows": found.n, "groups": found.groups},
                hint="review and relabel or drop the groups; add the feature that separates them",
            )
        if ctx.test is None or ctx.test.label is None:
            return
        found = ctx.rows.cross_conflicts
        if not found.n:
            return
        pairs = ", ".join(f"test {t} vs train {r}" for t, r in found.pairs[:3])
        yield self.finding(
            f"{found.n:,} test rows ({pct(found.n, ctx.test.rows)}) are identical to a train row "
            f"in features but carry another label: {rows_text(found.examples, found.n)}; "
            f"e.g. {pairs}.",
            split="test",
            columns=(ctx.target,),
            n_affected=found.n,
            examples=found.examples,
            metrics={"rows": found.n},
            hint="de-duplicate before splitting; review the labels of these rows",
        )
