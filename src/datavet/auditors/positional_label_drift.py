from __future__ import annotations

import math

import numpy as np

from datavet.auditors.base import AuditContext, Auditor, Skip, pct
from datavet.findings import Severity


class PositionalLabelDrift(Auditor):
    """The label distribution depends on row order.

    **What it checks**
    The train split, in file order (for a directory of Parquet files: files in path order, rows
    in file order). Labels are counted per bin of row position (up to 1,024 bins over every row)
    and three tests run:

    - a *boundary scan*: for every bin boundary, an exact hypergeometric test of each class's
      share before the boundary against after it. This finds a sorted file and a short block of
      rows at the start or the end (the first 40 of 500 rows all one label);
    - a *block scan*: every contiguous block of up to 128 position groups against the rest, the
      same exact test, which finds a block in the middle of the file;
    - a *chi-square* test of label against ten equal position groups, for periodic patterns.

    Each test gets a third of ``alpha`` (0.001), with a Bonferroni correction over boundaries,
    blocks and classes, and a finding needs an effect that matters as well: Cohen's h of at
    least ``min_effect`` (0.2) between the segment and the rest, or Cramer's V of at least
    ``min_v`` (0.1). So a shuffled file stays quiet however large it is.
    With fewer than ``min_rows`` labelled rows the rule is skipped.

    **Why it matters**
    A file whose first rows carry another label distribution was assembled in order (by date,
    device, source or label). A split by position then gives train and test different
    distributions; unshuffled mini-batches make the loss jump; and a model can learn the
    artefact. It can also mean labels were attached to the wrong rows.

    **How to fix**
    Shuffle before splitting and batching (stratify by label); find out why the block differs:
    a device, a date, a labelling batch. Treat a mislabelled block as a data bug. A DataLoader
    that shuffles (a RandomSampler) already batches in random order, so the hint then keeps to
    the other risks: a split by position, and a mislabelled block.
    """

    code = "L002"
    name = "positional-label-drift"
    severity = Severity.WARNING
    summary = "label distribution depends on row order"
    thresholds = {"alpha": 0.001, "min_effect": 0.2, "min_v": 0.1, "groups": 10, "min_rows": 20}
    needs = ("classification",)
    sections = ("label_position",)

    def check(self, ctx: AuditContext):
        label = ctx.train.label
        bins = label.positions
        if bins.overflow or len(bins.classes) < 2:
            raise Skip("position bins need 2 to 64 classes")
        names = list(bins.classes)
        table = np.stack([bins.classes[c] for c in names], axis=1).astype(np.float64)  # (B, C)
        keep = table.sum(axis=1) > 0
        starts = np.flatnonzero(keep) * bins.width  # first row of each non-empty bin
        table = table[keep]
        total = table.sum()
        if total < self.options["min_rows"]:
            raise Skip(f"{int(total)} labelled rows; need {int(self.options['min_rows'])}")
        share = self.options["alpha"] / 3
        min_h = self.options["min_effect"]
        edge = boundary_scan(table)
        block = interval_scan(table, MAX_INTERVAL_GROUPS)
        edge_ok = edge is not None and edge.p_value < share and edge.effect >= min_h
        block_ok = block is not None and block.p_value < share and block.effect >= min_h
        if block_ok and (not edge_ok or block.p_value < edge.p_value):
            yield self._block_finding(ctx, names, starts, bins.width, block)
            return
        if edge_ok:
            yield self._segment_finding(ctx, names, starts, bins.width, edge)
            return
        chi = position_chi_square(table, int(self.options["groups"]))
        if chi is not None and chi.p_value < share and chi.cramers_v >= self.options["min_v"]:
            yield self._group_finding(ctx, names, starts, chi)

    def _segment_finding(self, ctx, names, starts, width, scan):
        label = ctx.train.label
        n_rows = ctx.train.rows
        cls = names[scan.cls]
        cut = int(starts[scan.boundary])  # rows [0, cut) vs [cut, end)
        head_rate, tail_rate = scan.rate_before, scan.rate_after
        if cut <= n_rows - cut:
            where = f"the first {cut:,} rows ({pct(cut, n_rows)})"
            seg_rate, rest_rate = head_rate, tail_rate
            examples = tuple(range(min(cut, 5)))
            affected = cut
            lo, hi = 0, cut
        else:
            where = f"the last {n_rows - cut:,} rows ({pct(n_rows - cut, n_rows)})"
            seg_rate, rest_rate = tail_rate, head_rate
            examples = tuple(range(cut, min(n_rows, cut + 5)))
            affected = n_rows - cut
            lo, hi = cut, n_rows
        approx = "" if width == 1 else f" (position bins of {width:,} rows)"
        return self.finding(
            f"Label {label.name!r} depends on row order in train: {where} are "
            f"{_rate(seg_rate)} {label.name} {cls!r} vs {_rate(rest_rate)} in the rest "
            f"(p = {scan.p_value:.2g}, Cohen's h = {scan.effect:.2f}){approx}.",
            split="train",
            columns=(label.name,),
            n_affected=affected,
            examples=examples,
            metrics={
                "p_value": scan.p_value,
                "cohens_h": scan.effect,
                "segment_rows": affected,
                "segment_rate": seg_rate,
                "rest_rate": rest_rate,
                "boundary_row": cut,
                "segment_start": lo,
                "segment_end": hi,
            },
            hint=_hint(ctx, "; find why those rows differ (source, date, device, labelling batch)"),
        )

    def _block_finding(self, ctx, names, starts, width, block):
        label = ctx.train.label
        n_rows = ctx.train.rows
        lo = int(starts[block.lo])
        hi = int(starts[block.hi]) if block.hi < len(starts) else n_rows
        cls = names[block.cls]
        return self.finding(
            f"Label {label.name!r} depends on row order in train: rows {lo:,}-{hi - 1:,} "
            f"({pct(hi - lo, n_rows)}) are {_rate(block.rate_in)} {label.name} {cls!r} vs "
            f"{_rate(block.rate_out)} in the other rows (p = {block.p_value:.2g}, Cohen's h = "
            f"{block.effect:.2f}; block edges to within {block.resolution * width:,} rows).",
            split="train",
            columns=(label.name,),
            n_affected=hi - lo,
            examples=tuple(range(lo, min(hi, lo + 5))),
            metrics={
                "p_value": block.p_value,
                "cohens_h": block.effect,
                "segment_rows": hi - lo,
                "segment_start": lo,
                "segment_end": hi,
                "segment_rate": block.rate_in,
                "rest_rate": block.rate_out,
            },
            hint=_hint(ctx, "; find why those rows differ (source, date, device, labelling batch)"),
        )

    def _group_finding(self, ctx, names, starts, chi):
        label = ctx.train.label
        n_rows = ctx.train.rows
        g, c = chi.worst_group, chi.worst_class
        lo = int(starts[chi.group_bounds[g]])
        hi = (
            int(starts[chi.group_bounds[g + 1]])
            if chi.group_bounds[g + 1] < len(starts)
            else n_rows
        )
        cls = names[c]
        return self.finding(
            f"Label {label.name!r} depends on row order in train: rows {lo:,}-{hi - 1:,} are "
            f"{_rate(chi.worst_rate)} {label.name} {cls!r} vs {_rate(chi.rest_rate)} elsewhere "
            f"(chi-square over {chi.groups} position groups, p = {chi.p_value:.2g}, "
            f"Cramer's V = {chi.cramers_v:.2f}).",
            split="train",
            columns=(label.name,),
            n_affected=hi - lo,
            examples=tuple(range(lo, min(hi, lo + 5))),
            metrics={
                "p_value": chi.p_value,
                "cramers_v": chi.cramers_v,
                "segment_start": lo,
                "segment_end": hi,
                "segment_rate": chi.worst_rate,
                "rest_rate": chi.rest_rate,
            },
            hint=_hint(ctx, "; find why those rows differ"),
        )


