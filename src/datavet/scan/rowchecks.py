"""Row identity checks (S001 overlap, S002 duplicates, S003 conflicting labels) from row hashes.

All three are "group rows by their 128-bit hash" questions, so they split by hash prefix: the
rows of bucket ``b`` of train and of test can be checked on their own and the results merged
(counts add, example rows keep the smallest). The local engine runs one bucket holding
everything; the Dask engine runs one task per bucket where the hashes live, so no machine ever
holds all of them.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field

import numpy as np

from datavet._lazy import pandas as pd
from datavet.scan.hashing import MISSING_HASH, SPILL_BITS

K = 5  # example rows kept per result


@dataclass
class SplitRows:
    """The hashes of one split (or one bucket of it), in row order."""

    pos: np.ndarray  # global row positions
    rows: np.ndarray  # (n, 2) uint64: hash over all of the split's features
    labels: np.ndarray  # uint64 label hashes (MISSING_HASH when missing; zeros without target)
    shared: np.ndarray  # (n, 2) uint64: hash over the features both splits share

    @classmethod
    def of(cls, hashes) -> SplitRows:
        pos, rows, labels = hashes.arrays()
        _, shared, _ = hashes.arrays(shared=True)
        return cls(pos, rows, labels, shared)

    def bucket(self, bits: int) -> list[SplitRows]:
        """Split by the top ``bits`` bits of the shared hash (so a row and its copy in the
        other split land in the same bucket); within-split checks use ``rows``, which equals
        ``shared`` whenever the splits share all features, else is bucketed by it too."""
        if bits == 0:
            return [self]
        key = (self.shared[:, 0] >> np.uint64(64 - bits)).astype(np.int64)
        order = np.argsort(key, kind="stable")
        bounds = np.searchsorted(key[order], np.arange((1 << bits) + 1))
        out = []
        same = self.shared is self.rows  # one array: pickled (shipped) once per bucket
        for b in range(1 << bits):
            idx = order[bounds[b] : bounds[b + 1]]
            rows = self.rows[idx]
            shared = rows if same else self.shared[idx]
            out.append(SplitRows(self.pos[idx], rows, self.labels[idx], shared))
        return out

    def __len__(self) -> int:
        return len(self.pos)

    def repeated(self) -> np.ndarray:
        """Indices of rows whose first hash lane occurs more than once: the only candidates for
        duplicates and conflicts (computed once, shared by both checks)."""
        cached = self.__dict__.get("_repeated")
        if cached is None:
            cached = np.flatnonzero(pd.Series(self.rows[:, 0]).duplicated(keep=False).to_numpy())
            self.__dict__["_repeated"] = cached
        return cached


def _smallest(a: tuple, b: tuple, k: int = K) -> tuple:
    return tuple(sorted(set(a) | set(b))[:k])


@dataclass
class Count:
    """A count with its first example rows (and, for overlap, example pairs)."""

    n: int = 0
    groups: int = 0
    examples: tuple[int, ...] = ()
    pairs: tuple[tuple[int, int], ...] = ()  # (test row, train row), smallest test rows first

    def merge(self, other: Count) -> Count:
        return Count(
            self.n + other.n,
            self.groups + other.groups,
            _smallest(self.examples, other.examples),
            tuple(sorted(set(self.pairs) | set(other.pairs))[:K]),
        )


@dataclass
class RowChecks:
    overlap: Count = field(default_factory=Count)  # test rows found in train (groups: train rows)
    duplicates: dict[str, Count] = field(default_factory=dict)  # per split
    conflicts: dict[str, Count] = field(default_factory=dict)  # per split
    cross_conflicts: Count = field(default_factory=Count)  # test rows vs train, other label
    # every overlapping test row's position (in no order), with ``row_checks(keep_rows=True)``:
    # S007 leaves out the rows S001 reports once row keys are left out
    overlap_rows: np.ndarray | None = None

    def merge(self, other: RowChecks) -> RowChecks:
        def both(a: dict, b: dict) -> dict:
            return {k: a.get(k, Count()).merge(b.get(k, Count())) for k in {**a, **b}}

        kept = [r for r in (self.overlap_rows, other.overlap_rows) if r is not None]
        return RowChecks(
            self.overlap.merge(other.overlap),
            both(self.duplicates, other.duplicates),
            both(self.conflicts, other.conflicts),
            self.cross_conflicts.merge(other.cross_conflicts),
            np.concatenate(kept) if kept else None,  # merged per bucket: sorting is left out
        )


def chance_agreement(stats, digits: int | None = None) -> float:
    """The chance that two rows drawn at random agree in one column (a missing value agrees
    with a missing one), from the column's statistics (``ColumnStats`` or ``LabelStats``).

    With every distinct value counted: the chance that two different rows hold the same value
    (``sum n (n - 1) / (N (N - 1))``, unbiased where the squared shares overstate it in small
    samples; text case-folded with white space collapsed when ``digits`` is given, as near
    copies are compared). Else a sketch of the distinct values gives one over their number; a
    float column compared to
    ``digits`` significant digits gives its value density times the width of a rounding bin at
    its typical magnitude; anything else counts as all values distinct."""
    rows = stats.rows
    if rows < 2:
        return 1.0
    missing = stats.missing / rows
    counter = stats.values
    if counter.exact:
        counts: dict = {}
        for value, n in counter.counts.items():
            if digits is not None and isinstance(value, str):
                value = " ".join(value.split()).lower()
            counts[value] = counts.get(value, 0) + n
        pairs = sum(n * (n - 1) for n in (*counts.values(), stats.missing))
        return float(pairs / (rows * (rows - 1)))
    present = rows - stats.missing
    keys = getattr(stats, "keys", None)
    std = getattr(stats, "std", math.nan)
    if keys is not None:
        same = 1 / max(keys.distinct(), 1.0)
    elif digits is not None and stats.kind == "numeric" and math.isfinite(std) and std > 0:
        typical = math.hypot(stats.mean, std)
        width = 10.0 ** (math.floor(math.log10(typical)) - digits + 1)
        same = min(
            1.0, width / (2 * std)
        )  # mean density 1/(2 std): an exponential's, above a normal's
    else:
        same = 0.0  # every value distinct: two rows never agree
    return float(same * (present / rows) ** 2 + missing**2)


def joint_agreement(columns, names, digits: int | None = None) -> float:
    """The chance that two rows agree on every column of ``names`` found in ``columns`` (name
    -> statistics), each column's :func:`chance_agreement` multiplied as if independent."""
    agree = 1.0
    for name in names:
        stats = columns.get(name)
        if stats is not None:
            agree *= chance_agreement(stats, digits)
    return agree


