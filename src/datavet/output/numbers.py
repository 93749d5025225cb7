"""How the HTML report writes a number in a table cell."""

from __future__ import annotations

import math


def num(value) -> str:
    """A table number: thousands separators for counts, 4 significant digits otherwise."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    if 1e-3 <= abs(value) < 1e6:
        return f"{value:.4g}"
    return f"{value:.3e}"
