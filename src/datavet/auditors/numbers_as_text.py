from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor, pct
from datavet.findings import Severity


class NumbersAsText(Auditor):
    """A column of numbers written with thousands separators or decimal commas, read as text.

    **What it checks**
    Every text feature of every split: how many values are numbers written with separators,
    thousands ("47,617", "1,234,567.5", "1.234.567", "12 500") or a decimal comma ("3,5",
    "1.234,56"), and how many read as plain numbers ("12", "3.5"). It fires when those two
    together are at least ``min_numeric`` (90%) of the non-missing values, and names the
    separator found, with the first values and their rows. Text that merely contains commas
    ("Smith, John"), plain numbers and identifiers are not such values.

    **Why it matters**
    The reader did not understand the number format, so the column is text: it drops out of
    every numeric check, is compared as strings (so "9" > "10"), and a pipeline either crashes
    on it or one-hot encodes thousands of "categories", or treats it as an identifier. Files
    written by spreadsheets in many locales (``;``-separated, decimal commas) do this.

    **How to fix**
    Read the file with the separators declared, for example
    ``pandas.read_csv(path, thousands=",")`` or ``pandas.read_csv(path, sep=";",
    decimal=",")``, or remove them at the source; then the column is a number.
    """

    code = "V006"
    name = "numbers-as-text"
    severity = Severity.WARNING
    summary = "numbers written with thousands separators or decimal commas, read as text"
    thresholds = {"min_numeric": 0.9}

    def check(self, ctx: AuditContext):
        for profile in ctx.splits:
            for col in profile.columns.values():
                found = col.separated
                if col.kind != "string" or found is None or col.present == 0:
                    continue
                numbers = found.count + col.numeric_text
                if numbers < self.options["min_numeric"] * col.present:
                    continue
                seps = [
                    repr(sep)
                    for sep, n in (
                        (",", found.thousands_comma),
                        (".", found.thousands_dot),
                        (" ", found.thousands_space),
                    )
                    if n
                ]
                kinds = ["decimal commas"] if found.decimal_comma else []
                if seps:
                    kinds.append("thousands separators " + " and ".join(seps))
                shown = ", ".join(f"{v!r} (row {r})" for r, v in found.examples)
                yield self.finding(
                    f"Column {col.name!r} in {profile.split} holds numbers written as text: "
                    f"{found.count:,} values ({pct(found.count, col.present)}) use "
                    f"{' and '.join(kinds)}, e.g. {shown}; it is read as text, not as a number.",
                    split=profile.split,
                    columns=(col.name,),
                    n_affected=found.count,
                    examples=tuple(r for r, _ in found.examples),
                    metrics={
                        "separated": found.count,
                        "plain_numbers": col.numeric_text,
                        "decimal_comma": found.decimal_comma,
                        "thousands_comma": found.thousands_comma,
                        "thousands_dot": found.thousands_dot,
                        "thousands_space": found.thousands_space,
                        "fraction": found.count / col.present,
                    },
                    hint=found.hint + " when reading (pandas.read_csv), then it is a number",
                )