def by_chance(found: int, expected: float) -> bool:
    """Whether ``found`` equal rows are about what chance predicts (at least 10 expected: fewer
    say little about the data)."""
    return expected >= 10 and found <= 2 * expected


# The chance estimates below, per row rather than per "equally likely combination": a column
# of 50% zeros and 50% amounts in cents has sum(p^2) near 1/4, yet only its zero rows can ever
# equal another row. 1 / sum(p^2) equally likely combinations would make every row as likely to
# repeat as a zero row; instead each row's own chance (the product over columns of the share of
# its value) is kept as a distribution over log-chance bins and the expectation taken over it.
_STEP = 0.05  # width of a log-chance bin (q within 2.5%)


def _levels(stats, frequent: bool = True, itself: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(q, w): for each kind of row of one column, the chance ``q`` that another row holds the
    same value, and the share ``w`` of the rows that are of that kind. Missing values agree
    with missing ones.

    With ``itself`` (S002, S003: repeats within the split that holds the rows) the row itself
    is left out: ``(n - 1) / (N - 1)``, so a value seen once has no chance, and copies the
    split holds cannot make themselves look natural. Else (S001: train's rows stand in for
    fresh test rows) a value seen ``n >= 2`` times has its share ``n / N``. A value seen once
    is the one guess a share gets badly wrong: ``1 / N`` would make a column of distinct
    measurements repeat itself. Good and Turing's estimate is used instead: all values seen
    once together are as likely as twice the values seen twice (``2 n2 / N``, shared among the
    ``n1`` of them), so a column with no value seen twice never repeats by chance.

    Beyond the exact counts the Misra-Gries sketch still names the frequent values; the other
    values share what is left evenly over the sketch's distinct count (text, whole numbers;
    :func:`_rest_chance`), or count as all distinct (floats). A kept count is short by the
    sketch's floor: with ``frequent`` only the values on 1% of rows or more keep their own
    share (the rest is spread evenly); without, every kept value does (its shape kept, its
    rows short)."""
    own = _shares(stats, frequent)
    rows = max(stats.rows, 1)
    counts = np.fromiter(own.counts.values(), float, len(own.counts))
    w = counts / rows
    if itself:
        q = np.maximum(counts - 1, 0) / max(stats.rows - 1, 1)
    else:
        q = counts / rows
        once = counts == 1
        n1 = int(np.count_nonzero(once))
        if n1:
            n2 = int(np.count_nonzero(counts == 2))
            q[once] = min(1.0, 2.0 * n2 / n1) / rows
    if own.rest > 0:
        q = np.append(q, _rest_chance(own, rows, itself))
        w = np.append(w, own.rest / rows)
    return q, w


def _rest_chance(own: _Shares, rows: int, itself: bool) -> float:
    """The chance that another row equals a row among the sketch's leftover values: ``per``
    rows a value on average. Many rows a value: about ``(per - 1) / (N - 1)``, as for a value
    counted exactly. Few (``per`` near 1, mostly distinct values): the rows beyond one a value
    are taken as pairs, so ``2 (1 - 1 / per)`` of the leftover rows have one equal row each
    (not with ``itself``: the pairs are what S002 counts)."""
    if not own.rest_values:
        return 0.0  # all distinct
    per = own.rest / own.rest_values
    if per <= 1:
        return 0.0
    within = (per - 1) / max(rows - 1, 1)
    return within if itself else max(within, 2.0 * (1.0 - 1.0 / per) / rows)


@dataclass
class _Shares:
    counts: dict  # value (or _MISSING) -> rows
    rest: float  # rows whose value is not in counts
    rest_values: float  # distinct values among them (0: unknown, taken as all distinct)


_MISSING = object()


def _shares(stats, frequent: bool = True) -> _Shares:
    counter = stats.values
    counts: dict = {k: n for k, n in counter.counts.items() if n > 0}
    if not counter.exact and frequent:
        # A sketched count is short by the sketch's floor (up to N / 1,025): only the frequent
        # values (1% of rows or more, off by 10% at most) keep their own share; the rows of the
        # others join the rest, spread over the distinct values left.
        counts = {k: n for k, n in counts.items() if n >= stats.rows / HEAVY}
    if stats.missing:
        counts[_MISSING] = stats.missing
    rest = max(stats.rows - sum(counts.values()), 0)
    rest_values = 0.0
    if not counter.exact and rest > 0:
        keys = getattr(stats, "keys", None)
        if keys is not None:  # text, whole numbers: a sketch of the distinct values
            kept = len(counts) - (1 if stats.missing else 0)
            rest_values = max(keys.distinct() - (kept if frequent else 0), 1.0)
    return _Shares(counts, float(rest), rest_values)


HEAVY = 100  # a sketched value counted on its own covers at least 1 / HEAVY of the rows


def _cutoff(n: int) -> int:
    """The last bin worth keeping: below q = 1e-4 / n**2 a row's chance adds nothing."""
    return int(math.ceil(-math.log(1e-4 / max(n, 1) ** 2) / _STEP))


