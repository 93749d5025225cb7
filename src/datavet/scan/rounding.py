"""Rounding to significant digits, as the near-duplicate hashes compare numbers."""

from __future__ import annotations

import numpy as np


def round_significant(x: np.ndarray, digits: int) -> np.ndarray:
    """``x`` rounded to ``digits`` significant digits (a new array; inf and NaN unchanged,
    -0.0 as 0.0). In place on scratch arrays: this runs on every float of every row."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        scale = np.abs(x)
        np.log10(scale, out=scale)
        np.floor(scale, out=scale)  # the magnitude
        scale[~np.isfinite(scale)] = 0
        np.subtract(digits - 1, scale, out=scale)
        np.power(10.0, scale, out=scale)
        out = np.multiply(x, scale)
        np.round(out, out=out)
        np.divide(out, scale, out=out)
    bad = ~np.isfinite(out)
    out[bad] = x[bad]  # inf stays inf, NaN stays NaN
    out += 0.0
    return out
