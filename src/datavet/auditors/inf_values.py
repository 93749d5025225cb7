from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor, group_many, pct, rows_text
from datavet.findings import Severity


class InfValues(Auditor):
    """+inf or -inf in a numeric feature, counted apart from NaN.

    **What it checks**
    Every numeric column of every split: values that are positive or negative infinity, counted
    exactly and separately (``+inf`` and ``-inf`` each), with the first row positions. Vector
    columns (embeddings) are looked into: a row counts when its vector holds an infinite element,
    and the finding names the rows, the element positions and the dimensions.
    When more than five columns of a split hold infinities they are one finding listing the
    columns (every column in ``columns``, its count in ``metrics``).
    A column is reported once it holds at least ``min_count`` infinite values.

    **Why it matters**
    Infinity usually comes from ``log(0)``, a division by zero or an overflowing cast upstream.
    ``inf - inf`` and ``0 * inf`` are NaN, so one infinite input poisons the loss or, worse, only
    the gradients, while the loss still looks finite (a saturated ``tanh`` hides it).

    **How to fix**
    Fix the transform that produced it: ``log(x + eps)`` instead of ``log(x)``, guard divisions,
    clip to a physical range; then treat any remaining ones as missing values.
    """

    code = "V002"
    name = "inf-values"
    severity = Severity.ERROR
    summary = "+inf or -inf in a feature"
    thresholds = {"min_count": 1}
    column_cell = "inf"
    per_column = ("train", "test")

    def check(self, ctx: AuditContext):
        for profile in ctx.splits:
            found = list(self._columns(profile))
            if profile.tensor is None:
                found = group_many(self, found, headline="have +inf/-inf values")
            yield from found

    def _columns(self, profile):
        for col in profile.columns.values():
            if col.inf < self.options["min_count"]:
                continue
            parts = []
            if col.posinf:
                parts.append(f"{col.posinf:,} +inf")
            if col.neginf:
                parts.append(f"{col.neginf:,} -inf")
            if profile.tensor is not None:
                # tensor inputs: one stats entry per channel, counted in samples
                kinds = " and ".join(
                    k for k, n in (("+inf", col.posinf), ("-inf", col.neginf)) if n
                )
                plural = "s" if col.inf != 1 else ""
                message = (
                    f"Input {col.name} holds {kinds} in {col.inf:,} sample{plural} of "
                    f"{profile.split} ({pct(col.inf, col.rows)}): "
                    f"{rows_text(col.inf_rows, col.inf, unit='sample')}."
                )
            elif col.vector is not None:
                vec = col.vector
                kinds = " and ".join(
                    k for k, n in (("+inf", vec.posinf_values), ("-inf", vec.neginf_values)) if n
                )
                plural = "s" if col.inf != 1 else ""
                message = (
                    f"Vector column {col.name!r} has {col.inf:,} row{plural} holding {kinds} "
                    f"in {profile.split} ({pct(col.inf, col.rows)}): "
                    f"{rows_text(col.inf_rows, col.inf)} ({vec.where('inf')})."
                )
            else:
                message = (
                    f"Column {col.name!r} has {' and '.join(parts)} values in "
                    f"{profile.split} ({pct(col.inf, col.rows)}): "
                    f"{rows_text(col.inf_rows, col.inf)}."
                )
            yield self.finding(
                message,
                split=profile.split,
                columns=(col.name,),
                n_affected=col.inf,
                examples=col.inf_rows,
                metrics={
                    "posinf": col.posinf,
                    "neginf": col.neginf,
                    "fraction": col.inf / col.rows,
                    **(
                        {
                            "posinf_elements": col.vector.posinf_values,
                            "neginf_elements": col.vector.neginf_values,
                        }
                        if col.vector is not None
                        else {}
                    ),
                },
                hint="fix the transform that made it (log(x + eps), guarded division) or clip",
            )
