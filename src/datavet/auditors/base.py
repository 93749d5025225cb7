"""What every auditor is: a pure function of the split profiles that returns findings."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from datavet._later import Later
from datavet.findings import Finding, Severity
from datavet.framework import Rule, Skip, fmt, pct, plural, rows_text
from datavet.scan import Profile
from datavet.scan.neardup import NearRows
from datavet.scan.rowchecks import RowChecks, checks_of

if TYPE_CHECKING:
    from datavet.baselines import Baselines

__all__ = [
    "AuditContext",
    "Auditor",
    "ColumnItem",
    "GroupedFinding",
    "Skip",
    "fmt",
    "group_many",
    "grouped",
    "iter_features",
    "keyless",
    "keyless_text",
    "pct",
    "plural",
    "rows_text",
]


_ROWS_LOCK = threading.Lock()


@dataclass(frozen=True)
class AuditContext:
    train: Profile
    test: Profile | None = None
    target: str | None = None
    task: str | None = None  # "classification" | "regression" | None when there is no target
    columns: Mapping[str, tuple[tuple[str, str, str], ...]] = field(default_factory=dict)
    # split -> ((column name, arrow dtype, kind), ...) in file order, target included
    # The evidence computed after the scan may still be on its way (``Later``: computed on a
    # thread of its own while the rules that need none of it run); the rules read it through
    # ``rows``, ``near`` and ``require_baselines``, which wait for it.
    baselines: Baselines | Later[Baselines] | None = None
    # S001-S003: computed where the data lives (Dask), or started after the scan
    precomputed_rows: RowChecks | Later[RowChecks] | None = None
    group: str | None = None  # declared group (subject) column, --group
    time: str | None = None  # declared or detected time column, --time
    time_declared: bool = False
    near_pass: Mapping[str, NearRows] | Later[Mapping[str, NearRows]] | None = None
    # the near-duplicate pass (S007, S008), when run: read it as ``near``
    near_columns: tuple[str, ...] = ()  # columns the near-duplicate hashes cover
    id_columns: tuple[str, ...] = ()  # ID-like columns found in train (scan/idlike.py)
    row_keys: tuple[str, ...] = ()  # ID-like columns naming single rows (scan/idlike.py)
    keyless_rows: RowChecks | None = None  # S001/S002 with ``row_keys`` left out, when any

    @property
    def key_columns(self) -> set[str]:
        """Columns that identify rows or subjects rather than measure anything: left out of
        the scale check and the baselines' features, where they only make noise."""
        return {c for c in (self.group, *self.id_columns) if c}

    @property
    def pending(self) -> frozenset[str]:
        """The needs still being computed beside the rules (``run_rules(pending=...)`` starts
        the rules declaring one last)."""
        evidence = {
            "row_checks": self.precomputed_rows,
            "near_hashes": self.near_pass,
            "baselines": self.baselines,
        }
        return frozenset(n for n, v in evidence.items() if isinstance(v, Later) and not v.done())

    @property
    def near(self) -> Mapping[str, NearRows] | None:
        """The near-duplicate rows of both splits (S007, S008), or None when not computed."""
        return Later.now(self.near_pass)

    @property
    def rows(self) -> RowChecks:
        """Overlap, duplicate and conflict results from the row hashes (S001-S003): the ones
        computed beside the rules, or else computed once, by the first rule that asks (the
        rules may run on several threads)."""
        if self.precomputed_rows is not None:
            return Later.now(self.precomputed_rows)
        found = self.__dict__.get("_rows")
        if found is None:
            with _ROWS_LOCK:
                found = self.__dict__.get("_rows")
                if found is None:
                    test = self.test.hashes if self.test is not None else None
                    found = checks_of(
                        self.train.hashes, test, with_labels=self.train.label is not None
                    )
                    self.__dict__["_rows"] = found  # frozen dataclass: its own cache slot
        return found

    @property
    def splits(self) -> list[Profile]:
        return [self.train] if self.test is None else [self.train, self.test]

    def unmet(self, need: str) -> str | None:
        """Why this context cannot give a rule ``need`` (None: it can, or the runner
        provides it before the rules run)."""
        try:
            if need == "target":
                self.require_target()
            elif need == "classification":
                self.require_classification()
            elif need == "test":
                self.require_test()
        except Skip as skip:
            return str(skip)
        return None

    def require_target(self) -> None:
        if self.target is None or self.train.label is None:
            raise Skip("no target column given (pass --target)")

    def require_classification(self) -> None:
        self.require_target()
        if self.task != "classification":
            raise Skip(f"the task is {self.task}, not classification")

    def require_baselines(self) -> Baselines:
        self.require_target()
        b = Later.now(self.baselines)
        if b is None:
            raise Skip("baselines not fitted (--no-baselines / baselines=False)")
        if b.error is not None:
            raise RuntimeError(f"the baselines crashed: {b.skipped}\n{b.error}")
        if b.skipped:
            raise Skip(f"no baselines: {b.skipped}")
        return b

    def require_test(self) -> None:
        if self.test is None:
            raise Skip("no test split given (pass --test)")


