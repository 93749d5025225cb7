from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor, pct
from datavet.findings import Severity


class MixedTypes(Auditor):
    """A column mixes numbers and text.

    **What it checks**
    Every text column of every split (target included): how many of its values read as numbers
    ("12", "-3.5", "1e-3", "nan", "inf") and how many do not. It fires when numbers are at least
    ``min_numeric`` (50%) of the non-missing values and text values remain, and shows the first
    distinct text values with their rows. A pandas object column that holds both Python numbers
    and strings is read the same way.

    **Why it matters**
    A numeric column with a few strings ("n/a", "?", "1,234", "12 kg") is read as text: it drops
    out of numeric checks, its numbers are compared as strings, a model pipeline either crashes
    on it or one-hot encodes thousands of "categories". The strings are usually missing-value
    markers or formatting the parser did not understand.

    **How to fix**
    Map the marker strings to missing values when reading (``na_values=[...]``), fix separators
    and units at the source, then cast the column to a number.
    """

    code = "V004"
    name = "mixed-types"
    severity = Severity.WARNING
    summary = "a column mixes numbers and strings"
    thresholds = {"min_numeric": 0.5}
    column_cell = "dtype"
    per_column = ("train", "test")
    per_column_kinds = ("string",)

    def check(self, ctx: AuditContext):
        for profile in ctx.splits:
            cols = list(profile.columns.values())
            if profile.label is not None:
                cols.append(profile.label)
            for col in cols:
                if col.kind != "string" or col.present == 0:
                    continue
                numbers = col.numeric_text
                text = col.present - numbers
                if text == 0 or numbers < self.options["min_numeric"] * col.present:
                    continue
                shown = ", ".join(f"{v!r} (row {r})" for r, v in col.text_values)
                yield self.finding(
                    f"Column {col.name!r} in {profile.split} mixes numbers and text: {numbers:,} "
                    f"values ({pct(numbers, col.present)}) read as numbers and {text:,} do not, "
                    f"e.g. {shown}.",
                    split=profile.split,
                    columns=(col.name,),
                    n_affected=text,
                    examples=tuple(r for r, _ in col.text_values),
                    metrics={
                        "numeric": numbers,
                        "text": text,
                        "numeric_fraction": numbers / col.present,
                    },
                    hint="map marker strings to missing when reading (na_values); cast to a number",
                )
