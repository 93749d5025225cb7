"""Deciding whether a target is a classification or a regression target."""

from __future__ import annotations

import numpy as np

from datavet.errors import UsageError
from datavet.scan import LabelStats

MAX_CLASSES_AUTO = 50  # an integer target with more distinct values is taken as regression
MIN_COUNT_VALUES = 10  # fewer whole numbers than this are never taken for a count
TAIL_SHARE = 0.05  # a count's largest value is at most this share of its most common one

TASKS = ("auto", "classification", "regression")


def detect_task(label: LabelStats, requested: str = "auto") -> tuple[str, str]:
    """(task, one-line reason)."""
    if requested not in TASKS:
        raise UsageError(f"unknown task {requested!r} (choose from {', '.join(TASKS)})")
    n = label.values.n_distinct
    if n is None:
        distinct = "more than 1,024 distinct values"
    else:
        distinct = f"{n:,} distinct value{'' if n == 1 else 's'}"
    if requested == "regression" and label.kind not in ("numeric", "bool", "temporal"):
        raise UsageError(
            f"--task regression needs a numeric target; {label.name!r} holds {label.kind} values"
        )
    if requested != "auto":
        return requested, f"--task {requested}"
    if label.kind in ("string", "bool", "other"):
        return "classification", f"target is {label.kind} ({distinct})"
    if label.kind == "temporal":
        return "regression", "target is a date/time"
    if not label.integral:
        return "regression", f"target holds non-integer numbers ({distinct})"
    if n is not None and n <= MAX_CLASSES_AUTO:
        values = [float(v) for v in label.values.keys() if isinstance(v, (int, float))]
        span = max(values) - min(values) + 1 if values else 0
        if looks_like_counts(label.values.counts):
            return "regression", (
                f"target holds whole numbers {min(values):g}..{max(values):g} ({distinct}) "
                "with one peak and a long right tail, like counts; pass --task classification "
                "if they are classes"
            )
        if n <= 2 or span <= 2 * n:
            return "classification", f"target holds whole numbers with {distinct}"
        # 50 values spread over 600..1090: measurements on a grid, not class codes
        return "regression", (
            f"target holds whole numbers with {distinct} spread over {min(values):g}.."
            f"{max(values):g} (too sparse for class codes); pass --task classification if they "
            "are classes"
        )
    return "regression", (
        f"target holds whole numbers with {distinct} (over {MAX_CLASSES_AUTO}); pass --task "
        "classification if they are classes"
    )


def count_run(counts: dict) -> tuple[int, int] | None:
    """(lowest, highest) of the consecutive run of whole numbers that the values start with,
    when the values are non-negative whole numbers and that run holds at least
    MIN_COUNT_VALUES values and 95% of the rows (a count's rare large values may skip some
    numbers); else None."""
    if len(counts) < MIN_COUNT_VALUES or not all(whole_number(v) for v in counts):
        return None
    values = sorted(int(v) for v in counts)
    if values[0] < 0:
        return None
    end = 0
    while end + 1 < len(values) and values[end + 1] == values[end] + 1:
        end += 1
    inside = sum(n for v, n in counts.items() if v <= values[end])
    if end + 1 < MIN_COUNT_VALUES or inside < 0.95 * sum(counts.values()):
        return None
    return values[0], values[end]


def looks_like_counts(counts: dict) -> bool:
    """Whether exact value counts look like a count (visits, claims: Poisson-like) rather than
    class codes: a :func:`count_run` whose frequencies rise to one peak above the smallest
    value and then fall off into a right tail longer than the rise (the largest value rare).
    Class codes have no such shape: their frequencies go up and down in code order, or fall
    from the first code (codes numbered by frequency), which is left to classification as
    counts with a peak at 0 look the same."""
    if count_run(counts) is None:
        return False
    lo, hi = int(min(counts)), int(max(counts))
    c = np.zeros(hi - lo + 1)
    for v, n in counts.items():
        c[int(v) - lo] = n
    mode = int(np.argmax(c))
    step = np.diff(c)
    # frequencies moving the wrong way: down before the peak, up after it (sampling noise)
    wrong = -step[:mode].clip(max=0).sum() + step[mode:].clip(min=0).sum()
    return bool(
        0 < mode < len(c) - 1 - mode and wrong <= 0.25 * c[mode] and c[-1] <= TAIL_SHARE * c[mode]
    )


def whole_number(value) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and float(value).is_integer()
    )
