from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from datavet.auditors.base import AuditContext, Auditor, Skip
from datavet.auditors.single_feature_leakage import _auc, _binned_accuracy
from datavet.findings import Severity
from datavet.scan.columns import as_float, column_kind

# A counter, an ID or a timestamp gives (nearly) every row a value of its own; a quantity
# that repeats values on average at least this often (distinct values / rows at most 1/2)
# follows row order because the file is sorted by it.
SORTED_BY_SHARE = 0.5


class OrderFeatureLeakage(Auditor):
    """A feature that just counts rows (a row number, a timestamp) and predicts the label.

    **What it checks**
    On the train sample: numeric and date/time features whose rank correlation with the row
    position is at least ``min_order`` (0.99), i.e. a monotone function of row order such as an
    index, a counter or a timestamp of a sorted file, and which also predict the label: ROC AUC
    of at least ``min_auc`` (0.75) for a binary label, one-feature accuracy at least
    ``min_gain`` (0.1) above the majority class otherwise, |Spearman| of at least ``min_rho``
    (0.5) for regression. Each such feature is named. A numeric feature that repeats its values
    (at most one distinct value per two rows, as ``age`` does and a counter does not) is
    reported as the column the file is sorted by, not as a counter.
    With fewer than ``min_rows`` usable rows in the sample a feature (or the rule) is skipped.

    **Why it matters**
    The label of such a file depends on where a row sits (it was sorted or assembled in blocks),
    and the feature tells the model where it sits. The model learns the order, which means
    nothing for new data, and validation on a random split of the same file rewards it.

    **How to fix**
    Drop the counter from the features; if it is a timestamp, split by time (S008) and use
    features derived from it only if they will exist at prediction time; shuffle, then check
    how the file was built (see L002). A file sorted by a real predictor needs shuffling only:
    keep the feature.
    """

    code = "B004"
    name = "order-feature-leakage"
    severity = Severity.WARNING
    summary = "a feature that follows row order (an index, a timestamp) predicts the label"
    thresholds = {
        "min_order": 0.99,
        "min_auc": 0.75,
        "min_gain": 0.1,
        "min_rho": 0.5,
        "min_rows": 30,
    }
    # the sample and the label only: not the fitted baselines (so it runs with
    # --no-baselines, and neither waits for the fit nor asks for one)
    needs = ("target",)
    sections = ("leakage",)

    def check(self, ctx: AuditContext):
        from datavet._stats import spearmanr

        sample = ctx.train.sample
        table = sample.table
        if table is None or table.num_rows < self.options["min_rows"]:
            raise Skip("too few rows in the sample")
        y_arr = table.column(ctx.target).combine_chunks()
        if pa.types.is_dictionary(y_arr.type):
            y_arr = y_arr.dictionary_decode()
        y_missing = np.asarray(y_arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        regression = ctx.task == "regression"
        y_num = None  # the label as numbers, when it is numeric (text labels: class codes only)
        if regression or column_kind(y_arr.type) in ("numeric", "bool", "temporal"):
            y_num = as_float(y_arr) if column_kind(y_arr.type) != "string" else None
            if y_num is not None:
                y_missing |= ~np.isfinite(y_num)
        codes = pc.dictionary_encode(y_arr).indices.to_numpy(zero_copy_only=False)
        codes = np.where(y_missing, 0, codes).astype(np.int64)
        pos = sample.positions.astype(float)
        far = self._far_from_order(table, ctx.target, y_missing)
        for name in table.column_names:
            if name == ctx.target or name in far:
                continue
            arr = table.column(name).combine_chunks()
            if column_kind(arr.type) not in ("numeric", "temporal"):
                continue
            x = as_float(arr)
            ok = np.isfinite(x) & ~y_missing
            if ok.sum() < self.options["min_rows"] or np.ptp(x[ok]) == 0:
                continue
            order = abs(float(spearmanr(x[ok], pos[ok]).statistic))
            if not order >= self.options["min_order"]:
                continue
            how, score = self._predicts(x[ok], codes[ok], regression, y_num, ok)
            if how is None:
                continue
            rows = int(ok.sum())
            distinct = len(np.unique(x[ok]))
            if column_kind(arr.type) == "numeric" and distinct <= SORTED_BY_SHARE * rows:
                yield self.finding(
                    f"The file looks sorted by feature {name!r}: it follows row order "
                    f"(|Spearman| with row position = {order:.3f}) with only {distinct:,} "
                    f"distinct values in {rows:,} rows, and predicts {ctx.target!r} ({how} = "
                    f"{score:.3f}). The label then follows row order through it: shuffle the "
                    "rows before any split by position (see L002). Keep the feature if it is a "
                    "real predictor; drop it only if it numbers rows or blocks of the file.",
                    split="train",
                    columns=(name,),
                    n_affected=rows,
                    metrics={"order_rho": order, "label_score": score, "distinct": distinct},
                    hint="the file may be sorted by this column: shuffle the rows (see L002); "
                    "keep the feature if it is a real predictor",
                )
                continue
            yield self.finding(
                f"Feature {name!r} follows row order (|Spearman| with row position = {order:.3f})"
                f" and predicts {ctx.target!r} ({how} = {score:.3f}): the label depends on where "
                "rows sit in the file, and this feature gives the position away.",
                split="train",
                columns=(name,),
                n_affected=rows,
                metrics={"order_rho": order, "label_score": score},
                hint="drop the counter; split by time if it is a timestamp; shuffle and see L002",
            )

    def _far_from_order(self, table, target: str, y_missing: np.ndarray) -> set[str]:
        """Columns whose |Spearman| with row position is surely below ``min_order`` (by a
        margin far above rounding), computed for many columns at once: the test column by
        column (a SciPy call each) would skip them anyway. Only columns with every labelled
        sample row finite are screened; the others go the exact way."""
        from datavet._stats import rankdata

        keep = ~y_missing
        n = int(keep.sum())
        if n < 3:
            return set()
        # the sample is in row order and its positions are distinct: their ranks are 1..n
        rp = np.arange(1, n + 1, dtype=float) - (n + 1) / 2
        names = [
            f.name
            for f in table.schema
            if f.name != target and column_kind(f.type) in ("numeric", "temporal")
        ]
        limit = self.options["min_order"] - 1e-6
        out: set[str] = set()
        step = max(1, (1 << 21) // n)  # cells per block of columns: memory stays bounded
        for start in range(0, len(names), step):
            chunk = names[start : start + step]
            x = np.empty((n, len(chunk)))
            for j, name in enumerate(chunk):
                x[:, j] = as_float(table.column(name).combine_chunks())[keep]
            full = np.isfinite(x).all(axis=0)
            if not full.any():
                continue
            r = rankdata(x[:, full], axis=0)
            r -= r.mean(axis=0)
            with np.errstate(divide="ignore", invalid="ignore"):
                rho = (rp @ r) / np.sqrt((rp @ rp) * np.einsum("ij,ij->j", r, r))
            far = np.abs(rho) < limit  # NaN (a constant column): not screened out
            out.update(np.asarray(chunk, dtype=object)[full][far].tolist())
        return out

    def _predicts(self, x, codes, regression, y_num, ok):
        from datavet._stats import spearmanr

        if regression:
            if y_num is None or np.ptp(y_num[ok]) == 0:
                return None, 0.0
            rho = abs(float(spearmanr(x, y_num[ok]).statistic))
            return (
                ("|Spearman| with the target", rho)
                if rho >= self.options["min_rho"]
                else (None, rho)
            )
        n_cls = int(codes.max()) + 1 if len(codes) else 0
        if n_cls < 2:
            return None, 0.0
        if n_cls == 2:
            auc = _auc(x, codes == 1)
            auc = max(auc, 1 - auc)
            return ("ROC AUC", auc) if auc >= self.options["min_auc"] else (None, auc)
        bins = max(2, min(32, len(x) // 20))
        edges = np.unique(np.quantile(x, np.linspace(0, 1, bins + 1)[1:-1]))
        groups = np.unique(np.searchsorted(edges, x, side="right"), return_inverse=True)[1]
        acc = _binned_accuracy(groups, codes)
        gain = acc - np.bincount(codes).max() / len(codes)
        return (
            ("one-feature accuracy gain", gain)
            if gain >= self.options["min_gain"]
            else (None, gain)
        )