def _hint(ctx: AuditContext, why: str) -> str:
    """The fix; a DataLoader that draws its samples in random order already batches them
    shuffled, so then only the split by position and a mislabelled block are left to avoid."""
    sampler = ctx.train.shuffled_by
    if sampler:
        return (
            f"the DataLoader's {sampler} already shuffles the batches; do not split train and "
            "validation by position (take a random, stratified split)" + why + ", and check "
            "that block's labels (a mislabelled block is a data bug)"
        )
    return "shuffle before splitting and batching" + why


def _rate(r: float) -> str:
    if r in (0.0, 1.0) or 0.01 <= r <= 0.99:
        return f"{100 * r:.0f}%"
    return f"{100 * r:.1f}%" if r > 0.5 else f"{100 * r:.2g}%"


class ScanResult:
    __slots__ = ("p_value", "effect", "boundary", "cls", "rate_before", "rate_after")

    def __init__(self, p_value, effect, boundary, cls, rate_before, rate_after):
        self.p_value = p_value
        self.effect = effect
        self.boundary = boundary
        self.cls = cls
        self.rate_before = rate_before
        self.rate_after = rate_after


def _cohens_h(p1: np.ndarray, p2: np.ndarray) -> np.ndarray:
    return np.abs(2 * np.arcsin(np.sqrt(p1)) - 2 * np.arcsin(np.sqrt(p2)))


