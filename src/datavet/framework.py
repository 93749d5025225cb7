"""The one rule framework: what every rule of every family is, and how rules are run.

Tabular (V/F/L/S/B), tensor (T), probe (M) and curve (C) rules are the same kind of thing: a
class with a stable ``code``, a kebab-case ``name``, a default ``severity``, a one-line
``summary``, its ``thresholds`` (the only place its numbers live), a What/Why/How docstring
(``datavet rule CODE`` prints it), a declaration of what it ``needs``, and a ``check(ctx)``
that yields findings or raises :class:`Skip`. :func:`run_rules` runs a list of them over a
context and records what happened to each; :mod:`datavet.rules` is the one registry.

Only the context differs per family: ``AuditContext`` (the split profiles), ``ProbeContext``
(a model and a batch), ``CurveContext`` (a training log). A context answers
``unmet(need) -> reason | None`` for the needs it knows; the runner skips a rule whose need is
unmet with that reason, before ``check`` runs.

This module imports only the core (findings, errors): every family's base builds on it.
"""

from __future__ import annotations

import math
import traceback
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any, ClassVar

from datavet.errors import UsageError
from datavet.findings import Finding, Outcome, Severity, Status

__all__ = [
    "NEEDS",
    "NothingSelected",
    "SECTIONS",
    "Rule",
    "RunResult",
    "Skip",
    "choose",
    "fmt",
    "match_selector",
    "needing",
    "option_of",
    "pct",
    "plural",
    "rows_text",
    "run_rules",
    "split_selectors",
]


class Skip(Exception):
    """Raised by a rule that cannot apply (no target, no test split, regression task...).

    The runner records the rule as skipped with this reason; it is not a failure.
    """


# What a rule can declare in ``needs``; the runner (or the context's ``unmet``) provides it or
# skips the rule. One vocabulary for every family.
NEEDS: Mapping[str, str] = {
    # tabular and tensor inputs (datavet.audit)
    "target": "a target column (--target)",
    "classification": "a classification target",
    "test": "a test split (--test)",
    "baselines": "the baseline models fitted on the sample (NumPy: datavet.linear)",
    "row_keys": "the row hashes recomputed without the ID-like row-key columns",
    "row_checks": "the overlap, duplicate and conflict results of the row hashes (S001-S003)",
    "near_hashes": "near-duplicate hashes of both splits (a test split)",
    # model probes (datavet.probe, datavet.GradientMonitor)
    "torch": "PyTorch",
    "model": "a model, a batch and a loss function (datavet.probe)",
    "monitor": "a GradientMonitor's history of a real training loop (monitor.report())",
    "known_task": "the task of the model's output (classification, binary or regression)",
    # training curves (datavet.diagnose_curves)
    "training_log": "a training log (datavet curves LOG)",
}


SECTIONS: Mapping[str, str] = {
    "leakage": "the HTML report's split-leakage section",
    "drift": "the drift histograms of the flagged columns (HTML report)",
    "label_position": "the label-by-row-position chart, shaded where the finding is (HTML)",
    "overfit_curve": "the loss curve of the one-batch training run (HTML probe report)",
    "future_cuts": "the table of cut points of a causality check (HTML probe report)",
    "padding_figures": "the losses with and without padding (HTML probe report)",
}


