"""Deciding whether a target is a classification or a regression target."""

from __future__ import annotations

from datavet.errors import UsageError
from datavet.scan import LabelStats

MAX_CLASSES_AUTO = 50  # an integer target with more distinct values is taken as regression

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
