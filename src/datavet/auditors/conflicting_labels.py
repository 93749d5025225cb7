from __future__ import annotations

from datavet.auditors.base import (
    AuditContext,
    Auditor,
    Skip,
    keyless,
    pct,
    plural,
    rows_text,
)
from datavet.auditors.duplicate_rows import chance_repeats_of
from datavet.auditors.train_test_overlap import compared_features, only_text
from datavet.findings import Severity
from datavet.scan.rowchecks import by_chance


class ConflictingLabels(Auditor):
    """Rows with identical features but different labels.

    **What it checks**
    Within each split: groups of rows whose features are identical (the 128-bit row hashes of
    S001/S002) and whose labels are not all the same; the count is of rows in such groups.
    Across splits: test rows identical to a train row in features but with another label.
    Rows whose label is missing are left out (V003 reports them). Classification only: for a
    regression target, equal inputs with different targets are the noise a model averages over.
    As in S001/S002, rows are compared once more with row-key columns (an order number, a UUID)
    left out: a relabelled copy under a fresh key is still a conflict. Across splits, rows are
    compared on the feature columns both splits share, under S001's conditions.

    When the features are coarse (their value counts, taken as independent, predict at least 10
    rows sharing their features by chance, as S002 estimates it, and half as many as conflict),
    the finding is an info that says so: the features cannot separate the classes there, which
    is a floor on the error rather than a sign of mislabelled rows.

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
    needs = ("target", "row_keys", "row_checks")

    def check(self, ctx: AuditContext):
        if ctx.task == "regression":
            raise Skip(
                "regression target: rows with equal features and different targets are noise "
                "the model averages, not conflicting labels"
            )
        for profile in ctx.splits:
            found, left_out = keyless(
                ctx, lambda checks, split=profile.split: checks.conflicts.get(split)
            )
            if profile.label is None or found is None or not found.n:
                continue
            how = _keys_text(left_out)
            expected = chance_repeats_of(profile, left_out, with_label=False)
            coarse = by_chance(found.n, expected)
            note = (
                f" From each column's value counts (taken as independent), about "
                f"{expected:,.0f} of {profile.rows:,} rows repeat one's features by chance "
                "alone: the features cannot tell these cases apart, which caps the accuracy; "
                "it does not show mislabelled rows."
                if coarse
                else ""
            )
            yield self.finding(
                f"{found.n:,} rows of {profile.split} ({pct(found.n, profile.rows)}) share "
                f"their features{how} with a row of another label "
                f"({plural(found.groups, 'group')}): {rows_text(found.examples, found.n)}.{note}",
                severity=Severity.INFO if coarse else None,
                split=profile.split,
                columns=(profile.label.name,),
                n_affected=found.n,
                examples=found.examples,
                metrics={"rows": found.n, "groups": found.groups, "expected_by_chance": expected},
                hint="add the features that separate these cases, or accept the noise floor"
                if coarse
                else "review and relabel or drop the groups; add the feature that separates them",
            )
        if ctx.test is None or ctx.test.label is None:
            return
        try:
            _, only = compared_features(ctx)
        except Skip:  # too few shared columns: S001 says why
            return
        found, left_out = keyless(ctx, lambda checks: checks.cross_conflicts)
        if not found.n:
            return
        how = _keys_text(left_out)
        if only:
            how += f" (compared on the columns both splits share, not on {only_text(only)})"
        pairs = ", ".join(f"test {t} vs train {r}" for t, r in found.pairs[:3])
        yield self.finding(
            f"{found.n:,} test rows ({pct(found.n, ctx.test.rows)}) are identical to a train row "
            f"in features{how} but carry another label: {rows_text(found.examples, found.n)}; "
            f"e.g. {pairs}.",
            split="test",
            columns=(ctx.target,),
            n_affected=found.n,
            examples=found.examples,
            metrics={"rows": found.n},
            hint="de-duplicate before splitting; review the labels of these rows",
        )


def _keys_text(left_out) -> str:
    if not left_out:
        return ""
    word = "column" if len(left_out) == 1 else "columns"
    return f" (the row-key {word} {', '.join(map(repr, left_out))} left out)"