# The range of a rule threshold: (low, high, bounds included, whole number). A threshold outside
# it would make a rule fire on everything or on nothing (max_ratio = -5 calls a 1:1 split
# imbalanced). RANGES holds the names several rules share; a rule declares the range of a
# threshold of its own in its ``ranges``. A test checks that every threshold of every rule has one.
Range = tuple[float, float, str, bool]
UNIT: Range = (0.0, 1.0, "[]", False)
COUNT: Range = (1.0, math.inf, "[]", True)
ABOVE_ONE: Range = (1.0, math.inf, "[]", False)
POSITIVE: Range = (0.0, math.inf, "(]", False)
NOT_NEGATIVE: Range = (0.0, math.inf, "[]", False)
RANGES: dict[str, Range] = {
    "alpha": (0.0, 1.0, "()", False),  # a p-value cut-off: 0 < alpha < 1
    "min_count": COUNT,
    "min_rows": COUNT,
    "min_groups": COUNT,
    "groups": COUNT,
    "max_classes": COUNT,
    "digits": COUNT,
    "min_numeric": UNIT,
    "min_fraction": UNIT,
    "max_unique_fraction": UNIT,
    "min_shared": UNIT,
    "max_auto_older": UNIT,
    "min_score": UNIT,
    "min_order": UNIT,
    "min_auc": UNIT,
    "min_tvd": UNIT,
    "min_v": UNIT,
    "min_gain": UNIT,
    "min_rho": UNIT,
    "max_ratio": ABOVE_ONE,  # majority:minority, 1 = balanced
    "min_ratio": ABOVE_ONE,
    "outlier_ratio": ABOVE_ONE,
    "min_effect": NOT_NEGATIVE,
    "min_d": NOT_NEGATIVE,
    "max_abs_mean": POSITIVE,
    "max_std": POSITIVE,
    "min_std": NOT_NEGATIVE,
    "near_constant": UNIT,
    "min_agree": UNIT,
    "min_columns": COUNT,
    "confidence": (0.0, 1.0, "()", False),
}


class Rule:
    """Base class of every rule. Subclasses set ``code``, ``name``, ``severity``, ``summary``,
    ``thresholds`` and ``needs``, write the What/Why/How docstring, and implement
    :meth:`check`.

    An instance carries the run's settings: ``level`` (the severity its findings get: the
    default, or the user's override) and ``options`` (the thresholds with the user's values).
    ``details`` is what a report shows beside the verdict (tables, curves; probes), ``marks``
    the flagged steps of a chart (curve rules); both are reset before each run.
    """

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    summary: ClassVar[str]
    thresholds: ClassVar[Mapping[str, float]] = {}
    # the range of each threshold whose name is not in RANGES (or means something else here)
    ranges: ClassVar[Mapping[str, Range]] = {}
    needs: ClassVar[tuple[str, ...]] = ()  # names from NEEDS, checked in this order
    # Where the renderers show the rule's findings besides the list (read from the registry,
    # never by code): report sections from SECTIONS; the cell of the column table it points at;
    # for a rule that looks at each column, the splits (and column kinds; None: every feature)
    # it evaluates, so JUnit writes one testcase per column.
    sections: ClassVar[tuple[str, ...]] = ()
    column_cell: ClassVar[str | None] = None
    per_column: ClassVar[tuple[str, ...]] = ()
    per_column_kinds: ClassVar[tuple[str, ...] | None] = None

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        needs = cls.__dict__.get("needs")
        if isinstance(needs, str):  # ``needs = "monitor"``: one need
            cls.needs = (needs,)
        elif needs is not None:
            cls.needs = tuple(dict.fromkeys(needs))
        unknown = set(cls.needs) - set(NEEDS)
        if unknown:
            raise TypeError(f"{cls.__name__} needs {sorted(unknown)}: not in framework.NEEDS")
        unknown = set(cls.sections) - set(SECTIONS)
        if unknown:
            raise TypeError(f"{cls.__name__} sections {sorted(unknown)}: not in SECTIONS")

    @classmethod
    def range_of(cls, threshold: str) -> Range | None:
        """The range of one of this rule's thresholds: its own ``ranges``, else ``RANGES``."""
        return cls.ranges.get(threshold) or RANGES.get(threshold)

    def __init__(
        self, *, severity: Severity | None = None, thresholds: Mapping[str, float] | None = None
    ) -> None:
        self.level = severity if severity is not None else type(self).severity
        unknown = set(thresholds or {}) - set(self.thresholds)
        if unknown:
            known = ", ".join(sorted(self.thresholds)) or "none"
            raise UsageError(
                f"{self.code} has no threshold {', '.join(sorted(unknown))} (known: {known})"
            )
        self.options = {**self.thresholds, **(thresholds or {})}
        self.details: dict = {}
        self.marks: list[dict] = []

    def check(self, ctx: Any) -> Iterable[Finding]:  # pragma: no cover
        raise NotImplementedError

    def run(self, ctx: Any) -> list[Finding]:
        """The findings of :meth:`check`; :class:`Skip` when ``ctx`` cannot meet a need."""
        self.details = {}
        self.marks = []
        reason = unmet(self, ctx)
        if reason:
            raise Skip(reason)
        return list(self.check(ctx))

    def finding(self, message: str, *, severity: Severity | None = None, **fields) -> Finding:
        return Finding(
            code=self.code,
            name=self.name,
            severity=severity if severity is not None else self.level,
            message=message,
            **fields,
        )


