"""The baselines a network must beat: mean / majority / class prior, and a linear model.

Fitted on the scan's bounded uniform sample of train (the report says so when it is a sample),
scored on the test split when it has labels, else by 5-fold cross-validation on train. Every
random choice has a fixed seed, so two runs give the same numbers.

A network must beat these: if it cannot beat these, the problem is upstream of the
network; if even the linear model is at chance, suspect the relation between inputs and labels.
Step 3: the expected initial loss (ln C for C classes, the prior's entropy with a bias-initialised
output layer, mean(y^2) for a zero-output regression).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from datavet._blas import one_blas_thread
from datavet._lazy import pandas as pd
from datavet.linear import MIN_ITER, Pipeline, to_rows
from datavet.scan.columns import as_float, column_kind

SEED = 0
FOLDS = 5
MAX_ONE_HOT = 20  # text columns with more distinct values are left out of the linear model
MAX_CLASSES = 1000  # more train classes: per-class baselines are skipped (an ID-like target)
# Caps that keep the linear model's cost a fraction of the scan's on any shape:
MAX_ENCODED = 256  # encoded width (numeric columns, missing indicators, one-hot levels)
MAX_ITER = 100  # solver iterations per fit (a baseline need not converge to the last digit)
# ...and fewer (never under datavet.linear.MIN_ITER) when rows x encoded width x classes is
# large: the solver's work per fit is at most this many multiply-adds per pass over the data
MAX_FIT_WORK = 40_000_000
MAX_LINEAR_CLASSES = 50  # the linear model is fitted on the rows of the most frequent classes
MAX_FIT_CELLS = 500_000  # rows x encoded width x classes in one fit: the rows are sampled
MIN_FIT_ROWS = 2_000  # ...but never below this many rows per fit


@dataclass
class Baselines:
    """Results of the baselines for one audit; ``to_dict`` goes into the JSON as ``baselines``."""

    task: str
    evaluated_on: str = ""  # "test" or "5-fold cross-validation on train"
    train_rows: int = 0  # rows fitted (after dropping missing labels)
    eval_rows: int = 0
    sampled: bool = False
    sample_of: int = 0
    models: list[dict] = field(default_factory=list)  # {"model", "metrics", "description"}
    initial_loss: dict = field(default_factory=dict)
    features: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None
    error: str | None = None  # the traceback when fitting crashed
    # Per-row losses of the reference predictor and the linear model, for B001's paired test.
    reference_loss: np.ndarray | None = None
    linear_loss: np.ndarray | None = None
    # Scored on test: the same models cross-validated on train, fitted only when asked (B002
    # asks when the test score alone looks near perfect).
    cv_on_train: Callable[[], list[dict]] | None = field(default=None, repr=False)
    _cv_models: list[dict] | None = field(default=None, repr=False)

    def metric(self, model: str, name: str) -> float | None:
        for m in self.models:
            if m["model"] == model:
                return m["metrics"].get(name)
        return None

    def train_cv_metric(self, model: str, name: str) -> float | None:
        """``model``'s ``name`` by cross-validation on train: the score itself when that is how
        the baselines were evaluated; else fitted now (once) when a test split scored them."""
        if self.cv_on_train is None:
            return self.metric(model, name) if self.evaluated_on != "test" else None
        if self._cv_models is None:
            self._cv_models = self.cv_on_train()
        for m in self._cv_models:
            if m["model"] == model:
                return m["metrics"].get(name)
        return None

    def to_dict(self) -> dict:
        return {
            "task": self.task,
            "evaluated_on": self.evaluated_on,
            "train_rows": self.train_rows,
            "eval_rows": self.eval_rows,
            "sampled": self.sampled,
            "sample_of": self.sample_of,
            "models": self.models,
            "initial_loss": self.initial_loss,
            "features": self.features,
            "notes": self.notes,
            "skipped": self.skipped,
            "expectation": expectation(self),
        }


def _feature_frame(table: pa.Table, features: list[str]) -> tuple[pd.DataFrame, list[str], list]:
    """(frame, numeric columns, text columns) with inf turned into NaN (imputed later)."""
    texts, numeric, text, arrays = {}, [], [], []
    for name in features:
        arr = table.column(name)
        kind = column_kind(arr.type)
        if kind in ("numeric", "bool"):
            arrays.append(arr)
            numeric.append(name)
        elif kind == "string":
            if pa.types.is_dictionary(arr.type):
                texts[name] = arr.to_pandas().astype(object)
            else:  # straight to objects (no pandas string column on the way)
                texts[name] = np.asarray(arr.to_numpy(zero_copy_only=False), dtype=object)
            text.append(name)
    # the numeric columns as one 2-D block, computed together (a wide table has many)
    block = np.empty((table.num_rows, len(numeric)))
    for j, arr in enumerate(arrays):
        block[:, j] = pa.compute.cast(arr, pa.float64(), safe=False).to_numpy(zero_copy_only=False)
    finite = np.isfinite(block)
    block[~finite] = np.nan
    with np.errstate(all="ignore"):
        top = np.where(finite, np.abs(block), 0.0).max(axis=0, initial=0.0)
    big = np.flatnonzero(top > 1e100)  # rescaled (the standardised model is the same)
    if len(big):
        block[:, big] = block[:, big] / top[big]
    index = pd.RangeIndex(table.num_rows)
    frame = pd.DataFrame(block, index=index, columns=pd.Index(numeric, dtype=object))
    if text:
        frame = pd.concat([frame, pd.DataFrame(texts, index=index)], axis=1)
        kept = set(numeric) | set(texts)
        frame = frame[[name for name in features if name in kept]]
    return frame, numeric, text


def _pipeline(task: str, numeric: list[int], text: list[int]):
    """Impute (median, with missing indicators) + standardise numeric columns, one-hot text
    columns, then a logistic or ridge regression: scikit-learn's pipeline, in NumPy
    (``datavet.linear``), so the baselines import neither scikit-learn nor SciPy."""
    return Pipeline(task, numeric, text, max_iter=MAX_ITER, max_work=MAX_FIT_WORK)


def _labels(table: pa.Table, target: str) -> tuple[np.ndarray, np.ndarray]:
    """(labels as a NumPy array, mask of rows whose label is present)."""
    arr = table.column(target).combine_chunks()
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    kind = column_kind(arr.type)
    present = ~np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    if kind in ("numeric", "bool", "temporal"):
        y = as_float(arr)
        present &= np.isfinite(y)  # an infinite label is no usable label either
        whole = present.any() and np.all(y[present] == np.round(y[present]))
        if kind == "bool" or (whole and np.all(np.abs(y[present]) <= 2**53)):  # int64-exact
            y = np.where(present, y, 0).astype(np.int64)
    elif pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        y = np.asarray(arr.fill_null("").to_numpy(zero_copy_only=False), dtype=object)
    else:  # bytes and anything else: one label type (str)
        y = np.array([_label_text(v) for v in arr.to_pylist()], dtype=object)
    return y, present


def _label_text(value) -> str:
    """A class label as text: bytes decoded (undecodable bytes escaped), None as ''."""
    if value is None:
        return ""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "backslashreplace")
    return value if isinstance(value, str) else str(value)


def _as_text_labels(y: np.ndarray) -> np.ndarray:
    """Numeric labels as the text train's text labels would spell them (1, not 1.0)."""
    out = []
    for v in y.tolist():
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        out.append(_label_text(v))
    return np.array(out, dtype=object)