def _joint(
    columns, names, extra, n: int, frequent: bool = True, itself: bool = False
) -> np.ndarray:
    """The rows' share in each log-chance bin (bin k: q = exp(-k * _STEP)) of the joint chance
    over the columns ``names`` and the statistics ``extra``, as if independent; the share
    missing from the total is rows whose chance is nil (a value seen once) or negligible."""
    top = _cutoff(n)
    joint = np.zeros(1)
    joint[0] = 1.0
    lo = 0  # joint[i] is bin lo + i
    parts = [columns[c] for c in names if c in columns] + list(extra)
    for stats in parts:
        q, w = _levels(stats, frequent, itself)
        keep = q > 0
        q, w = q[keep], w[keep]
        if not len(q):
            return np.zeros(top + 1)
        k = np.rint(-np.log(q) / _STEP).astype(np.int64)
        k_lo = int(k.min())
        hist = np.bincount(k - k_lo, weights=w)
        joint = np.convolve(joint, hist)
        lo += k_lo
        if lo > top:
            return np.zeros(top + 1)
        joint = joint[: top + 1 - lo]
        nz = np.flatnonzero(joint > 1e-15)
        if not len(nz):
            return np.zeros(top + 1)
        lo, joint = lo + int(nz[0]), joint[nz[0] : nz[-1] + 1]
    out = np.zeros(top + 1)
    out[lo : lo + len(joint)] = joint
    return out


