from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from datavet.auditors.base import AuditContext, Auditor, Skip
from datavet.findings import Severity
from datavet.scan.columns import as_float, column_kind

REGION_SHOWN = 3  # pooled blocks named in the finding on image and sequence inputs


def _auc(x: np.ndarray, positive: np.ndarray) -> float:
    """ROC AUC of score ``x`` for the boolean ``positive`` (Mann-Whitney, ties averaged)."""
    from datavet._stats import rankdata

    ranks = rankdata(x)
    n_pos = int(positive.sum())
    n_neg = len(x) - n_pos
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _binned_accuracy(codes: np.ndarray, y_codes: np.ndarray) -> float:
    """In-sample accuracy of predicting the majority label within each group of ``codes``."""
    n_groups, n_cls = codes.max() + 1, y_codes.max() + 1
    table = np.bincount(codes * n_cls + y_codes, minlength=n_groups * n_cls).reshape(
        n_groups, n_cls
    )
    return float(table.max(axis=1).sum() / len(codes))


class SingleFeatureLeakage(Auditor):
    """One feature alone predicts the label near perfectly.

    **What it checks**
    Each feature on its own, on the train sample, against the label:

    - binary classification, numeric feature: ROC AUC of the raw value (either direction);
    - other classification: the accuracy of a one-feature model that predicts the most common
      label within each of up to 32 quantile bins of the feature (or each of its values, for text
      columns with few distinct values); every bin holds at least 20 rows on average, so an
      ID-like feature cannot score by memorising;
    - regression: |Spearman correlation| between the feature and the target.

    It fires at ``min_score`` (0.99) or more, naming the feature. A feature with missing values
    is scored twice, and the better score counts: on the rows where it is present, and on every
    labelled row with "missing" as a value of its own (its own level, or its own bin, placed
    below or above every value for the AUC and Spearman), so a column filled in only for one
    class is named. Ordinary missingness, unrelated to the label, lowers the second score.
    With fewer than ``min_rows`` labelled rows in the sample the rule is skipped.

    On image and sequence inputs the features are pooled blocks of the input (``channel 0 cell
    3,2``: a block mean of an 8x8 grid), which nobody can drop: the blocks that give the label
    away are one warning (unless the rule's severity is set) that names the strongest three, for
    a region of the input the label can be read off.

    **Why it matters**
    A single column that gives the label away is almost always leakage: the label itself under
    another name, a quantity computed from it, a status recorded after the outcome, an ID whose
    ranges follow the class. A model trained with it looks perfect and fails in use, where the
    column does not exist or does not carry the answer.

    On images, one region that gives the label away is a shortcut as often as leakage: a
    watermark or a date stamp in one class, a border, the lighting of the class photographed in
    daylight. A model learns the cue and fails where it is absent.

    **How to fix**
    Find out how the column is produced and when it becomes known; drop it if it is not
    available at prediction time, or if it is derived from the label. For a region of an image
    or a sequence, look at samples of each class there: crop or mask a watermark or a border,
    or collect data without the cue; a cue that is real and present at prediction time (an
    easy task) needs no fix.
    """

    code = "B003"
    name = "single-feature-leakage"
    severity = Severity.ERROR
    summary = "one feature alone predicts the label near perfectly"
    thresholds = {"min_score": 0.99, "min_rows": 30}
    # the sample and the label only: not the fitted baselines (so it runs with
    # --no-baselines, and neither waits for the fit nor asks for one)
    needs = ("target",)
    column_cell = "name"
    sections = ("leakage",)

    def check(self, ctx: AuditContext):
        table = ctx.train.sample.table
        if table is None:
            raise Skip("no rows sampled")
        y_arr = table.column(ctx.target).combine_chunks()
        if pa.types.is_dictionary(y_arr.type):
            y_arr = y_arr.dictionary_decode()
        y_missing = np.asarray(y_arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        if column_kind(y_arr.type) in ("numeric", "bool", "temporal"):
            y_missing |= ~np.isfinite(as_float(y_arr))
        if int((~y_missing).sum()) < self.options["min_rows"]:
            raise Skip(
                f"{int((~y_missing).sum())} labelled rows in the sample; need "
                f"{int(self.options['min_rows'])}"
            )
        encoded = pc.dictionary_encode(y_arr)
        y_codes = encoded.indices.to_numpy(zero_copy_only=False)
        y_codes = np.where(y_missing, 0, y_codes).astype(np.int64)
        n_cls = len(encoded.dictionary)
        regression = ctx.task == "regression"
        names = [n for n in table.column_names if n != ctx.target]
        tensor = ctx.train.tensor
        regions = tensor is not None and tensor.layout.kind != "features"
        hits = []  # pooled blocks of image or sequence inputs: (score, name, how, rows)
        for name in names:
            arr = table.column(name).combine_chunks()
            if pa.types.is_dictionary(arr.type):
                arr = arr.dictionary_decode()
            kind = column_kind(arr.type)
            result = self._score(arr, kind, y_codes, y_missing, n_cls, regression, y_arr)
            if result is None:
                continue
            score, how, rows, missing = result
            if score < self.options["min_score"]:
                continue
            if regions:
                hits.append((score, name, how, rows))
                continue
            if missing:
                how += f" with missing values ({missing:,} rows) as a value of their own"
            yield self.finding(
                f"Feature {name!r} alone predicts {ctx.target!r} near perfectly: {how} = "
                f"{score:.4f} on {rows:,} train rows. Check whether it is derived from the label "
                "or known only after it"
                + (" (whether it is filled in at all gives the label away)." if missing else "."),
                split="train",
                columns=(name,),
                n_affected=rows,
                metrics={"score": score, "rows": rows},
                hint="drop the column if it is not available at prediction time or comes from "
                "the label",
            )

        if hits:
            yield self._region(ctx, hits, len(names))

    def _region(self, ctx: AuditContext, hits: list, pooled: int):
        """One finding for the pooled blocks of image or sequence inputs that each predict the
        label near perfectly: a cue in one region of the input, not a column to drop."""
        hits.sort(key=lambda h: -h[0])
        score, _, how, rows = hits[0]
        shown = ", ".join(f"{name!r} ({s:.4f})" for s, name, _, _ in hits[:REGION_SHOWN])
        more = f" (+{len(hits) - REGION_SHOWN} more)" if len(hits) > REGION_SHOWN else ""
        if len(hits) == pooled:
            where = f"any region of the input: each of its {pooled:,} pooled blocks predicts"
        elif len(hits) == 1:
            where = f"one region of the input: 1 of its {pooled:,} pooled blocks predicts"
        else:
            where = (
                f"one region of the input: {len(hits):,} of its {pooled:,} pooled blocks predict"
            )
        return self.finding(
            f"The label {ctx.target!r} can be read off {where} it near perfectly on its own "
            f"({how} on {rows:,} train rows): {shown}{more}. A shortcut (a watermark, a border, "
            "brightness?) or an easy task: check that the cue is there at prediction time too.",
            severity=Severity.WARNING if self.level == self.severity else None,
            split="train",
            columns=tuple(name for _, name, _, _ in hits),
            n_affected=rows,
            metrics={"score": score, "rows": rows, "blocks": len(hits)},
            hint="look at samples of each class in that region (a watermark, a date stamp, a "
            "border, the lighting); crop or mask a cue that will not be there at prediction "
            "time, and keep a real one (an easy task)",
        )

    def _trivial(self, y_codes: np.ndarray) -> bool:
        """The majority class alone already reaches the threshold: accuracy proves nothing."""
        return np.bincount(y_codes).max() / len(y_codes) >= self.options["min_score"]

    def _score(self, arr, kind, y_codes, y_missing, n_cls, regression, y_arr):
        """(score, how, rows, missing rows it counts) of the better of two scores, or None:
        on the rows where the feature is present, and with "missing" as a value of its own on
        every labelled row (a column filled in only for one class gives the label away by
        being there)."""
        minimum = int(self.options["min_rows"])
        labelled = ~y_missing
        if kind in ("numeric", "bool"):
            x = pc.cast(arr, pa.float64(), safe=False).to_numpy(zero_copy_only=False)
            present = np.isfinite(x)
            scores = [self._numeric(x, present & labelled, y_codes, n_cls, regression, y_arr)]
            missing = int((labelled & ~present).sum())
            if missing and (present & labelled).any() and labelled.sum() >= minimum:
                # missing placed below, then above, every value (the better of the two); the
                # binned accuracy gives it a bin of its own, wherever it is placed
                ordered = regression or n_cls == 2
                for fill in (-np.inf, np.inf) if ordered else (-np.inf,):
                    filled = np.where(present, x, fill)
                    scores.append(
                        self._numeric(filled, labelled, y_codes, n_cls, regression, y_arr, present)
                    )
        elif kind == "string" and not regression:
            present = ~np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
            scores = [self._levels(arr, present & labelled, y_codes, "mask")]
            missing = int((labelled & ~present).sum())
            if missing and (present & labelled).any():
                scores.append(self._levels(arr, labelled, y_codes, "encode"))
        else:
            return None
        best = max((r for r in scores if r is not None), default=None, key=lambda r: r[0])
        if best is None:
            return None
        return (*best, 0 if best is scores[0] else missing)

    def _numeric(self, x, ok, y_codes, n_cls, regression, y_arr, present=None):
        """The score of numeric ``x`` on the rows ``ok``; ``present`` given: the rows where
        ``x`` is a value (not a stand-in for missing), the rest form one bin of their own."""
        n = int(ok.sum())
        if n < int(self.options["min_rows"]) or np.ptp(x[ok]) == 0:
            return None
        if regression:
            from datavet._stats import spearmanr

            y = as_float(y_arr)
            if np.ptp(y[ok]) == 0:
                return None
            rho = float(spearmanr(x[ok], y[ok]).statistic)
            return abs(rho), "|Spearman correlation|", n
        if n_cls == 2:
            pos = y_codes[ok] == 1
            if pos.all() or not pos.any():
                return None
            auc = _auc(x[ok], pos)
            return max(auc, 1 - auc), "ROC AUC", n
        if self._trivial(y_codes[ok]):
            return None
        values = x[ok] if present is None else x[ok & present]
        bins = max(2, min(32, len(values) // 20))
        edges = np.unique(np.quantile(values, np.linspace(0, 1, bins + 1)[1:-1]))
        codes = np.searchsorted(edges, x[ok], side="right")
        if present is not None:
            codes = np.where(present[ok], codes, len(edges) + 1)
        _, codes = np.unique(codes, return_inverse=True)
        return _binned_accuracy(codes, y_codes[ok]), "one-feature accuracy", n

    def _levels(self, arr, ok, y_codes, nulls):
        """The one-feature accuracy of text ``arr``'s values on the rows ``ok``; ``nulls``
        "encode": a missing value is a level of its own."""
        n = int(ok.sum())
        if n < int(self.options["min_rows"]):
            return None
        enc = pc.dictionary_encode(arr.filter(pa.array(ok)), null_encoding=nulls)
        if len(enc.dictionary) < 2 or len(enc.dictionary) > n // 20:
            return None
        codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        if self._trivial(y_codes[ok]):
            return None
        return _binned_accuracy(codes, y_codes[ok]), "one-feature accuracy", n
