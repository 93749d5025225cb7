from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor
from datavet.findings import Severity


class SchemaMismatch(Auditor):
    """Train and test do not have the same columns, or a column changes type between them.

    **What it checks**
    Column names present in one split and not the other (the target may be absent from an
    unlabelled test split), columns whose kind differs (number in one split, text in the other),
    a different column order, and, at info level, numeric types that differ only in width or
    int vs float.

    **Why it matters**
    A model trained on one schema and evaluated on another either fails at inference or, worse,
    silently feeds a column into the wrong input: arrays built with ``df.to_numpy()`` follow
    column order, not names. A number stored as text in one split usually means a parsing
    problem (a stray "n/a", a thousands separator).

    **How to fix**
    Build both splits with the same code from the same source; fix the parsing that turned
    numbers into text; select columns by name in one fixed order before training.
    """

    code = "S004"
    name = "schema-mismatch"
    severity = Severity.ERROR
    summary = "train/test columns or dtypes differ"
    column_cell = "dtype"
    needs = ("test",)

    def check(self, ctx: AuditContext):
        train = [(n, t) for n, t, _ in ctx.columns["train"] if n != ctx.target]
        test = [(n, t) for n, t, _ in ctx.columns["test"] if n != ctx.target]
        train_t, test_t = dict(train), dict(test)
        kinds = {(split, n): k for split in ("train", "test") for n, _, k in ctx.columns[split]}
        missing = [n for n, _ in train if n not in test_t]
        extra = [n for n, _ in test if n not in train_t]
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"missing from test: {', '.join(map(repr, missing))}")
            if extra:
                parts.append(f"only in test: {', '.join(map(repr, extra))}")
            yield self.finding(
                "Train and test have different columns; " + "; ".join(parts) + ".",
                columns=tuple(missing + extra),
                n_affected=len(missing) + len(extra),
                metrics={"missing_in_test": len(missing), "extra_in_test": len(extra)},
                hint="build both splits with the same code; select the same columns by name",
            )
        changed, widths = [], []
        for name, t_train in train:
            t_test = test_t.get(name)
            if t_test is None or t_test == t_train:
                continue
            if kinds["train", name] == kinds["test", name]:
                widths.append((name, t_train, t_test))
            else:
                changed.append((name, t_train, t_test))
        if changed:
            listed = ", ".join(f"{n!r} is {a} in train but {b} in test" for n, a, b in changed)
            yield self.finding(
                f"Columns change type between train and test: {listed}.",
                columns=tuple(n for n, _, _ in changed),
                n_affected=len(changed),
                hint="fix the parsing that turned numbers into text (stray 'n/a', separators)",
            )
        if widths:
            listed = ", ".join(f"{n!r} {a} vs {b}" for n, a, b in widths)
            yield self.finding(
                f"Columns have compatible but different types in train and test: {listed}.",
                severity=Severity.INFO,
                columns=tuple(n for n, _, _ in widths),
                n_affected=len(widths),
                hint="cast both splits to one dtype before training",
            )
        common_train = [n for n, _ in train if n in test_t]
        common_test = [n for n, _ in test if n in train_t]
        if common_train != common_test:
            yield self.finding(
                "Train and test list their shared columns in a different order; arrays built "
                "by position (df.to_numpy()) would feed features into the wrong inputs.",
                severity=Severity.WARNING,
                columns=tuple(common_test),
                metrics={"columns": len(common_train)},
                hint="select columns by name in one fixed order before converting to arrays",
            )