def boundary_scan(table: np.ndarray) -> ScanResult | None:
    """Exact two-sided hypergeometric test at every bin boundary, for every class.

    ``table`` is (bins, classes) label counts in row order. Under random order the count of a
    class before a boundary is hypergeometric; the smallest p-value is Bonferroni-corrected for
    the number of boundaries and classes tested.
    """
    n_bins, n_cls = table.shape
    if n_bins < 2:
        return None
    total = int(table.sum())
    before_n = np.cumsum(table.sum(axis=1))[:-1]  # rows before boundary b (b = 1..B-1)
    classes = range(1) if n_cls == 2 else range(n_cls)  # binary: one class's test is the other's
    best = None
    for c in classes:
        k_c = int(table[:, c].sum())
        if k_c in (0, total):
            continue
        x = np.cumsum(table[:, c])[:-1]
        p = _two_sided(x, total, k_c, before_n)
        rate_before = x / before_n
        rate_after = (k_c - x) / (total - before_n)
        effect = _cohens_h(rate_before, rate_after)
        # Rank by p, then by effect (ties at p == 0 underflow in a sorted file).
        order = np.lexsort((-effect, p))
        i = int(order[0])
        cand = (float(p[i]), -float(effect[i]), i, c, float(rate_before[i]), float(rate_after[i]))
        if best is None or cand[:2] < best[:2]:
            best = cand
    if best is None:
        return None
    tests = (n_bins - 1) * len(classes)
    p, neg_effect, i, c, rb, ra = best
    return ScanResult(min(1.0, p * tests), -neg_effect, i + 1, c, rb, ra)


MAX_INTERVAL_GROUPS = 128
SCREEN = 64  # blocks per class given the exact test after screening


class BlockResult:
    __slots__ = ("p_value", "effect", "lo", "hi", "cls", "rate_in", "rate_out", "resolution")


def _two_sided(x, total, k, draws):
    from datavet import _stats as stats  # not scipy.stats: ~0.7 s to import

    lower, upper = stats.hypergeom.tails(x, total, k, draws)  # P(X <= x), P(X >= x)
    return np.minimum(1.0, 2 * np.minimum(lower, upper))