def _py(value):
    """A NumPy scalar as the Python value it holds (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _entropy(p: np.ndarray) -> float:
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def _class_log_loss(proba: np.ndarray, classes: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-row log loss; proba columns follow ``classes`` (sorted). Unseen labels: NaN."""
    col = _codes(classes, y)
    out = np.full(len(y), np.nan)
    seen = col >= 0
    p = np.clip(proba[np.flatnonzero(seen), col[seen]], 1e-15, 1.0)
    out[seen] = -np.log(p)
    return out


def _unique_counts(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(y, return_counts=True)``; text labels hashed, and only the distinct values
    sorted (sorting every one of 50,000 text labels took longer than the fits)."""
    if y.dtype.kind != "O":
        return np.unique(y, return_counts=True)
    codes, uniques = pd.factorize(y)
    uniques = np.asarray(uniques, dtype=object)
    order = np.argsort(uniques, kind="stable")
    return uniques[order], np.bincount(codes, minlength=len(uniques))[order]


def _codes(classes: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Each label's index in the sorted ``classes``; -1 for a label not among them."""
    if not len(classes):
        return np.full(len(y), -1)
    if y.dtype.kind == "O" or classes.dtype.kind == "O":
        try:
            return pd.Index(classes).get_indexer(y)
        except TypeError:  # pragma: no cover - labels pandas cannot hash
            pass
    try:
        at = np.searchsorted(classes, y).clip(0, len(classes) - 1)
        return np.where(classes[at] == y, at, -1)
    except TypeError:  # labels that do not sort with train's
        index = {c: i for i, c in enumerate(classes.tolist())}
        return np.array([index.get(v, -1) for v in y.tolist()], dtype=np.int64)


def _fit_rows(fit_idx: np.ndarray, y: np.ndarray | None, cap: int, seed: int) -> np.ndarray:
    """``fit_idx`` cut to the rows of the ``MAX_LINEAR_CLASSES`` most frequent classes (``y``
    given) and to a uniform sample of at most ``cap`` rows, in order."""
    if y is not None:
        cls, cnt = np.unique(y[fit_idx], return_counts=True)
        if len(cls) > MAX_LINEAR_CLASSES:
            top = cls[np.argsort(-cnt, kind="stable")[:MAX_LINEAR_CLASSES]]
            fit_idx = fit_idx[np.isin(y[fit_idx], top)]
    if len(fit_idx) > cap:
        rng = np.random.default_rng(seed)
        fit_idx = np.sort(rng.choice(fit_idx, cap, replace=False))
    return fit_idx


def _classification(
    x_tr, y_tr, x_ev, y_ev, numeric, text, cv, fit_cap=None
) -> tuple[list[dict], np.ndarray, np.ndarray]:
    classes, counts = _unique_counts(y_tr)
    # labels as their index in ``classes`` from here on: text labels are sorted once, not in
    # every fold (the folds, the fits and the scores are the same on the indices)
    y_tr = _codes(classes, y_tr)
    if y_ev is not None:
        y_ev = _codes(classes, y_ev)
    previous = None  # the last fold's model: the next fit starts from its weights
    if cv is None:
        folds = [(np.arange(len(y_tr)), None)]
    else:
        folds = list(cv.split(np.zeros(len(y_tr)), y_tr))
    n_eval = len(y_tr) if cv is not None else len(y_ev)
    y_true = y_tr if cv is not None else y_ev
    major_pred = np.empty(n_eval, dtype=y_tr.dtype)
    prior_loss = np.full(n_eval, np.nan)
    linear_pred = np.empty(n_eval, dtype=y_tr.dtype)
    linear_loss = np.full(n_eval, np.nan)
    for fit_idx, eval_idx in folds:
        xf, yf = x_tr.iloc[fit_idx], y_tr[fit_idx]
        xe = x_ev if eval_idx is None else x_tr.iloc[eval_idx]
        ye = y_ev if eval_idx is None else y_tr[eval_idx]
        at = slice(None) if eval_idx is None else eval_idx
        if len(ye) == 0:  # nothing to score in this fold
            continue
        cls, cnt = np.unique(yf, return_counts=True)
        prior = cnt / cnt.sum()
        major_pred[at] = cls[np.argmax(cnt)]
        ye_at = _codes(cls, ye)  # the class prior's loss, row by row (unseen labels: NaN)
        prior_loss[at] = np.where(ye_at >= 0, -np.log(np.clip(prior[ye_at], 1e-15, 1.0)), np.nan)
        if len(cls) < 2:
            linear_pred[at] = cls[0]
            linear_loss[at] = prior_loss[at]
            continue
        model = _pipeline("classification", numeric, text)
        lin_idx = _fit_rows(fit_idx, y_tr, fit_cap or len(fit_idx), SEED)
        if len(np.unique(y_tr[lin_idx])) < 2:
            lin_idx = fit_idx
        xf, yf = x_tr.iloc[lin_idx], y_tr[lin_idx]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence chatter; the metrics say how it did
            model.fit(xf, yf, warm=previous)
            previous = model
            linear_pred[at] = model.predict(xe)
            linear_loss[at] = _class_log_loss(model.predict_proba(xe), model.classes_, ye)

    def scores(pred, loss):
        finite = np.isfinite(loss)
        balanced = balanced_accuracy(y_true, pred)
        return {
            "accuracy": float(np.mean(pred == y_true)),
            "balanced_accuracy": balanced,
            "log_loss": float(np.mean(loss[finite])) if finite.any() else None,
        }

    major = scores(major_pred, np.full(n_eval, np.nan))
    prior = scores(major_pred, prior_loss)
    models = [
        {
            "model": "majority",
            "description": f"always predicts {_py(classes[np.argmax(counts)])!r}",
            "metrics": {**major, "log_loss": None},
        },
        {"model": "prior", "description": "predicts the train class frequencies", "metrics": prior},
        {
            "model": "linear",
            "description": "impute (median) + standardise + logistic regression",
            "metrics": scores(linear_pred, linear_loss),
        },
    ]
    return models, prior_loss, linear_loss


def balanced_accuracy(y_true: np.ndarray, pred: np.ndarray) -> float:
    """The mean recall over the classes of ``y_true``: scikit-learn's balanced accuracy, in
    two ``bincount`` s (its confusion matrix over many text classes took most of the baselines'
    scoring time)."""
    try:
        codes = np.unique(y_true, return_inverse=True)[1]
    except TypeError:  # labels of several types that do not sort together ("a" and 1):
        # coded in order of first appearance (scikit-learn's balanced_accuracy_score sorts
        # them too, and raises the same TypeError)
        seen: dict = {}
        codes = np.fromiter(
            (seen.setdefault(v, len(seen)) for v in np.asarray(y_true, dtype=object).tolist()),
            np.int64,
            len(y_true),
        )
    codes = codes.ravel()  # every class has a code and a row: no empty bins
    hits = np.asarray(pred == y_true, dtype=float).ravel()
    return float((np.bincount(codes, weights=hits) / np.bincount(codes)).mean())


def _regression(
    x_tr, y_tr, x_ev, y_ev, numeric, text, cv, fit_cap=None
) -> tuple[list[dict], np.ndarray, np.ndarray]:
    folds = [(np.arange(len(y_tr)), None)] if cv is None else list(cv.split(np.zeros(len(y_tr))))
    n_eval = len(y_tr) if cv is not None else len(y_ev)
    # Fitted and scored on y / scale: targets near 1e307 overflow a ridge fit (and squared
    # errors) in their own units. R^2 does not depend on the scale; MSE and MAE are scaled
    # back (an MSE past 1e308 is inf, reported as null).
    y_all = np.concatenate([y_tr.astype(float), [] if cv is not None else y_ev.astype(float)])
    top = float(np.max(np.abs(y_all[np.isfinite(y_all)]), initial=0.0))
    scale = top if top > 1e100 else 1.0
    y_true = (y_tr if cv is not None else y_ev).astype(float) / scale
    mean_pred = np.empty(n_eval)
    linear_pred = np.empty(n_eval)
    for fit_idx, eval_idx in folds:
        xf, yf = x_tr.iloc[fit_idx], y_tr[fit_idx].astype(float) / scale
        xe = x_ev if eval_idx is None else x_tr.iloc[eval_idx]
        at = slice(None) if eval_idx is None else eval_idx
        if len(xe) == 0:  # nothing to score in this fold
            continue
        mean_pred[at] = yf.mean()
        lin_idx = _fit_rows(fit_idx, None, fit_cap or len(fit_idx), SEED)
        xf, yf = x_tr.iloc[lin_idx], y_tr[lin_idx].astype(float) / scale
        model = _pipeline("regression", numeric, text)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(xf, yf)
            linear_pred[at] = model.predict(xe)

    def scores(pred):
        err = y_true - pred
        ss_tot = float(np.sum((y_true - y_true.mean()) ** 2))
        return {
            "r2": 1.0 - float(np.sum(err**2)) / ss_tot if ss_tot > 0 else None,
            "mse": float(np.mean(err**2) * np.float64(scale) ** 2),
            "mae": float(np.mean(np.abs(err)) * scale),
        }

    models = [
        {
            "model": "mean",
            "description": "always predicts the train mean",
            "metrics": scores(mean_pred),
        },
        {
            "model": "linear",
            "description": "impute (median) + standardise + ridge regression",
            "metrics": scores(linear_pred),
        },
    ]
    return models, (y_true - mean_pred) ** 2, (y_true - linear_pred) ** 2


def run_baselines(
    train: pa.Table,
    test: pa.Table | None,
    *,
    target: str,
    task: str,
    features: list[str],
    sample_of: int,
) -> Baselines:
    """Fit and score the baselines. Never raises for data problems: it returns ``skipped``."""
    out = Baselines(task=task, sampled=sample_of > train.num_rows, sample_of=sample_of)
    y_tr, keep = _labels(train, target)
    if (~keep).any():
        out.notes.append(f"{int((~keep).sum()):,} train rows without a label left out")
    train = train.filter(pa.array(keep))
    y_tr = y_tr[keep]
    if len(y_tr) < 2:
        where = (  # a small sample of a large split: say so, not that the split is small
            f"the train sample ({train.num_rows:,} of {sample_of:,} rows; raise sample_rows) "
            f"holds {len(y_tr)} labelled row(s)"
            if out.sampled
            else f"{len(y_tr)} labelled train row(s)"
        )
        out.skipped = f"{where}; baselines need at least 2"
        return out
    x_tr, numeric, text = _feature_frame(train, features)
    # text with a few values; an all-missing text column encodes to nothing (sklearn refuses it)
    text = [c for c in text if 0 < x_tr[c].nunique(dropna=True) <= MAX_ONE_HOT]
    kept = {*numeric, *text}
    dropped = [c for c in features if c not in kept]
    if dropped:
        out.notes.append(
            "left out of the linear model (not numeric, or text with more than "
            f"{MAX_ONE_HOT} values): " + _names(dropped)
        )
    has_missing = dict(zip(x_tr.columns, x_tr.isna().any().tolist()))  # one pass, not per column
    imputed = [c for c in numeric if has_missing[c]]
    # cap the encoded width: a numeric column is 1 (2 with its missing indicator), a text
    # column one per value
    width, capped = 0, []
    numeric_set, text_set, imputed_set = set(numeric), set(text), set(imputed)
    for c in features:
        if c in numeric_set:
            w = 2 if c in imputed_set else 1
        elif c in text_set:
            w = int(x_tr[c].nunique()) + 1
        else:
            continue
        if width + w > MAX_ENCODED:
            capped.append(c)
            continue
        width += w
    if capped:
        capped_set = set(capped)
        numeric = [c for c in numeric if c not in capped_set]
        text = [c for c in text if c not in capped_set]
        imputed = [c for c in imputed if c not in capped_set]
        out.notes.append(
            f"left out of the linear model to keep it cheap (encoded width capped at "
            f"{MAX_ENCODED}): {_names(capped)}"
        )
    out.features = numeric + text
    if not out.features:
        out.skipped = "no usable feature (numeric, or text with few values) for the linear model"
        return out
    x_tr = x_tr[out.features]
    if task == "classification":
        classes, counts = _unique_counts(y_tr)
        if len(classes) < 2:
            out.skipped = f"train has one class ({_py(classes[0])!r}); nothing to predict"
            return out
        if len(classes) > MAX_CLASSES:
            out.skipped = (
                f"train has {len(classes):,} classes in {len(y_tr):,} labelled rows (more than "
                f"{MAX_CLASSES:,}): per-class baselines mean nothing there (see L005)"
            )
            return out
        prior = counts / counts.sum()
        out.initial_loss = {
            "uniform_logits": math.log(len(classes)),
            "prior_bias": _entropy(prior),
            "classes": int(len(classes)),
        }
    else:
        yf = y_tr.astype(float)
        with np.errstate(over="ignore", invalid="ignore"):  # |y| > 1e154: inf, reported as null
            out.initial_loss = {
                "zero_output": float(np.mean(yf**2)),
                "mean_bias": float(np.var(yf)),
            }

    x_ev = y_ev = cv = None
    if test is not None and target in test.column_names:
        y_ev, keep_ev = _labels(test, target)
        if task == "regression" and y_ev.dtype.kind not in "iufb":  # text test targets
            y_ev = pd.to_numeric(pd.Series(y_ev, dtype=object), errors="coerce").to_numpy(float)
            keep_ev &= np.isfinite(y_ev)
        if keep_ev.sum() >= 1:
            test = test.filter(pa.array(keep_ev))
            y_ev = y_ev[keep_ev]
            names = set(test.column_names)  # a property: one new list per call
            x_ev, _, _ = _feature_frame(test, [c for c in out.features if c in names])
            for c in out.features:
                if c not in x_ev:
                    x_ev[c] = np.nan
            x_ev = x_ev[out.features]
            out.evaluated_on = "test"
            done = set(imputed)
            imputed += [c for c in numeric if c not in done and x_ev[c].isna().any()]
    if imputed:
        out.notes.append(
            "NaN/inf imputed with the train median (plus a missing indicator) in: "
            + ", ".join(imputed)
        )
    if x_ev is None:
        cv, note = _folds(task, y_tr)
        if note:
            out.notes.append(note)
        out.evaluated_on = f"{cv.get_n_splits()}-fold cross-validation on train"
    out.train_rows = len(y_tr)
    out.eval_rows = len(y_tr) if x_ev is None else len(y_ev)
    fit = _classification if task == "classification" else _regression
    float_classes = None
    if task == "classification" and y_tr.dtype.kind == "O" and y_ev is not None:
        y_ev = _as_text_labels(y_ev)  # text train labels, numbers in test: compared as text
    mixed = y_ev is not None and y_ev.dtype.kind != y_tr.dtype.kind
    if task == "classification" and y_tr.dtype.kind in "iuf" and (y_tr.dtype.kind == "f" or mixed):
        # float classes (whole numbers past 2**53, --task classification on fractions), or test
        # labels of another type: sklearn wants one discrete label type, so classes are fitted
        # as their index
        original = y_tr
        float_classes = np.unique(y_tr.astype(float))
        y_tr = np.searchsorted(float_classes, y_tr.astype(float))
        if y_ev is not None:  # test labels train never has (or text): class -1, never predicted
            ev = pd.to_numeric(pd.Series(y_ev, dtype=object), errors="coerce").to_numpy(float)
            at = np.searchsorted(float_classes, ev).clip(0, len(float_classes) - 1)
            y_ev = np.where(float_classes[at] == ev, at, -1)
    # sklearn sees positional names: data's own names can collide once numpy strips them
    # (a trailing NUL) or be anything at all
    plain = {c: f"f{i}" for i, c in enumerate(out.features)}
    x_tr = x_tr.set_axis([plain[c] for c in x_tr.columns], axis=1)
    if x_ev is not None:
        x_ev = x_ev.set_axis([plain[c] for c in x_ev.columns], axis=1)
    n_classes = len(_unique_counts(y_tr)[0]) if task == "classification" else 1
    fit_classes = min(n_classes, MAX_LINEAR_CLASSES)
    fit_cap = max(MIN_FIT_ROWS, MAX_FIT_CELLS // (max(width, 1) * fit_classes))
    if n_classes > MAX_LINEAR_CLASSES:
        out.notes.append(
            f"the linear model is fitted on the rows of the {MAX_LINEAR_CLASSES} most frequent "
            f"of {n_classes:,} classes (it never predicts the others)"
        )
    per_fit = len(y_tr) if cv is None else len(y_tr) - len(y_tr) // cv.get_n_splits()
    # the solver's iterations per fit, as datavet.linear bounds them (about: the encoded width
    # of each fit is that of its rows)
    weights = (width + 1) * (1 if fit_classes <= 2 else fit_classes)
    iterations = max(
        MIN_ITER, min(MAX_ITER, MAX_FIT_WORK // max(min(per_fit, fit_cap) * weights, 1))
    )
    if task == "regression":
        iterations = MAX_ITER  # an exact solve: no iterations to cap
    if per_fit > fit_cap:
        out.notes.append(
            f"the linear model is fitted on a uniform sample of {fit_cap:,} rows per fit (cost "
            f"cap), scored on all {out.eval_rows:,}; at most {iterations} solver iterations"
        )
    elif iterations < MAX_ITER:
        out.notes.append(
            f"the linear model's solver stops after at most {iterations} iterations per fit "
            "(cost cap: many rows x encoded columns x classes)"
        )
    at = {c: i for i, c in enumerate(out.features)}
    # the features as arrays, text coded once: the folds slice arrays, not frames
    x_tr, x_ev = to_rows([x_tr, x_ev], [at[c] for c in numeric if c in at], [at[c] for c in text])
    with one_blas_thread(), np.errstate(over="ignore", invalid="ignore"):
        out.models, out.reference_loss, out.linear_loss = fit(
            x_tr,
            y_tr,
            x_ev,
            y_ev,
            # positions, not names: sklearn looks each name up in a list (quadratic)
            numeric=[at[c] for c in numeric if c in at],
            text=[at[c] for c in text],
            cv=cv,
            fit_cap=fit_cap,
        )
    if task == "classification" and out.reference_loss is not None:
        unseen = int(np.count_nonzero(~np.isfinite(out.reference_loss)))
        if unseen:  # test labels train never has: no model fitted on train can score them
            out.notes.append(
                f"log loss over the {out.eval_rows - unseen:,} of {out.eval_rows:,} "
                f"{out.evaluated_on} rows whose class train has: {unseen:,} carry a class train "
                "never has (L003), which no model trained on train can predict (accuracies "
                "count them as wrong)"
            )
    if x_ev is not None:
        fit_args = (x_tr, y_tr, [at[c] for c in numeric if c in at], [at[c] for c in text])

        def cv_on_train() -> list[dict]:
            x, y, num, txt = fit_args
            with one_blas_thread(), np.errstate(over="ignore", invalid="ignore"):
                cv = _folds(task, y)[0]
                return fit(x, y, None, None, numeric=num, text=txt, cv=cv, fit_cap=fit_cap)[0]

        out.cv_on_train = cv_on_train
    if float_classes is not None:
        values, counts = np.unique(original, return_counts=True)
        major = _py(values[np.argmax(counts)])
        out.models[0]["description"] = f"always predicts {major!r}"
    return out


def _names(columns: list[str], shown: int = 10) -> str:
    text = ", ".join(columns[:shown])
    return text + (f" (+{len(columns) - shown} more)" if len(columns) > shown else "")


def _folds(task: str, y: np.ndarray):
    """(the cross-validation splitter, a note when the folds cannot be stratified)."""
    from datavet.linear import KFold, StratifiedKFold

    if task == "classification":
        smallest = int(_unique_counts(y)[1].min())
        if smallest >= FOLDS:
            return StratifiedKFold(FOLDS, SEED), None
        note = f"plain (unstratified) folds: a class has only {smallest} row(s)"
        return KFold(min(FOLDS, len(y)), SEED), note
    return KFold(min(FOLDS, len(y)), SEED), None


def expectation(b: Baselines) -> str | None:
    """'A network should start near X and must get below Y (prior) and Z (linear)'."""
    if b.skipped or not b.models:
        return None
    if b.task == "classification":
        lin = b.metric("linear", "log_loss")
        pri = b.metric("prior", "log_loss")
        start = b.initial_loss["uniform_logits"]
        if lin is None or pri is None:
            return None
        return (
            f"A network should start near log loss {start:.3f} (ln {b.initial_loss['classes']}, "
            f"uniform logits; {b.initial_loss['prior_bias']:.3f} with the output bias set to the "
            f"class prior) and must get below {pri:.3f} (class prior) and {lin:.3f} (linear)."
        )
    lin, mean = b.metric("linear", "mse"), b.metric("mean", "mse")
    return (
        f"A network should start near MSE {b.initial_loss['zero_output']:.4g} (zero output; "
        f"{b.initial_loss['mean_bias']:.4g} with the output bias at the mean) and must get below "
        f"{mean:.4g} (mean) and {lin:.4g} (linear)."
    )
