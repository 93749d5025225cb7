"""Rounding to significant digits, as the near-duplicate hashes compare numbers."""

from __future__ import annotations

import numpy as np

# 10.0**k for every whole k a scale can take (a finite float's magnitude is -324 .. 308), as
# np.power computes them: looked up per value instead of computed (about 5x faster, the same
# numbers)
_POW10_LO = -400
with np.errstate(over="ignore"):
    _POW10 = np.power(10.0, np.arange(_POW10_LO, -_POW10_LO + 1, dtype=np.float64))
_TABLE_DIGITS = 60  # |digits| up to this keeps every scale inside the table


def round_significant(x: np.ndarray, digits: int) -> np.ndarray:
    """``x`` rounded to ``digits`` significant digits (a new array; inf and NaN unchanged,
    -0.0 as 0.0). In place on scratch arrays: this runs on every float of every row."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        scale = np.abs(x)
        np.log10(scale, out=scale)
        np.floor(scale, out=scale)  # the magnitude
        scale[~np.isfinite(scale)] = 0
        np.subtract(digits - 1, scale, out=scale)
        if abs(digits) <= _TABLE_DIGITS:  # whole numbers from -369 to 384: in the table
            np.subtract(scale, _POW10_LO, out=scale)
            scale = _POW10[scale.astype(np.intp)]
        else:
            np.power(10.0, scale, out=scale)
        out = np.multiply(x, scale)
        np.round(out, out=out)
        np.divide(out, scale, out=out)
    bad = ~np.isfinite(out)
    out[bad] = x[bad]  # inf stays inf, NaN stays NaN
    out += 0.0
    return out