class Auditor(Rule):
    """A tabular (V/F/L/S/B) or tensor (T) rule: a pure function of the split profiles
    (:class:`AuditContext`). Everything else is :class:`datavet.framework.Rule`'s."""

    severity: ClassVar[Severity]


def iter_features(profile: Profile, kinds: tuple[str, ...] | None = None) -> Iterator:
    for stats in profile.columns.values():
        if kinds is None or stats.kind in kinds:
            yield stats


def keyless(ctx: AuditContext, pick):
    """``pick(RowChecks)`` over all features, or over the features without the row-key columns
    when that finds more (a copy under a fresh key): (result, columns left out)."""
    found = pick(ctx.rows)
    if ctx.keyless_rows is not None:
        other = pick(ctx.keyless_rows)
        if other is not None and other.n > (found.n if found is not None else 0):
            return other, ctx.row_keys
    return found, ()


def keyless_text(left_out) -> str:
    """How the rows matched, for S001/S002 messages."""
    if not left_out:
        return "identical features"
    names = ", ".join(repr(c) for c in left_out)
    word = "column" if len(left_out) == 1 else "columns"
    return (
        f"identical in every feature but the row-key {word} {names}, left out: a copy under "
        "a new key is still a copy"
    )


@dataclass(frozen=True)
class ColumnItem:
    """One column's part of a per-column rule's result, before grouping (:func:`grouped`)."""

    column: str
    detail: str  # what holds for this column, short: "all 500 values are 0"
    n_affected: int | None
    metrics: Mapping[str, float] = field(default_factory=dict)
    examples: tuple[int, ...] = ()


GROUP_ABOVE = 5  # per-column findings of one rule and split beyond this become one finding


@dataclass(frozen=True)
class _Grouping:
    """How :func:`grouped` or :func:`group_many` made one finding of several columns'
    findings, kept so that the findings for some of those columns can be made again."""

    headline: str
    shown: int
    items: tuple[ColumnItem, ...] | None = None  # grouped(): each column's item; None: group_many
    split: str | None = None
    hint: str | None = None
    count: str = "sum"

    def build(self, parts: list[Finding]) -> list[Finding]:
        if self.items is None:
            return _many(parts, self)
        by_column = {it.column: it for it in self.items}
        return _of_items(parts, [by_column[p.columns[0]] for p in parts], self)


@dataclass(frozen=True, slots=True)
class GroupedFinding(Finding):
    """One finding that stands for the per-column findings of one rule and split (made by
    :func:`grouped` and :func:`group_many`).

    ``parts`` holds each column's finding as the rule reports a column alone, and
    :meth:`regroup` gives the findings for some of them, grouped as the rule groups them: a
    step after the rules (per-column ignores) takes a column out of a group with it. Neither is
    part of ``to_dict()``: the report's JSON is that of a plain :class:`Finding`.
    """

    parts: tuple[Finding, ...] = field(default=(), compare=False, repr=False)
    grouping: _Grouping | None = field(default=None, compare=False, repr=False)

    def regroup(self, parts: list[Finding]) -> list[Finding]:
        """The findings the rule reports for ``parts`` (some of :attr:`parts`, in order)."""
        if self.grouping is None or not parts:
            return list(parts)
        return self.grouping.build(list(parts))


def _bound(counts: list[int], examples: set[int]) -> int:
    """Rows affected across columns, as far as the per-column counts tell: at least the
    largest column's count and the distinct example rows (the cells of several columns may
    share rows, so their sum is not a number of rows)."""
    return max(max(counts, default=0), len(examples))


def grouped(
    auditor: Auditor,
    items: list[ColumnItem],
    *,
    single: Callable[[ColumnItem], Finding],
    headline: str,
    split: str | None,
    hint: str | None,
    count: str = "sum",
    shown: int = 5,
) -> list[Finding]:
    """One finding for every column a per-column rule flags in one split.

    One column: ``single(item)``, the rule's own message. More: one finding whose message is
    ``"{n} columns {headline}: 'a' (detail), 'b' (detail), ... (+N more)"`` showing the first
    ``shown`` columns; ``columns`` keeps every column, in order; ``metrics`` holds ``columns``
    (their number) and, for each metric of the items, its ``min_`` and ``max_`` over the
    columns; ``examples`` the first five rows of any of them. With ``count="sum"`` (the items
    count rows, e.g. placeholder cells) ``n_affected`` is a lower bound on the rows affected
    (the largest column's count, or the distinct example rows if more), ``metrics`` adds
    ``cells`` (the counts' sum) and ``count[NAME]`` per column; with ``count="columns"`` it is
    the number of columns. A hundred constant pixels are one finding, not a hundred.
    """
    if not items:
        return []
    spec = _Grouping(headline, shown, items=tuple(items), split=split, hint=hint, count=count)
    return _of_items([single(it) for it in items], list(items), spec)