def interval_scan(table: np.ndarray, max_groups: int) -> BlockResult | None:
    """Every contiguous block of position groups against the rest (exact hypergeometric test),
    for every class; Bonferroni-corrected over blocks and classes. Finds a block in the middle.

    Bins are merged into at most ``max_groups`` groups first, so the number of blocks stays
    near max_groups^2 / 2 and the block edges are known to within one group.
    """
    n_bins, n_cls = table.shape
    groups = min(max_groups, n_bins)
    if groups < 3:
        return None
    bounds = np.linspace(0, n_bins, groups + 1).round().astype(int)
    grouped = np.add.reduceat(table, bounds[:-1], axis=0)
    size = np.concatenate([[0], np.cumsum(grouped.sum(axis=1))])
    i, j = np.triu_indices(groups + 1, k=1)
    proper = ~((i == 0) & (j == groups))  # the whole file is not a block
    i, j = i[proper], j[proper]
    draws = size[j] - size[i]
    total = int(size[-1])
    classes = range(1) if n_cls == 2 else range(n_cls)
    best = None
    for c in classes:
        cum = np.concatenate([[0], np.cumsum(grouped[:, c])])
        k_c = int(cum[-1])
        if k_c in (0, total):
            continue
        x = cum[j] - cum[i]
        # The exact test is slow for thousands of blocks: screen with the normal approximation
        # of the hypergeometric, then test the strongest candidates exactly.
        mean = draws * k_c / total
        var = draws * (k_c / total) * (1 - k_c / total) * (total - draws) / max(total - 1, 1)
        z = np.abs(x - mean) / np.sqrt(np.maximum(var, 1e-12))
        top = np.argsort(-z)[:SCREEN]
        p = _two_sided(x[top], total, k_c, draws[top])
        rate_in = x[top] / np.maximum(draws[top], 1)
        rate_out = (k_c - x[top]) / np.maximum(total - draws[top], 1)
        effect = _cohens_h(rate_in, rate_out)
        order = np.lexsort((-effect, p))
        u = int(order[0])
        t = int(top[u])
        cand = (float(p[u]), -float(effect[u]), t, c, float(rate_in[u]), float(rate_out[u]))
        if best is None or cand[:2] < best[:2]:
            best = cand
    if best is None:
        return None
    p, neg_effect, t, c, r_in, r_out = best
    out = BlockResult()
    out.p_value = min(1.0, p * len(i) * len(classes))
    out.effect, out.cls, out.rate_in, out.rate_out = -neg_effect, c, r_in, r_out
    out.lo, out.hi = int(bounds[i[t]]), int(bounds[j[t]])  # in (non-empty) bin units
    out.resolution = int(np.max(np.diff(bounds)))
    return out


class ChiResult:
    __slots__ = (
        "p_value",
        "cramers_v",
        "groups",
        "group_bounds",
        "worst_group",
        "worst_class",
        "worst_rate",
        "rest_rate",
    )


def position_chi_square(table: np.ndarray, groups: int) -> ChiResult | None:
    n_bins, n_cls = table.shape
    groups = min(groups, n_bins)
    if groups < 2:
        return None
    bounds = np.linspace(0, n_bins, groups + 1).round().astype(int)
    grouped = np.add.reduceat(table, bounds[:-1], axis=0)
    present = np.flatnonzero(grouped.sum(axis=0) > 0)
    grouped = grouped[:, present]
    if grouped.shape[1] < 2:
        return None
    from datavet import _stats as stats

    chi2, p, _, expected = stats.chi2_contingency(grouped, correction=False)
    total = grouped.sum()
    v = math.sqrt(chi2 / (total * (min(grouped.shape) - 1)))
    resid = (grouped - expected) / np.sqrt(expected)
    g, c = np.unravel_index(np.argmax(np.abs(resid)), resid.shape)
    out = ChiResult()
    out.p_value, out.cramers_v, out.groups, out.group_bounds = float(p), v, groups, bounds
    out.worst_group, out.worst_class = int(g), int(present[c])
    out.worst_rate = float(grouped[g, c] / grouped[g].sum())
    rest = grouped.sum(axis=0) - grouped[g]
    out.rest_rate = float(rest[c] / rest.sum())
    return out
