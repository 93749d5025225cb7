"""K-minimum-values sketches of a column's distinct values: mergeable, bounded memory.

Each distinct value is hashed to 64 bits; the sketch keeps the ``k`` smallest hashes. With ``k``
hashes, the number of distinct values is estimated as ``(k - 1) / (kth smallest / 2^64)`` (exact
when there are fewer than ``k``), and the share of one column's distinct values that also occur
in another column is estimated from the union sketch (Broder 1997; Beyer et al. 2007): about 3%
relative error at k = 1,024. Used to spot ID-like columns and how many of their values two splits
share, without keeping the values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

K = 1024
_SPACE = float(2**64)


@dataclass(slots=True)
class KMV:
    k: int = K
    hashes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))  # sorted, unique

    @classmethod
    def of(cls, hashes: np.ndarray, k: int = K) -> KMV:
        h = hashes.astype(np.uint64, copy=False)
        if len(h) > 4 * k:
            # The k smallest distinct hashes are among the values up to the k-th smallest
            # value, unless duplicates crowd them out: then sort everything.
            cut = np.partition(h, k)[k]
            u = np.unique(h[h <= cut])
            if len(u) >= k:
                return cls(k, u[:k])
        return cls(k, np.unique(h)[:k])

    def merge(self, other: KMV) -> KMV:
        return KMV(self.k, np.union1d(self.hashes, other.hashes)[: self.k])

    @property
    def exact(self) -> bool:
        return len(self.hashes) < self.k

    def distinct(self) -> float:
        """Estimated number of distinct values (exact below ``k``)."""
        if self.exact:
            return float(len(self.hashes))
        return (self.k - 1) / (float(self.hashes[-1]) / _SPACE)

    def containment(self, other: KMV) -> float:
        """Estimated share of this sketch's distinct values that ``other`` also holds.

        Below the smaller of the two sketches' largest kept hashes both sketches hold every
        hash there is, so the share of this sketch's hashes in that range that ``other``
        holds estimates the containment without bias.
        """
        if len(self.hashes) == 0:
            return 0.0
        if other.exact:  # other's every distinct hash is known
            return float(np.isin(self.hashes, other.hashes).mean())
        tau = other.hashes[-1] if self.exact else min(self.hashes[-1], other.hashes[-1])
        mine = self.hashes[self.hashes <= tau]
        if len(mine) == 0:
            return 0.0
        return float(np.isin(mine, other.hashes).mean())