# -- running ---------------------------------------------------------------------------------


@dataclass
class RunResult:
    """What :func:`run_rules` returns: every finding, one outcome per rule (in order), and the
    seconds each rule took."""

    findings: list[Finding] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def __iter__(self):  # findings, outcomes = run_rules(...)
        return iter((self.findings, self.outcomes))


def unmet(rule: Rule, ctx: Any) -> str | None:
    """Why ``ctx`` cannot give ``rule`` what it declares it needs, or None."""
    ask = getattr(ctx, "unmet", None)
    if ask is None:
        return None
    for need in rule.needs:
        reason = ask(need)
        if reason:
            return reason
    return None


def run_rules(
    rules: Sequence[Rule],
    ctx: Any,
    *,
    after: Callable[[Rule, Outcome], None] | None = None,
    workers: int = 1,
    pending: Collection[str] = (),
) -> RunResult:
    """Run ``rules`` over ``ctx``: each passes, fails (finds something), is skipped (an unmet
    need, or :class:`Skip`) or crashes (any other exception, recorded with its traceback; one
    crashing rule never stops the others). ``after(rule, outcome)`` sees each rule once it ran
    (the probes keep its ``details``, the curves its ``marks``).

    ``workers > 1``: the rules run on that many threads (rules that only read ``ctx``, whose
    lazy parts are thread-safe: the audit's; their NumPy work releases the GIL), and the
    findings, outcomes and ``after`` calls come in rule order all the same. ``pending``: needs
    still being computed beside the rules (the rule waits for them); the rules declaring one
    are started last, so the threads do the other rules' work meanwhile instead of waiting."""
    result = RunResult()
    if workers > 1 and len(rules) > 1:
        from concurrent.futures import ThreadPoolExecutor

        waits = {i for i, rule in enumerate(rules) if not set(pending).isdisjoint(rule.needs)}
        order = [i for i in range(len(rules)) if i not in waits] + sorted(waits)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="datavet-rules") as pool:
            started = {i: pool.submit(_run_one, rules[i], ctx) for i in order}
            ran = [(rule, started[i].result()) for i, rule in enumerate(rules)]
    else:
        ran = ((rule, _run_one(rule, ctx)) for rule in rules)
    for rule, (found, outcome, seconds) in ran:
        result.findings.extend(found)
        result.seconds[rule.code] = seconds
        result.outcomes.append(outcome)
        if after is not None:
            after(rule, outcome)
    return result


def _run_one(rule: Rule, ctx: Any) -> tuple[list[Finding], Outcome, float]:
    started = perf_counter()
    found: list[Finding] = []
    try:
        found = rule.run(ctx)
    except Skip as skip:
        outcome = Outcome(rule.code, rule.name, Status.SKIPPED, reason=str(skip))
    except Exception as exc:  # noqa: BLE001 - recorded; the report's exit code is 2
        outcome = Outcome(
            rule.code,
            rule.name,
            Status.CRASHED,
            reason=f"{type(exc).__name__}: {exc}",
            traceback=traceback.format_exc(),
        )
    else:
        status = Status.FAILED if found else Status.PASSED
        outcome = Outcome(rule.code, rule.name, status, n_findings=len(found))
    return found, outcome, perf_counter() - started


