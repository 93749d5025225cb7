"""Per-column ignores: a step after the rules run. Findings of the named rules about the named
columns leave the report's findings and are listed in ``report.ignored`` with the reason the
configuration gives; each rule's outcome counts only what is left."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from datavet.findings import Finding, Outcome, Status
from datavet.report import Ignored, Report


@dataclass(frozen=True)
class ColumnIgnore:
    """Findings of ``rules`` about ``column`` are ignored, and the report says why.

    ``column`` is an exact column name, or a pattern where ``*`` matches any run of characters
    and ``?`` one character. ``rules`` are codes, family prefixes or names, as in ``select``.
    """

    column: str
    rules: tuple[str, ...]
    reason: str

    @property
    def codes(self) -> frozenset[str]:
        from datavet.rules import select_rules

        return frozenset(r.code for r in select_rules(list(self.rules)))

    def matches_column(self, name: str) -> bool:
        if name == self.column:
            return True
        if "*" not in self.column and "?" not in self.column:
            return False
        return _pattern(self.column).fullmatch(name) is not None


def _pattern(glob: str) -> re.Pattern:
    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob)
    return re.compile("".join(parts), re.DOTALL)


def apply_column_ignores(report: Report, ignores: Sequence[ColumnIgnore]) -> Report:
    """A copy of ``report`` without the findings that ``ignores`` cover, which are listed in
    ``report.ignored`` with their reason; each rule's outcome counts only what is left.

    A finding is ignored when it names at least one column and every column it names is
    covered by an ignore for its rule (a finding about ``x`` and ``y`` stays when only ``x``
    is ignored: it still says something about ``y``).

    A finding that stands for one finding per column (a rule that reports many columns as one
    finding: it has ``parts`` and ``regroup``, as ``auditors.base.GroupedFinding``) is taken
    apart first: each ignored column's own finding is listed as ignored, and the other columns
    are reported as the rule reports them without the ignored ones (one finding each, or one
    for the group), so an ignore does not depend on how many other columns the rule flags.
    """
    if not ignores:
        return report
    unmatched = _unmatched_notes(report, ignores)
    if unmatched:
        report = replace(report, notes=[*report.notes, *unmatched])
    codes = [(ig, ig.codes) for ig in ignores]
    kept: list[Finding] = []
    ignored = list(getattr(report, "ignored", []))
    changed = False
    for f in report.findings:
        parts = getattr(f, "parts", ())
        regroup = getattr(f, "regroup", None)
        if parts and regroup is not None:
            found = [(p, _ignore_reasons(p, codes)) for p in parts]
            if any(reasons is not None for _, reasons in found):
                changed = True
                for p, reasons in found:
                    if reasons is not None:
                        ignored.append(Ignored(finding=p, reason="; ".join(reasons)))
                kept += regroup([p for p, reasons in found if reasons is None])
                continue
        reasons = _ignore_reasons(f, codes)
        if reasons is None:
            kept.append(f)
        else:
            changed = True
            ignored.append(Ignored(finding=f, reason="; ".join(reasons)))
    if not changed:
        return report
    per_rule: dict[str, int] = {}
    for f in kept:
        per_rule[f.code] = per_rule.get(f.code, 0) + 1
    outcomes = [_recount(o, per_rule.get(o.code, 0)) for o in report.outcomes]
    return replace(report, findings=kept, outcomes=outcomes, ignored=ignored)


def _unmatched_notes(report: Report, ignores: Sequence[ColumnIgnore]) -> list[str]:
    """A note for each ignore whose column matches no column of the data (a typo, or a column
    renamed since): it never takes effect, and the user should know, as ruff reports an unused
    ``noqa``."""
    names: set[str] = set()
    for data in (report.datasets or {}).values():
        names.update(c.get("name") for c in data.get("columns") or () if c.get("name"))
        label = data.get("label") or {}
        if label.get("name"):
            names.add(label["name"])
    if not names:  # nothing known about the columns (a report without datasets)
        return []
    notes = []
    for ig in ignores:
        if any(ig.matches_column(n) for n in names):
            continue
        close = difflib.get_close_matches(ig.column, sorted(names), n=1)
        folded = [n for n in names if n.casefold() == ig.column.casefold()]
        hint = f" (did you mean {(folded or close)[0]!r}?)" if folded or close else ""
        notes.append(
            f"per-column-ignores: {ig.column!r} matches no column of the data{hint}; names are "
            "compared exactly, case included, so it ignores nothing"
        )
    return notes


def _ignore_reasons(
    f: Finding, codes: Sequence[tuple[ColumnIgnore, frozenset[str]]]
) -> list[str] | None:
    if not f.columns:
        return None
    reasons: list[str] = []
    for column in f.columns:
        hits = [ig for ig, c in codes if f.code in c and ig.matches_column(column)]
        if not hits:
            return None
        for ig in hits:
            if ig.reason not in reasons:
                reasons.append(ig.reason)
    return reasons


def _recount(o: Outcome, n: int) -> Outcome:
    if o.status not in (Status.PASSED, Status.FAILED):
        return o
    return replace(o, status=Status.FAILED if n else Status.PASSED, n_findings=n)