def _bin_chance(size: int) -> np.ndarray:
    return np.exp(-np.arange(size) * _STEP)


def chance_overlap(train_columns, names, train_rows: int, test_rows: int) -> float:
    """The test rows expected to equal some train row by chance alone, were the test rows
    fresh draws like train's: each train row's chance ``q`` of equalling a train row (the
    product over ``names`` of its values' shares in train, as if the columns were independent;
    :func:`_levels` without ``itself``) stands for a test row's, and
    ``1 - (1 - q) ** train_rows`` is summed over the test rows. Train's rows stand in for
    test's so that copies in test do not raise the estimate: a test row copied from train
    holds values train has, however rare."""
    parts = [train_columns[c] for c in names if c in train_columns]

    def expected(frequent: bool) -> float:
        joint = _joint(train_columns, names, (), max(train_rows, test_rows), frequent)
        q = _bin_chance(len(joint))
        hit = -np.expm1(train_rows * np.log1p(-np.minimum(q, 1 - 1e-16)))
        hit[0] = 1.0 if train_rows > 0 else 0.0
        return float(test_rows * np.dot(joint, hit))

    return _either(expected, parts)


def _either(expected, parts) -> float:
    """``expected(frequent)``, the larger of the two readings of sketched counts (each is
    short of the truth in its own case: a few values frequent beyond the sketch's floor, or
    values all about as frequent); one reading when every count is exact."""
    first = expected(True)
    if all(p.values.exact for p in parts):
        return first
    return max(first, expected(False))


def chance_duplicates(columns, names, rows: int, label=None) -> float:
    """The rows of a split expected to repeat an earlier row by chance alone, given each row's
    chance ``q`` of equalling another row (the product over ``names``, and the label's when
    ``label`` is given, of the share of its values among the other rows): in random order the
    i-th row repeats an earlier one with chance ``1 - (1 - q) ** (i - 1)``, which sums to
    ``rows - (1 - (1 - q) ** rows) / q`` over the split."""
    extra = [] if label is None else [label]

    def expected(frequent: bool) -> float:
        joint = _joint(columns, names, extra, rows, frequent, itself=True)
        q = _bin_chance(len(joint))
        with np.errstate(divide="ignore", invalid="ignore"):
            distinct = -np.expm1(rows * np.log1p(-np.minimum(q, 1 - 1e-16))) / q
        distinct[0] = 1.0  # q = 1: every row one value
        return float(max(0.0, rows * float(joint.sum()) - float(np.dot(joint, distinct))))

    return _either(expected, [columns[c] for c in names if c in columns] + extra)