def needing(rules: Iterable, need: str) -> list:
    """The rules (classes or instances) that declare ``need``."""
    if need not in NEEDS:
        raise ValueError(f"unknown need {need!r}")
    return [r for r in rules if need in r.needs]


def option_of(rules: Iterable[Rule], need: str, key: str, default: float) -> float:
    """Threshold ``key`` of the first rule that declares ``need`` and has it (``default`` when
    none does): e.g. the rounding the near-duplicate hashes use, from the rule that reads them."""
    for rule in needing(rules, need):
        if key in rule.options:
            return rule.options[key]
    return default


# -- selecting -------------------------------------------------------------------------------


def match_selector(
    selector: str,
    pool,
    *,
    what: str = "rule",
    example: str = "a code (V001), a prefix (V, F00) or a name (nan-values)",
) -> list:
    """The rules of ``pool`` that one selector means: ``ALL``, a name, or a code prefix
    (:func:`datavet.rules.match_selector` also says which command runs a rule of another)."""
    sel = selector.strip()
    if not sel:
        return []
    if sel.upper() == "ALL":
        return list(pool)
    named = [r for r in pool if r.name == sel.lower()]
    if named:
        return named
    found = [r for r in pool if r.code.startswith(sel.upper())]
    if not found:
        raise UsageError(
            f"unknown {what} selector {selector!r}: use {example}; `datavet rules` lists them"
        )
    return found


class NothingSelected(UsageError):
    """A selection (``select`` minus ``ignore``) that leaves no rule to run (exit 2)."""


def choose(pool, select, ignore, matches=None) -> list:
    """The members of ``pool`` chosen by ``select`` (default: all) minus ``ignore``, in pool
    order; ``matches(selector)`` resolves one selector (default: ``match_selector`` on ``pool``).

    A selection that leaves no rule is a :class:`NothingSelected` error: a run that checks
    nothing must never pass."""
    if matches is None:
        matches = lambda sel: match_selector(sel, pool)  # noqa: E731
    select, ignore = split_selectors(select), split_selectors(ignore)
    chosen = set(pool) if not select else {r for s in select for r in matches(s)}
    dropped = {r for s in ignore for r in matches(s)}
    out = [r for r in pool if r in chosen and r not in dropped]
    if pool and not out:
        picked = "select " + ", ".join(s.strip() for s in select) if select else "every rule"
        left = " minus ignore " + ", ".join(s.strip() for s in ignore) if ignore else ""
        raise NothingSelected(f"no rule left to run: {picked}{left} leaves none")
    return out


def split_selectors(value) -> list[str]:
    """``"V001,F"`` or ``["V001", "F"]`` -> ``["V001", "F"]``."""
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    return [part for item in value for part in str(item).split(",") if part.strip()]


# -- message helpers (every family's messages read the same) ---------------------------------


def pct(part: float, whole: float) -> str:
    """'0.75%' style; never divides by zero."""
    if not whole:
        return "0%"
    value = 100.0 * part / whole
    return f"{value:.1f}%" if value >= 1 or value == 0 else f"{value:.2g}%"


def plural(n: int, word: str) -> str:
    """'1 row', '3 rows', '1,204 groups'."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def rows_text(examples: Iterable[int], total: int | None, unit: str = "row") -> str:
    """'rows 3, 17, 40' plus '+N more' when the examples are capped (``unit="sample"`` for
    tensor inputs: 'samples 3, 17')."""
    ex = list(examples)
    if not ex:
        return ""
    word = unit if len(ex) == 1 and (total or 1) == 1 else unit + "s"
    text = f"{word} {', '.join(str(i) for i in ex)}"
    if total is not None and total > len(ex):
        text += f" (+{total - len(ex)} more)"
    return text


def fmt(value: float | None) -> str:
    """A number for a message: 3 significant digits, no scientific notation for ordinary sizes."""
    if value is None:
        return "n/a"
    if value != value:  # NaN
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return str(value)
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}" if abs(value) >= 10_000 else str(int(value))
    if 1000 <= abs(value) < 1e15:
        return f"{value:,.0f}"
    return f"{value:.3g}"
