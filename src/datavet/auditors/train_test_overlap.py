from __future__ import annotations

from datavet.auditors.base import (
    AuditContext,
    Auditor,
    Skip,
    keyless,
    keyless_text,
    pct,
    plural,
    rows_text,
)
from datavet.auditors.duplicate_rows import image_like
from datavet.findings import Severity
from datavet.scan.rowchecks import by_chance, chance_overlap


class TrainTestOverlap(Auditor):
    """Test rows whose features also appear, identically, in train.

    **What it checks**
    Every test row against every train row, on the feature columns both splits share (the target
    excluded), with 128-bit hashes of canonicalised rows: ``1`` equals ``1.0``, ``-0.0`` equals
    ``0.0``, and NaN equals NaN, so a copied row with a missing value still matches. Counts are
    exact over all rows; nothing is sampled. Columns that only number rows are not features:
    a pandas index written with the data (``Unnamed: 0``, ``__index_level_0__``) is left out
    of the comparison, and when train has row-key columns (an order number, a UUID: ID-like,
    a different value on almost every row) rows are compared once more without them, since a
    copy made under a fresh key differs from its original only there. The message names the
    columns left out. When the splits' feature columns differ (a renamed or added column), rows
    are compared on the shared ones only when they are more than half of each split's features
    (ID-like columns not counted), and the message names the columns left out; otherwise equal
    rows would say little (two rows that share one column of two are not copies) and the rule
    is skipped with that reason. S004 names the schema difference.

    Coarse data matches by itself: with a few values per feature (survey answers, contingency
    tables), distinct test examples often equal a train row. As S002 does, the rule estimates
    the test rows that would equal a train row by chance, were they drawn as train's rows are
    (each train row's chance of equalling another: the share of its value in each column,
    multiplied as if independent); when that is at least
    10 and the rows found are fewer than twice as many, the finding is an info that gives the
    estimate (unless the rule's severity is set). Not for image and sequence inputs: a test
    image equal to a train image in all its values is a copy, never a coincidence; when every
    such test sample equals one train sample, the message says so (a blank or all-NaN image, or
    a placeholder written where loading failed).

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
    needs = ("test", "row_keys", "row_checks")
    sections = ("leakage",)

    def check(self, ctx: AuditContext):
        shared, only = compared_features(ctx)
        found, left_out = keyless(ctx, lambda checks: checks.overlap)
        if not found.n:
            return
        pairs = ", ".join(f"test {t} = train {r}" for t, r in found.pairs[:3])
        metrics = {
            "count": found.n,
            "fraction": found.n / ctx.test.rows,
            "distinct_train_rows": found.groups,
        }
        if left_out:
            metrics["count_with_row_keys"] = ctx.rows.overlap.n
        how = keyless_text(left_out)
        if only:
            metrics["compared_columns"] = len(shared)
            how += (
                f"; compared on the {plural(len(shared), 'feature column')} both splits share, "
                f"not on {only_text(only)}"
            )
        natural = False
        note = ""
        if image_like(ctx.train):  # images, sequences: equal samples are copies, not chance
            if found.groups == 1 and found.n >= 2:
                note = (
                    f" Every one of them equals train sample {found.pairs[0][1]:,}: a blank or "
                    "all-NaN sample, or a placeholder written where loading failed?"
                )
        else:
            expected = _chance_overlap(ctx, shared - set(left_out))
            metrics["expected_by_chance"] = expected
            natural = by_chance(found.n, expected)
            if natural:
                note = (
                    f" From train's value counts (columns taken as independent), about "
                    f"{expected:,.0f} test rows equal a train row by chance alone: these are "
                    "likely distinct examples that coincide, not copies."
                )
        yield self.finding(
            f"{found.n:,} of {ctx.test.rows:,} test rows ({pct(found.n, ctx.test.rows)}) also "
            f"appear in train ({how}): "
            f"{rows_text(found.examples, found.n)}; e.g. {pairs}.{note}",
            severity=Severity.INFO if natural and self.level == self.severity else None,
            split="test",
            n_affected=found.n,
            examples=found.examples,
            metrics=metrics,
            hint="with so few distinct feature combinations, equal rows are expected; a test "
            "score on such data is no less fair for them"
            if natural
            else "de-duplicate before splitting; split by group (subject, source) so copies "
            "land on one side",
        )


def _chance_overlap(ctx: AuditContext, compared: set[str]) -> float:
    """The test rows expected to equal some train row by chance alone, were they drawn like
    train's rows (from train's value counts of the compared columns, as if independent)."""
    return chance_overlap(ctx.train.columns, sorted(compared), ctx.train.rows, ctx.test.rows)


def compared_features(ctx: AuditContext) -> tuple[set[str], dict[str, str]]:
    """The feature columns train and test rows are compared on (the ones both splits share),
    and each column only one split has (name -> "train only" / "test only"). Skip when the
    shared ones are no more than half of either split's features (ID-like columns not counted):
    rows equal on so few of their columns are no evidence of copies."""
    train = {c[0] for c in ctx.columns.get("train") or [(n,) for n in ctx.train.columns]}
    test = {c[0] for c in ctx.columns.get("test") or [(n,) for n in ctx.test.columns]}
    train.discard(ctx.target)
    test.discard(ctx.target)
    shared = train & test
    if not shared:
        raise Skip("train and test share no feature column, so overlap is undefined (see S004)")
    only = {c: "train only" for c in sorted(train - test)}
    only.update({c: "test only" for c in sorted(test - train)})
    keys = ctx.key_columns
    counted = len(shared - keys)
    if only and any(2 * counted <= len(side - keys) for side in (train, test)):
        raise Skip(
            f"only {counted} of the feature columns ({len(train - keys)} in train, "
            f"{len(test - keys)} in test) are in both splits, not {only_text(only)}: rows equal "
            "on so few of their columns are no evidence of copies (see S004)"
        )
    return shared, only


def only_text(only: dict[str, str]) -> str:
    shown = [f"{c!r} ({where})" for c, where in list(only.items())[:5]]
    more = f" (+{len(only) - 5} more)" if len(only) > 5 else ""
    return ", ".join(shown) + more
