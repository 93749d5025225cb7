"""Numbers written as text with separators: thousands ("47,617", "1.234.567", "12 500") or a
decimal comma ("3,5", "1.234,56"). A text column that holds them is a numeric column the
reader did not understand (V006).

Counted on a text column's distinct values (its dictionary), so the cost follows the distinct
values, not the rows; mergeable across batches and partitions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

MAX_EXAMPLES = 5

_SIGN = r"^\s*[-+]?"
_END = r"\s*$"
# Each kind, as RE2 patterns (Arrow's regex engine: no back-references). A value that also
# reads as a plain number ("1.234", "1000") is a plain number, not counted here.
PATTERNS = {
    "decimal_comma": _SIGN
    + r"(\d+,\d{1,2}|\d+,\d{4,}|\d{1,3}(\.\d{3})+,\d+|\d*,\d+[eE][-+]?\d+)"
    + _END,
    "thousands_comma": _SIGN + r"\d{1,3}(,\d{3})+(\.\d+)?" + _END,
    "thousands_dot": _SIGN + r"\d{1,3}(\.\d{3}){2,}" + _END,
    "thousands_space": _SIGN + r"\d{1,3}([ \x{00a0}\x{202f}']\d{3})+([.,]\d+)?" + _END,
}


@dataclass(slots=True)
class SeparatedNumbers:
    """How many values of a text column are numbers written with separators, by kind, and
    the first ``(row, value)`` of them."""

    decimal_comma: int = 0
    thousands_comma: int = 0
    thousands_dot: int = 0
    thousands_space: int = 0
    examples: tuple[tuple[int, str], ...] = ()

    @property
    def count(self) -> int:
        return self.decimal_comma + self.thousands_comma + self.thousands_dot + self.thousands_space

    def merge(self, other: SeparatedNumbers) -> SeparatedNumbers:
        return SeparatedNumbers(
            decimal_comma=self.decimal_comma + other.decimal_comma,
            thousands_comma=self.thousands_comma + other.thousands_comma,
            thousands_dot=self.thousands_dot + other.thousands_dot,
            thousands_space=self.thousands_space + other.thousands_space,
            examples=tuple(sorted(set(self.examples) | set(other.examples)))[:MAX_EXAMPLES],
        )

    @property
    def hint(self) -> str:
        """How to read such a column (pandas.read_csv arguments)."""
        if self.decimal_comma:
            return "parse with decimal=','" + (", thousands='.'" if self.thousands_dot else "")
        if self.thousands_comma >= max(self.thousands_dot, self.thousands_space):
            return "parse with thousands=','"
        if self.thousands_dot >= self.thousands_space:
            return "parse with thousands='.'"
        return "parse with thousands=' ' (or remove the spaces)"


def separated_numbers(
    dictionary: pa.Array,
    counts: np.ndarray,
    codes: np.ndarray,
    is_number: np.ndarray,
    offset: int,
) -> SeparatedNumbers | None:
    """From a text column's dictionary encoding: ``dictionary`` (distinct values), ``counts``
    (rows per value), ``codes`` (each row's value, -1 when missing), ``is_number`` (values that
    read as plain numbers). None when no value is a number with separators."""
    if len(dictionary) == 0:
        return None
    plain = np.asarray(is_number, dtype=bool)
    found = SeparatedNumbers()
    matched = np.zeros(len(dictionary), dtype=bool)
    for kind, pattern in PATTERNS.items():
        hit = pc.match_substring_regex(dictionary, pattern)
        hit = np.asarray(hit.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
        hit &= ~plain & ~matched  # each value counted once, under its first kind
        matched |= hit
        setattr(found, kind, int(counts[hit].sum()))
    if not matched.any():
        return None
    rows = np.flatnonzero(np.where(codes < 0, False, matched[np.maximum(codes, 0)]))
    values, first = np.unique(codes[rows], return_index=True)  # each value's first row
    keep = np.argsort(first)[:MAX_EXAMPLES]
    picked = dictionary.take(pa.array(values[keep])).to_pylist()
    found.examples = tuple((int(rows[first[i]]) + offset, str(v)) for i, v in zip(keep, picked))
    return found
