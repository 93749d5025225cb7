from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor, Skip, pct, plural
from datavet.findings import Severity
from datavet.tasks import TAIL_SHARE, count_run, whole_number


class UnseenTestClass(Auditor):
    """A class appears in the test labels but never in train.

    **What it checks**
    Exact class counts of both splits (classification only): every test class that train does
    not have, with its number of test rows. A text class that matches a train class once case
    and surrounding whitespace are ignored ("Cat" vs "cat ") is named with that train class.
    When the classes look like counts rather than codes (train's whole numbers start with a run
    of at least 10 consecutive ones that holds 95% of the rows, the unseen test classes are
    whole numbers too, and train's values thin out where they lie, such as 27 after a rare 25),
    a larger count is no new class: the finding is a warning (unless the rule's
    severity is set) that asks whether the target is a count (``--task regression``).

    **Why it matters**
    A model cannot predict a class it never saw: every such test row is an error whatever the
    model, and metrics computed with a class list taken from train silently drop them. It often
    means a split by time or source that moved a whole class to one side, or labels spelt
    differently in the two files ("Cat" vs "cat", 1 vs "1").

    **How to fix**
    Stratify the split by label; or, if the class is new on purpose, decide how the model should
    treat it (an "other" class, open-set detection) and evaluate that explicitly. Check that
    labels are encoded the same way in both files.
    """

    code = "L003"
    name = "unseen-test-class"
    severity = Severity.ERROR
    summary = "a test label never seen in train"
    needs = ("classification", "test")

    def check(self, ctx: AuditContext):
        train, test = ctx.train.label, ctx.test.label
        if test is None:
            raise Skip("the test split has no target column")
        if not (train.values.exact and test.values.exact):
            raise Skip("more than 1,024 classes; class counts are not exact")
        seen = set(train.values.keys())
        unseen = [(v, n) for v, n in test.values.most_common() if v not in seen]
        if not unseen:
            return
        rows = sum(n for _, n in unseen)
        spelt = _spellings(seen)
        listed = ", ".join(
            f"{v!r} ({plural(n, 'row')}{_variant(v, spelt)})" for v, n in unseen[:10]
        )
        more = f" and {len(unseen) - 10} more" if len(unseen) > 10 else ""
        message = (
            f"{len(unseen)} test class(es) never appear in train: {listed}{more}; "
            f"{plural(rows, 'test row')} ({pct(rows, test.present)}) cannot be predicted right."
        )
        hint = "stratify the split by label; check labels are spelt and typed alike"
        severity = None
        span = _count_span(train.values.counts, [v for v, _ in unseen])
        if span is not None:
            message += (
                f" Train's classes are the whole numbers {span}: if the target is a count, "
                "these are larger or smaller counts, not new classes."
            )
            hint = "use --task regression if the target is a count; else stratify the split"
            if self.level == Severity.ERROR:
                severity = Severity.WARNING
        yield self.finding(
            message,
            severity=severity,
            split="test",
            columns=(test.name,),
            n_affected=rows,
            metrics={"classes": len(unseen), "rows": rows, "fraction": rows / test.present},
            hint=hint,
        )


def _fold(value) -> str | None:
    return " ".join(value.split()).casefold() if isinstance(value, str) else None


def _spellings(seen: set) -> dict[str, list]:
    """Train's text classes by their case- and whitespace-folded form."""
    out: dict[str, list] = {}
    for v in seen:
        key = _fold(v)
        if key is not None:
            out.setdefault(key, []).append(v)
    return out


def _variant(value, spelt: dict[str, list]) -> str:
    """'; train has 'cat'' when ``value`` differs from train classes only in case or spaces."""
    same = spelt.get(_fold(value), []) if isinstance(value, str) else []
    if not same:
        return ""
    names = " / ".join(repr(v) for v in sorted(same)[:3])
    return f"; train has {names}, which differs only in case or whitespace"


def _count_span(counts: dict, unseen: list) -> str | None:
    """'0..25' when train's classes and the unseen ones look like counts: train's whole numbers
    start with a long consecutive run (:func:`count_run`) and thin out towards the end where
    the unseen whole numbers lie (27 after a rare 25 is the tail of a count; a 10 after ten
    equally common digits 0..9 is a new class)."""
    run = count_run(counts)
    if run is None or not all(whole_number(v) for v in unseen):
        return None
    lo, hi = min(counts), max(counts)
    rare = TAIL_SHARE * max(counts.values())
    if any(v > run[1] for v in unseen) and counts[hi] > rare:
        return None
    if any(v < lo for v in unseen) and counts[lo] > rare:
        return None
    return f"{lo:g}..{hi:g}"
