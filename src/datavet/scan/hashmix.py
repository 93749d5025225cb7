"""The mixing constants and functions of the row hashes: the bottom of the hashing code, shared by
the row hashes (``scan/hashing.py``) and the wide-table scan that folds many columns at once
(``scan/wide.py``)."""

from __future__ import annotations

import numpy as np

_U = np.uint64
_SEEDS = (_U(0x243F6A8885A308D3), _U(0x13198A2E03707344))
_KEYS = ("datavet-lane-0..", "datavet-lane-1..")  # pandas hash_array keys: 16 bytes
_MISSING = (_U(0x9E3779B97F4A7C15), _U(0xC2B2AE3D27D4EB4F))
_MULT = _U(0x100000001B3)
MISSING_HASH = _MISSING[0]  # what a missing value hashes to in lane 0 (and so a missing label)


def _splitmix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, element-wise (a new array; ``z`` is left alone)."""
    z = z + _U(0x9E3779B97F4A7C15)
    return _splitmix_inplace(z)


def _splitmix_inplace(z: np.ndarray) -> np.ndarray:
    """``_splitmix`` of ``z + 0x9E37...`` already added, written into ``z`` (no temporaries
    beyond one scratch array: this runs on every value of every hashed column)."""
    t = z >> _U(30)
    np.bitwise_xor(z, t, out=z)
    np.multiply(z, _U(0xBF58476D1CE4E5B9), out=z)
    np.right_shift(z, _U(27), out=t)
    np.bitwise_xor(z, t, out=z)
    np.multiply(z, _U(0x94D049BB133111EB), out=z)
    np.right_shift(z, _U(31), out=t)
    np.bitwise_xor(z, t, out=z)
    return z