def _frame(rows: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"h0": rows[:, 0], "h1": rows[:, 1]})


_LAST_MATCH: dict = {}  # the last large call: weak references to its arrays, and its result


def match_rows(rows: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """For each 128-bit row hash in ``rows``, the index of its first equal in ``reference``,
    or -1. The first 64-bit lane finds candidates cheaply; the full 128 bits decide.

    The hash table is built over the smaller side. The last large result is kept (while its
    arrays live): S001 and S007 both match test against train on the same exact hashes."""
    last = _LAST_MATCH.get("last")  # one read: another thread may replace it meanwhile
    if last is not None and last[0]() is rows and last[1]() is reference:
        return last[2].copy()
    out = np.full(len(rows), -1, dtype=np.int64)
    if len(rows) <= len(reference):
        ref_idx = np.flatnonzero(pd.Series(reference[:, 0]).isin(rows[:, 0]).to_numpy())
        if not len(ref_idx):
            return out
        cand = np.flatnonzero(pd.Series(rows[:, 0]).isin(reference[ref_idx, 0]).to_numpy())
    else:
        cand = np.flatnonzero(pd.Series(rows[:, 0]).isin(reference[:, 0]).to_numpy())
        if not len(cand):
            return out
        ref_idx = np.flatnonzero(pd.Series(reference[:, 0]).isin(rows[cand, 0]).to_numpy())
    ref = _frame(reference[ref_idx])
    ref["at"] = ref_idx
    ref = ref.drop_duplicates(["h0", "h1"], keep="first")
    merged = _frame(rows[cand]).merge(ref, on=["h0", "h1"], how="left", sort=False)
    out[cand] = merged["at"].fillna(-1).to_numpy(dtype=np.int64)
    if len(reference) >= 100_000:
        _LAST_MATCH["last"] = (weakref.ref(rows), weakref.ref(reference), out.copy())
        weakref.finalize(rows, _LAST_MATCH.pop, "last", None)  # kept no longer than the hashes
    return out


def _duplicates(s: SplitRows) -> Count:
    if len(s) < 2:
        return Count()
    # Rows whose first lane repeats are candidates; all 128 bits plus the label decide.
    cand = s.repeated()
    frame = pd.DataFrame({"h0": s.rows[cand, 0], "h1": s.rows[cand, 1], "y": s.labels[cand]})
    frame["row"] = s.pos[cand]
    frame = frame.sort_values("row", kind="stable")  # "earlier row" means row order
    dup = frame.duplicated(["h0", "h1", "y"], keep="first").to_numpy()
    rows = frame["row"].to_numpy()[dup]
    groups = int(frame[dup].drop_duplicates(["h0", "h1", "y"]).shape[0])
    return Count(int(dup.sum()), groups, tuple(np.sort(rows)[:K].tolist()))


def _labelled(s: SplitRows) -> SplitRows:
    keep = s.labels != MISSING_HASH
    if keep.all():  # nothing to drop: the same rows (and their cached candidates), no copies
        return s
    return SplitRows(s.pos[keep], s.rows[keep], s.labels[keep], s.shared[keep])


def _conflicts(s: SplitRows) -> Count:
    s = _labelled(s)
    cand = s.repeated()
    if not len(cand):
        return Count()
    frame = pd.DataFrame(
        {"h0": s.rows[cand, 0], "h1": s.rows[cand, 1], "y": s.labels[cand], "row": s.pos[cand]}
    )
    n_labels = frame.groupby(["h0", "h1"])["y"].transform("nunique")
    bad = frame[n_labels.to_numpy() > 1]
    if bad.empty:
        return Count()
    groups = int(bad.groupby(["h0", "h1"]).ngroups)
    return Count(len(bad), groups, tuple(np.sort(bad["row"].to_numpy())[:K].tolist()))


def _overlap(
    train: SplitRows, test: SplitRows, with_labels: bool, at: np.ndarray
) -> tuple[Count, Count]:
    """S001 and S003 across splits; ``at``: each test row's first equal in train, or -1."""
    hit = np.flatnonzero(at >= 0)
    if not len(hit):
        return Count(), Count()
    order = hit[np.argsort(test.pos[hit], kind="stable")]
    overlap = Count(
        int(len(hit)),
        int(len(np.unique(at[hit]))),
        tuple(np.sort(test.pos[hit])[:K].tolist()),
        tuple((int(test.pos[i]), int(train.pos[at[i]])) for i in order[:K]),
    )
    if not with_labels:
        return overlap, Count()
    tr, te = _labelled(train), _labelled(test)
    if tr is not train or te is not test:
        at = match_rows(te.shared, tr.shared)
        hit = np.flatnonzero(at >= 0)
    if not len(hit):
        return overlap, Count()
    # A test row conflicts when no train copy of it carries its label. Only train rows whose
    # first lane matches a hit can be such a copy: the rest are left out before the merge.
    near = np.flatnonzero(pd.Series(tr.shared[:, 0]).isin(te.shared[hit, 0]).to_numpy())
    frame = pd.DataFrame({"h0": tr.shared[near, 0], "h1": tr.shared[near, 1], "y": tr.labels[near]})
    probe = pd.DataFrame(
        {"h0": te.shared[hit, 0], "h1": te.shared[hit, 1], "y": te.labels[hit], "i": hit}
    )
    same = frame.merge(probe, on=["h0", "h1", "y"], how="inner")["i"].unique()
    conflict = np.setdiff1d(hit, same)
    if not len(conflict):
        return overlap, Count()
    conflict = conflict[np.argsort(te.pos[conflict], kind="stable")]
    return overlap, Count(
        int(len(conflict)),
        0,
        tuple(te.pos[conflict[:K]].tolist()),
        tuple((int(te.pos[i]), int(tr.pos[at[i]])) for i in conflict[:K]),
    )


def row_checks(
    train: SplitRows,
    test: SplitRows | None = None,
    *,
    with_labels: bool = True,
    keep_rows: bool = False,
) -> RowChecks:
    """Every row-identity result for one bucket (or for everything, as one bucket); with
    ``keep_rows``, also the position of every overlapping test row (``overlap_rows``)."""
    out = RowChecks()
    out.duplicates["train"] = _duplicates(train)
    if with_labels:
        out.conflicts["train"] = _conflicts(train)
    if test is not None:
        out.duplicates["test"] = _duplicates(test)
        if with_labels:
            out.conflicts["test"] = _conflicts(test)
        at = match_rows(test.shared, train.shared)
        out.overlap, out.cross_conflicts = _overlap(train, test, with_labels, at)
        if keep_rows:
            out.overlap_rows = test.pos[at >= 0]
    return out


PARTITION_ROWS = 2_000_000  # rows of train + test checked at a time when the hashes spilled


class _Side:
    """One split's hashes, partition by partition (``SPILL_BITS`` top bits of the shared hash),
    whether they were spilled to disk or are in memory."""

    def __init__(self, hashes):
        self.spill = hashes.spill
        if self.spill is not None:
            self.counts = self.spill.counts
            self.rows = None
        else:
            self.rows = SplitRows.of(hashes)
            self.key = (self.rows.shared[:, 0] >> np.uint64(64 - SPILL_BITS)).astype(np.int64)
            self.counts = np.bincount(self.key, minlength=1 << SPILL_BITS)

    def take(self, lo: int, hi: int) -> SplitRows:
        if self.spill is not None:
            return SplitRows(*self.spill.partition(lo, hi))
        r = self.rows
        idx = np.flatnonzero((self.key >= lo) & (self.key < hi))
        return SplitRows(r.pos[idx], r.rows[idx], r.labels[idx], r.shared[idx])


def partition_ranges(counts: np.ndarray, limit: int) -> list[tuple[int, int]]:
    """Consecutive runs of partitions holding at most ``limit`` rows together (a partition
    larger than that on its own is one run)."""
    out, lo, held = [], 0, 0
    for b, n in enumerate(counts.tolist()):
        if held and held + n > limit:
            out.append((lo, b))
            lo, held = b, 0
        held += n
    out.append((lo, len(counts)))
    return out


def spilled_checks(train, test=None, *, with_labels: bool = True, limit: int | None = None):
    """:func:`row_checks` over ``RowHashes`` (either split spilled to disk or not), one run of
    hash partitions at a time: every result is the same as the checks over everything at once
    (rows that can be equal share a partition; counts add, examples keep the smallest), and
    memory holds only one run's hashes and hash tables."""
    limit = PARTITION_ROWS if limit is None else limit
    tr = _Side(train)
    te = _Side(test) if test is not None else None
    counts = tr.counts + (te.counts if te is not None else 0)
    out = None
    for lo, hi in partition_ranges(counts, limit):
        part = row_checks(
            tr.take(lo, hi), te.take(lo, hi) if te is not None else None, with_labels=with_labels
        )
        out = part if out is None else out.merge(part)
    return out


def checks_of(train, test=None, *, with_labels: bool = True) -> RowChecks:
    """S001-S003 from two splits' ``RowHashes``: all at once in memory, or partition by
    partition when the scan spilled either split's hashes to disk."""
    if train.spill is not None or (test is not None and test.spill is not None):
        return spilled_checks(train, test, with_labels=with_labels)
    return row_checks(
        SplitRows.of(train),
        SplitRows.of(test) if test is not None else None,
        with_labels=with_labels,
    )


def keyless_batch(
    batch,
    offset: int,
    columns: list[str],
    shared: list[str],
    as_number,
    target: str | None = None,
    *,
    rebuild: bool = False,
) -> tuple:
    """One batch of a split hashed once more with its row-key columns left out (``columns``:
    the split's features without them; ``shared``: the features both splits share, without
    them): (positions, label hashes, row hashes, shared hashes), positions and label hashes
    only with ``rebuild`` (else None). The engine streams the batches; :func:`fold_keyless`
    joins the parts."""
    from datavet.scan.rowhash import hash_rows

    caches: dict[str, dict] = {}
    rows = hash_rows(batch, columns, as_number, caches)
    common = rows if shared == columns else hash_rows(batch, shared, as_number, caches)
    if not rebuild:
        return None, None, rows, common
    positions = np.arange(offset, offset + batch.num_rows, dtype=np.int64)
    return positions, _label_hashes(batch, target), rows, common


def fold_keyless(pos: np.ndarray, labels: np.ndarray, parts: list[tuple]) -> SplitRows:
    """A split's keyless :class:`SplitRows` from its batches' parts (:func:`keyless_batch`),
    beside the positions and label hashes of the first pass (``pos``, ``labels``: same row
    order). The Dask and Spark engines keep no hashes on the driver: then the parts carry them
    (``rebuild``)."""
    if not parts:
        z = np.zeros((0, 2), np.uint64)
        return SplitRows(pos, z, labels, z)
    if parts[0][0] is not None:
        pos = np.concatenate([p[0] for p in parts])
        labels = np.concatenate([p[1] for p in parts])
    rows = np.concatenate([p[2] for p in parts])
    return SplitRows(pos, rows, labels, np.concatenate([p[3] for p in parts]))


def _label_hashes(batch, target: str | None) -> np.ndarray:
    """The label hashes of ``batch``, as ``Profile.of_batch`` computes them."""
    from datavet.scan.columns import dense_batch
    from datavet.scan.hashing import hash_values
    from datavet.scan.labels import label_batch

    if target is None or target not in batch.schema.names:
        return np.zeros(batch.num_rows, np.uint64)
    return hash_values(label_batch(dense_batch(batch), target).column(target))
