from __future__ import annotations

import numpy as np

from datavet.auditors.base import AuditContext, Auditor, Skip, fmt, pct, rows_text
from datavet.auditors.train_test_overlap import compared_features
from datavet.findings import Severity
from datavet.framework import ABOVE_ONE
from datavet.scan.neardup import FINGERPRINTED
from datavet.scan.rowchecks import joint_agreement, match_rows


class NearDuplicates(Auditor):
    """Test rows that are near copies of a train row: equal after normalising, not exactly.

    **What it checks**
    A pass hashes every row after normalisation: floats rounded to 6 significant digits
    (``digits``), text case-folded with white space trimmed and collapsed, ID-like, ``--group``
    and time columns left out. A test row whose normalised hash matches a train row, but whose
    exact hash does not (those are S001), is a candidate. It counts as a near copy only when
    the pair agrees on (almost) every feature:

    - every compared column agrees after normalisation (that is the hash);
    - a left-out time column agrees too (rows of two different dates with equal readings are
      two measurements, not a copy); only identifiers (ID-like and group columns) may differ;
    - the agreement is informative: at least ``min_agree`` (50%) of the shared columns, and at
      least ``min_columns`` (2), agree with a value that is present and not constant in train.
      Two rows that share two of six values, or whose only values are missing, are not copies;
    - the agreement is unlikely by chance. Each compared column's chance that two rows agree
      after normalising is estimated from train (squared value shares where every value was
      counted; for a continuous float, its density times the width of a 6-digit rounding bin),
      multiplied over the columns as if independent. Independent values of a continuous column
      coincide to 6 digits now and then, and more often the larger the splits: the near copies
      are reported only when they are at least ``chance_ratio`` (10) times the test rows expected
      to meet a train row by chance.

    Test rows that S001 already reports (equal to a train row once row-key columns are left
    out) are not counted again.

    The finding names the columns in which the near copies differ and by how much: the
    identifiers (with the difference for numbers), and the compared columns whose exact values
    differ (within rounding to 6 significant digits, or in case and white space; told apart by
    a one-byte fingerprint of the exact value, so about 1 row in 256 may go uncounted, for the
    first 32 compared columns by name). Exact over all rows, streaming, like S001.

    **Why it matters**
    A copy that went through a CSV round trip, a unit rescale and back, a re-export with another
    float precision, an extra space in a text field, or a new row ID is still the same example.
    Exact-match checks miss it and the test score counts it as unseen.

    **How to fix**
    De-duplicate on normalised values before splitting (round floats, normalise text, drop
    IDs), or split by the entity the rows came from.
    """

    code = "S007"
    name = "near-duplicate-rows"
    severity = Severity.WARNING
    summary = "test rows that are near copies of train rows (equal after normalising)"
    thresholds = {"digits": 6, "min_agree": 0.5, "min_columns": 2, "chance_ratio": 10}
    ranges = {"chance_ratio": ABOVE_ONE}
    needs = ("test", "near_hashes")
    sections = ("leakage",)

    def check(self, ctx: AuditContext):
        if ctx.near is None:
            raise Skip("the near-duplicate pass did not run")
        if not ctx.near_columns:
            raise Skip("no columns left to compare after leaving out ID-like columns")
        shared, _ = compared_features(ctx)
        train, test = ctx.near["train"], ctx.near["test"]
        near_at = match_rows(test.near, train.near)
        exact_at = match_rows(test.exact, train.exact)
        hit = np.flatnonzero((near_at >= 0) & (exact_at < 0))
        reported = ctx.keyless_rows.overlap_rows if ctx.keyless_rows is not None else None
        if reported is not None and len(reported):  # S001's, with the row keys left out
            hit = hit[~np.isin(test.pos[hit], reported)]
        if not len(hit):
            return
        compared = sorted(ctx.near_columns)
        left = sorted(shared - set(compared))
        keys = ctx.key_columns
        digits = int(self.options["digits"])
        # agreement that means something: compared values present, in columns not constant
        constant = sum(
            1 for c in compared if (s := ctx.train.columns.get(c)) is not None and s.n_distinct == 1
        )
        need = max(self.options["min_columns"], self.options["min_agree"] * len(shared))
        a, b = test.detail, train.detail
        known = (
            a is not None
            and b is not None
            and a.lanes.shape[1] == len(left) == b.lanes.shape[1]
            and a.prints.shape[1] == b.prints.shape[1]
        )
        if known:
            j = near_at[hit]
            informative = np.minimum(a.filled[hit], b.filled[j]) - constant
            ok = informative >= need
            differs_left = a.lanes[hit] != b.lanes[j]  # (h, k)
            for k, name in enumerate(left):
                if name not in keys:  # a time column (or other feature) must agree
                    ok &= ~differs_left[:, k]
            hit, j, differs_left = hit[ok], j[ok], differs_left[ok]
            differs_cmp = a.prints[hit] != b.prints[j]  # (h, m)
        else:  # no per-row detail (an old profile): the hash alone, with the column check
            if len(compared) < need:
                return
            j = near_at[hit]
            differs_left = np.zeros((len(hit), 0), bool)
            differs_cmp = np.zeros((len(hit), 0), bool)
        if not len(hit):
            return
        chance = _chance_matches(ctx, compared, digits)
        if len(hit) < self.options["chance_ratio"] * chance:
            return
        order = np.argsort(test.pos[hit], kind="stable")
        hit, j = hit[order], j[order]
        differs_left, differs_cmp = differs_left[order], differs_cmp[order]
        counts: dict[str, int] = {}
        how: dict[str, str] = {}
        for k, name in enumerate(left if known else []):
            n_diff = int(differs_left[:, k].sum())
            if n_diff:
                counts[name] = n_diff
                gap = np.abs(a.values[hit, k] - b.values[j, k])[differs_left[:, k]]
                gap = gap[np.isfinite(gap)]
                how[name] = (
                    f"identifier, differs by up to {fmt(float(gap.max()))}"
                    if len(gap)
                    else "identifier"
                )
        for k, name in enumerate(compared[:FINGERPRINTED] if known else []):
            n_diff = int(differs_cmp[:, k].sum())
            if n_diff:
                counts[name] = n_diff
                s = ctx.train.columns.get(name)
                how[name] = (
                    f"equal to {digits} significant digits"
                    if s is not None and s.kind == "numeric"
                    else "equal after case and white space"
                )
        if known and len(compared) > FINGERPRINTED:
            how["..."] = f"columns past the first {FINGERPRINTED} compared are not itemised"
        n = len(hit)
        examples = tuple(test.pos[hit[:5]].tolist())
        pairs = ", ".join(f"test {test.pos[i]} ~ train {train.pos[r]}" for i, r in zip(hit[:3], j))
        named = sorted((c for c in counts), key=lambda c: (-counts[c], c))
        if named:
            shown = "; ".join(f"{c!r} in {plural_rows(counts[c])} ({how[c]})" for c in named[:5])
            more = f" (+{len(named) - 5} more columns)" if len(named) > 5 else ""
            differ = f" They differ in {shown}{more}."
        else:
            differ = ""
        yield self.finding(
            f"{n:,} test rows ({pct(n, ctx.test.rows)}) are near copies of train rows: equal on "
            f"every compared column after rounding to {digits} significant digits and "
            f"normalising text, though not exactly: {rows_text(examples, n)}; e.g. {pairs}."
            + differ,
            split="test",
            columns=tuple(named),
            n_affected=int(n),
            examples=examples,
            metrics={
                "count": int(n),
                "fraction": n / ctx.test.rows,
                "compared_columns": len(compared),
                "expected_by_chance": chance,
                **{f"differ[{c}]": counts[c] for c in named},
            },
            hint="de-duplicate on normalised values (and without IDs) before splitting",
        )


def plural_rows(n: int) -> str:
    return f"{n:,} row{'' if n == 1 else 's'}"


def _chance_matches(ctx: AuditContext, compared: list[str], digits: int) -> float:
    """The test rows expected, by chance alone, to equal some train row on every compared
    column after normalising but not exactly (the columns' agreement chances multiplied as if
    independent): chance equal rows in coarse data are exact, S001's and not near copies."""
    near = joint_agreement(ctx.train.columns, compared, digits)
    exact = joint_agreement(ctx.train.columns, compared)
    n = ctx.train.rows
    return float(max(0.0, np.exp(-n * exact) - np.exp(-n * near)) * ctx.test.rows)