def _of_items(parts: list[Finding], items: list[ColumnItem], spec: _Grouping) -> list[Finding]:
    if len(items) == 1:
        return [parts[0]]
    listed = ", ".join(f"{it.column!r} ({it.detail})" for it in items[: spec.shown])
    more = f" (+{len(items) - spec.shown} more)" if len(items) > spec.shown else ""
    metrics: dict[str, float] = {"columns": len(items)}
    examples = {e for it in items for e in it.examples}
    n_affected: int | None
    if spec.count == "sum":
        counted = [it.n_affected for it in items if it.n_affected is not None]
        n_affected = _bound(counted, examples) if counted else None
        if counted:
            metrics["cells"] = sum(counted)
    else:
        n_affected = len(items)
    for key in dict.fromkeys(k for it in items for k in it.metrics):
        values = [it.metrics[key] for it in items if key in it.metrics]
        metrics[f"min_{key}"] = min(values)
        metrics[f"max_{key}"] = max(values)
    if spec.count == "sum":
        for it in items:
            if it.n_affected is not None:
                metrics[f"count[{it.column}]"] = it.n_affected
    return [
        _group_of(
            parts,
            spec,
            f"{len(items):,} columns {spec.headline}: {listed}{more}.",
            split=spec.split,
            columns=tuple(it.column for it in items),
            n_affected=n_affected,
            examples=examples,
            metrics=metrics,
            hint=spec.hint,
        )
    ]


def _group_of(parts: list[Finding], spec: _Grouping, message: str, **fields) -> GroupedFinding:
    """The one finding for ``parts`` (their rule's code, name and severity: the first part's,
    as every part of a group has its rule's level), remembering how to group them again."""
    first = parts[0]
    return GroupedFinding(
        code=first.code,
        name=first.name,
        severity=first.severity,
        message=message,
        **{**fields, "examples": tuple(sorted(fields["examples"])[:5])},
        parts=tuple(parts),
        grouping=spec,
    )


def group_many(
    auditor: Auditor, findings: list[Finding], *, headline: str, shown: int = 5
) -> list[Finding]:
    """Per-column findings of one rule and split, kept as they are when there are at most
    :data:`GROUP_ABOVE`, else one finding listing the columns (the first ``shown`` with their
    count and share). ``columns`` keeps every column; ``metrics`` their number (``columns``),
    the count per column (``count[NAME]``) and the affected cells in all (``cells``);
    ``n_affected`` is a lower bound on the rows affected (the largest column's count, or the
    distinct example rows if more), since the cells of several columns may share rows. Forty
    columns with NaN are one card, not forty."""
    return _many(findings, _Grouping(headline, shown))


def _many(findings: list[Finding], spec: _Grouping) -> list[Finding]:
    if len(findings) <= GROUP_ABOVE:
        return list(findings)
    first = findings[0]

    def detail(f: Finding) -> str:
        frac = f.metrics.get("fraction")
        share = f", {pct(frac, 1)}" if frac is not None else ""
        return f"{f.columns[0]!r} ({f.n_affected:,}{share})"

    listed = ", ".join(detail(f) for f in findings[: spec.shown])
    more = f" (+{len(findings) - spec.shown} more)" if len(findings) > spec.shown else ""
    counts = [f.n_affected or 0 for f in findings]
    examples = {e for f in findings for e in f.examples}
    metrics: dict[str, float] = {"columns": len(findings), "cells": sum(counts)}
    for f, n in zip(findings, counts):
        metrics[f"count[{f.columns[0]}]"] = n
    return [
        _group_of(
            findings,
            spec,
            f"{len(findings):,} columns {spec.headline} in {first.split}: {listed}{more}.",
            split=first.split,
            columns=tuple(c for f in findings for c in f.columns),
            n_affected=_bound(counts, examples),
            examples=examples,
            metrics=metrics,
            hint=first.hint,
        )
    ]


def as_stored(value, dtype: str | None):
    """A float from a float16 or float32 column as that precision writes it (0.1, not
    0.0999755859375): the value the user stored and sees in pandas. Anything else unchanged."""
    if isinstance(value, float) and dtype in ("halffloat", "float"):
        import numpy as np

        kind = np.float16 if dtype == "halffloat" else np.float32
        return float(str(kind(value)))
    return value
