"""The baselines' linear models in NumPy: the same preprocessing, folds and objectives as the
scikit-learn pipeline they replace, without importing scikit-learn or SciPy.

On a few hundred rows the fits take milliseconds, while ``import sklearn.linear_model`` costs
about a second (and SciPy most of another): the import, not the fit, was the cost of the
baselines on a small file. This module reproduces, step for step:

- ``KFold`` / ``StratifiedKFold`` with ``shuffle=True`` and a seed: the same folds, row for row
  (the same ``RandomState`` draws in the same order);
- ``SimpleImputer(strategy="median", add_indicator=True, keep_empty_features=True)`` then
  ``StandardScaler()`` on numeric columns; ``SimpleImputer(strategy="constant",
  fill_value="<missing>")`` then ``OneHotEncoder(handle_unknown="ignore")`` on text columns;
- ``LogisticRegression(C=1.0)`` (binary: one weight vector; more classes: multinomial) fitted by
  L-BFGS on the same objective (mean log loss plus ``||W||^2 / (2 C n)``, intercept not
  penalised), and ``Ridge(alpha=1.0)`` solved exactly.

The objective is strictly convex, so a fit that converges lands on scikit-learn's optimum; the
tests compare the metrics with scikit-learn's on real tables. Where scikit-learn stops at its
iteration cap (many classes, many encoded columns), both stop near the optimum, not on it.
"""

from __future__ import annotations

import numpy as np

from datavet._lazy import pandas as pd

MISSING_TEXT = "<missing>"
MIN_ITER = 15  # solver iterations a cost-capped fit still gets


# -- folds ---------------------------------------------------------------------------------


class KFold:
    """scikit-learn's ``KFold(n_splits, shuffle=True, random_state=seed)``."""

    def __init__(self, n_splits: int, seed: int = 0) -> None:
        self.n_splits, self.seed = n_splits, seed

    def get_n_splits(self) -> int:
        return self.n_splits

    def split(self, x, y=None):
        n = len(x)
        order = np.arange(n)
        np.random.RandomState(self.seed).shuffle(order)
        sizes = np.full(self.n_splits, n // self.n_splits, dtype=int)
        sizes[: n % self.n_splits] += 1
        start = 0
        for size in sizes:
            mask = np.zeros(n, dtype=bool)
            mask[order[start : start + size]] = True
            start += size
            yield np.flatnonzero(~mask), np.flatnonzero(mask)


class StratifiedKFold(KFold):
    """scikit-learn's ``StratifiedKFold(n_splits, shuffle=True, random_state=seed)``: each
    class dealt round-robin over the folds, then the fold labels of each class shuffled."""

    def split(self, x, y=None):
        y = np.asarray(y)
        _, first, inverse = np.unique(y, return_index=True, return_inverse=True)
        _, perm = np.unique(first, return_inverse=True)  # classes by order of appearance
        encoded = perm[inverse.ravel()]
        n_classes = len(first)
        ordered = np.sort(encoded)
        allocation = np.asarray(
            [
                np.bincount(ordered[i :: self.n_splits], minlength=n_classes)
                for i in range(self.n_splits)
            ]
        )
        rng = np.random.RandomState(self.seed)
        folds = np.empty(len(y), dtype="i")
        for k in range(n_classes):
            labels = np.arange(self.n_splits).repeat(allocation[:, k])
            rng.shuffle(labels)
            folds[encoded == k] = labels
        for i in range(self.n_splits):
            yield np.flatnonzero(folds != i), np.flatnonzero(folds == i)


# -- preprocessing -------------------------------------------------------------------------


def _text_block(x) -> list[np.ndarray]:
    """The text columns as object arrays, every missing value (None, NaN) as ``<missing>``
    (integer codes as they are)."""
    out = []
    for col in x:
        if np.asarray(col).dtype.kind in "iu":
            out.append(np.asarray(col))
            continue
        values = np.asarray(col, dtype=object)
        missing = pd.isna(values)
        if missing.any():
            values = values.copy()
            values[missing] = MISSING_TEXT
        out.append(values)
    return out


class Rows:
    """Feature rows as arrays, which the folds slice without pandas: the numeric block (NaN for
    a missing value) and each text column as integer codes (a missing value is a code of its
    own: scikit-learn's constant ``<missing>`` category). ``rows.iloc[idx]`` is ``rows[idx]``,
    as for a DataFrame."""

    def __init__(self, num: np.ndarray, codes: list[np.ndarray]) -> None:
        self.num, self.codes = num, codes

    def __len__(self) -> int:
        return self.num.shape[0]

    @property
    def iloc(self) -> Rows:
        return self

    def __getitem__(self, idx) -> Rows:
        return Rows(self.num[idx], [c[idx] for c in self.codes])


def to_rows(frames: list, numeric: list[int], text: list[int]) -> list[Rows | None]:
    """DataFrames (train, then the evaluation split or None) as :class:`Rows`, the columns at
    positions ``numeric`` as numbers and those at ``text`` coded alike in every frame."""
    present = [f for f in frames if f is not None]
    nums = [
        f.iloc[:, numeric].to_numpy(dtype=float) if numeric else np.empty((len(f), 0))
        for f in present
    ]
    sizes = np.cumsum([len(f) for f in present])[:-1]
    codes: list[list[np.ndarray]] = [[] for _ in present]
    for j in text:
        values = np.concatenate([f.iloc[:, j].to_numpy(dtype=object) for f in present])
        coded, _ = pd.factorize(values, use_na_sentinel=False)
        for out, part in zip(codes, np.split(coded.astype(np.int64), sizes), strict=True):
            out.append(part)
    made = iter([Rows(n, c) for n, c in zip(nums, codes, strict=True)])
    return [None if f is None else next(made) for f in frames]


class Encoder:
    """Impute + standardise numeric columns (with missing indicators), one-hot text columns
    (text as values, or as the integer codes of :class:`Rows`)."""

    def fit(self, num: np.ndarray, text: list[np.ndarray]) -> Encoder:
        missing = np.isnan(num)
        self.indicators = np.flatnonzero(missing.any(axis=0))
        with np.errstate(all="ignore"):
            med = np.nanmedian(num, axis=0) if num.shape[1] and len(num) else np.zeros(num.shape[1])
        self.medians = np.where(np.isnan(med), 0.0, med)  # all missing: 0 (keep_empty_features)
        block = self._numeric(num)
        self.mean = block.mean(axis=0) if len(block) else np.zeros(block.shape[1])
        var = block.var(axis=0) if len(block) else np.ones(block.shape[1])
        scale = np.sqrt(var)
        # StandardScaler leaves (near-)constant columns unscaled
        tiny = var <= 10 * np.finfo(float).eps * np.maximum(np.abs(self.mean) ** 2, 1.0)
        self.scale = np.where(tiny | (scale == 0), 1.0, scale)
        # the levels seen in the fit rows (OneHotEncoder's categories; their order does not
        # change the fitted model, only the order of its weights)
        self.categories = [
            np.unique(col)
            if np.asarray(col).dtype.kind in "iu"
            else pd.Index(np.sort(pd.unique(col).astype(str)), dtype=object)
            for col in _text_block(text)
        ]
        return self

    def keys(self) -> list[tuple]:
        """What each encoded column is (a number, its missing indicator, a text level), to
        carry weights from one fit to the next when their columns differ."""
        out: list[tuple] = [("num", i) for i in range(len(self.medians))]
        out += [("missing", int(i)) for i in self.indicators]
        for j, cats in enumerate(self.categories):
            out += [("text", j, v) for v in cats.tolist()]
        return out

    def _numeric(self, num: np.ndarray) -> np.ndarray:
        missing = np.isnan(num)
        filled = np.where(missing, self.medians, num)
        return np.hstack([filled, missing[:, self.indicators].astype(float)])

    def transform(self, num: np.ndarray, text: list[np.ndarray]) -> np.ndarray:
        parts = [(self._numeric(num) - self.mean) / self.scale]
        for cats, col in zip(self.categories, _text_block(text), strict=True):
            if isinstance(cats, np.ndarray):  # integer codes
                codes = np.searchsorted(cats, col).clip(0, max(len(cats) - 1, 0))
                codes = np.where(cats[codes] == col, codes, -1) if len(cats) else codes - 1
            else:
                codes = cats.get_indexer(pd.Index(col, dtype=object))
            hit = codes >= 0
            onehot = np.zeros((len(col), len(cats)))
            onehot[np.flatnonzero(hit), codes[hit]] = 1.0  # unseen values: all zeros
            parts.append(onehot)
        return np.hstack(parts) if parts else np.empty((len(num), 0))


# -- models --------------------------------------------------------------------------------


def _lbfgs(fun, w: np.ndarray, max_iter: int, gtol: float, memory: int = 10) -> np.ndarray:
    """Minimise ``fun`` (returning value and gradient) from ``w`` by L-BFGS with a backtracking
    (Armijo) line search; stops when every gradient component is within ``gtol``."""
    f, g = fun(w)
    history: list[tuple[np.ndarray, np.ndarray, float]] = []
    for _ in range(max_iter):
        if not np.isfinite(f) or np.max(np.abs(g), initial=0.0) <= gtol:
            break
        q = g.copy()
        alphas = []
        for s, y, rho in reversed(history):
            a = rho * (s @ q)
            alphas.append(a)
            q -= a * y
        if history:
            s, y, _ = history[-1]
            q *= (s @ y) / (y @ y)
        else:
            q /= max(1.0, float(np.linalg.norm(g)))
        for (s, y, rho), a in zip(history, reversed(alphas), strict=True):
            q += s * (a - rho * (y @ q))
        d = -q
        slope = float(g @ d)
        if slope >= 0:  # not a descent direction (numerical trouble): restart on the gradient
            history.clear()
            d, slope = -g, -float(g @ g)
        step = 1.0
        while True:
            w_new = w + step * d
            f_new, g_new = fun(w_new)
            if f_new <= f + 1e-4 * step * slope or step < 1e-12:
                break
            step *= 0.5
        s, y = w_new - w, g_new - g
        sy = float(s @ y)
        if sy > 1e-12 * float(y @ y):
            history.append((s, y, 1.0 / sy))
            if len(history) > memory:
                history.pop(0)
        if f - f_new <= 1e-14 * max(abs(f), abs(f_new), 1.0):
            w, f, g = w_new, f_new, g_new
            break
        w, f, g = w_new, f_new, g_new
    return w


class Logistic:
    """``LogisticRegression(C=C)``'s model: binary with one weight vector, else multinomial."""

    def __init__(
        self, C: float = 1.0, max_iter: int = 100, gtol: float = 1e-4, max_work: int = 0
    ) -> None:
        self.C, self.max_iter, self.gtol, self.max_work = C, max_iter, gtol, max_work

    def fit(
        self,
        x: np.ndarray,
        y: np.ndarray,
        warm: Logistic | None = None,
        warm_columns: np.ndarray | None = None,
    ) -> Logistic:
        """Fit on ``x``, ``y``, starting from ``warm``'s weights (the previous fold's fit: the
        optimum is the same, it is reached in fewer iterations) for the classes both know and
        the columns ``warm_columns`` maps (each column's index in ``warm``, -1 for none;
        default: the same columns)."""
        self.classes_, codes = np.unique(y, return_inverse=True)
        codes = codes.ravel()
        n, d = x.shape
        k = 1 if len(self.classes_) == 2 else len(self.classes_)
        lam = 1.0 / (self.C * n)
        if k == 1:
            t = codes.astype(float)

            def fun(w):
                z = x @ w[:d] + w[d]
                loss = np.logaddexp(0.0, z) - t * z
                r = _sigmoid(z) - t
                grad = np.empty(d + 1)
                grad[:d] = x.T @ r / n + lam * w[:d]
                grad[d] = r.mean()
                return loss.mean() + 0.5 * lam * (w[:d] @ w[:d]), grad

        else:
            # classes x rows: the per-row reductions run along the long axis (fast)
            xt = np.ascontiguousarray(x.T)
            onehot = np.zeros((k, n))
            onehot[codes, np.arange(n)] = 1.0
            true = codes * n + np.arange(n)  # each row's own class in the flat k x n scores

            def fun(w):
                wm = w.reshape(d + 1, k)
                z = wm[:d].T @ xt + wm[d][:, None]
                top = z.max(axis=0)
                e = np.exp(z - top)
                total = e.sum(axis=0)
                loss = np.log(total) + top - z.ravel()[true]
                r = e / total - onehot
                grad = np.empty((d + 1, k))
                grad[:d] = (r @ x).T / n + lam * wm[:d]
                grad[d] = r.mean(axis=1)
                return loss.mean() + 0.5 * lam * np.sum(wm[:d] ** 2), grad.ravel()

        w0 = np.zeros((d + 1, k))
        if warm is not None and (k == 1) == (warm.coef_.shape[0] == 1):
            cols = np.arange(d) if warm_columns is None else np.asarray(warm_columns)
            if warm_columns is not None or warm.coef_.shape[1] == d:
                rows = np.flatnonzero(cols >= 0)
                if k == 1:
                    if np.array_equal(warm.classes_, self.classes_):
                        w0[rows, 0] = warm.coef_[0, cols[rows]]
                        w0[d, 0] = warm.intercept_[0]
                else:  # the classes both fits know start from the last fit's weights
                    at = np.searchsorted(warm.classes_, self.classes_)
                    at = at.clip(0, len(warm.classes_) - 1)
                    known = np.flatnonzero(warm.classes_[at] == self.classes_)
                    w0[np.ix_(rows, known)] = warm.coef_[np.ix_(at[known], cols[rows])].T
                    w0[d, known] = warm.intercept_[at[known]]
        max_iter = self.max_iter
        if self.max_work:  # the fit's cost bounded: iterations x rows x weights
            max_iter = max(MIN_ITER, min(max_iter, self.max_work // max(n * (d + 1) * k, 1)))
        self.n_iter_cap = max_iter
        w = _lbfgs(fun, w0.ravel(), max_iter, self.gtol)
        wm = w.reshape(d + 1, k)
        self.coef_, self.intercept_ = wm[:d].T, wm[d]
        return self

    def decision_function(self, x: np.ndarray) -> np.ndarray:
        z = x @ self.coef_.T + self.intercept_
        return z[:, 0] if z.shape[1] == 1 else z

    def predict(self, x: np.ndarray) -> np.ndarray:
        z = self.decision_function(x)
        return self.classes_[(z > 0).astype(int) if z.ndim == 1 else z.argmax(axis=1)]

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        z = self.decision_function(x)
        if z.ndim == 1:
            p = _sigmoid(z)
            return np.column_stack([1.0 - p, p])
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    out = np.empty_like(z)
    pos = z >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    ez = np.exp(z[~pos])
    out[~pos] = ez / (1.0 + ez)
    return out


class RidgeModel:
    """``Ridge(alpha)`` with an intercept: the centred normal equations, solved exactly."""

    def __init__(self, alpha: float = 1.0) -> None:
        self.alpha = alpha

    def fit(self, x: np.ndarray, y: np.ndarray) -> RidgeModel:
        xm, ym = x.mean(axis=0), float(np.mean(y))
        xc = x - xm
        gram = xc.T @ xc
        gram[np.diag_indices_from(gram)] += self.alpha
        try:
            self.coef_ = np.linalg.solve(gram, xc.T @ (y - ym))
        except np.linalg.LinAlgError:
            self.coef_ = np.linalg.lstsq(gram, xc.T @ (y - ym), rcond=None)[0]
        self.intercept_ = ym - float(xm @ self.coef_)
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        return x @ self.coef_ + self.intercept_


class Pipeline:
    """Encoder + model on a DataFrame whose columns ``numeric`` / ``text`` (positions) are the
    features: the scikit-learn pipeline's ``fit`` / ``predict`` / ``predict_proba`` /
    ``classes_``."""

    def __init__(
        self, task: str, numeric: list[int], text: list[int], max_iter: int = 100, max_work: int = 0
    ):
        self.numeric, self.text = numeric, text
        if task == "classification":
            self.model = Logistic(max_iter=max_iter, max_work=max_work)
        else:
            self.model = RidgeModel()

    def _split(self, frame) -> tuple[np.ndarray, list[np.ndarray]]:
        if isinstance(frame, Rows):
            return frame.num, frame.codes
        num = frame.iloc[:, self.numeric].to_numpy(dtype=float) if self.numeric else None
        if num is None:
            num = np.empty((len(frame), 0))
        text = [frame.iloc[:, j].to_numpy(dtype=object) for j in self.text]
        return num, text

    def fit(self, frame, y: np.ndarray, warm: Pipeline | None = None) -> Pipeline:
        num, text = self._split(frame)
        self.encoder = Encoder().fit(num, text)
        x = self.encoder.transform(num, text)
        if isinstance(self.model, Logistic):
            if warm is None:
                self.model.fit(x, y)
            else:  # the last fold's weights are a start for this one, column by column
                index = {key: i for i, key in enumerate(warm.encoder.keys())}
                cols = np.array([index.get(key, -1) for key in self.encoder.keys()], dtype=np.int64)
                self.model.fit(x, y, warm=warm.model, warm_columns=cols)
        else:
            self.model.fit(x, y)
        return self

    def _x(self, frame) -> np.ndarray:
        """The encoded rows of ``frame`` (kept for the next call: ``predict`` and then
        ``predict_proba`` on the same rows encode them once)."""
        last = getattr(self, "_last", None)
        if last is not None and last[0] is frame:
            return last[1]
        x = self.encoder.transform(*self._split(frame))
        self._last = (frame, x)
        return x

    @property
    def classes_(self) -> np.ndarray:
        return self.model.classes_

    def predict(self, frame) -> np.ndarray:
        return self.model.predict(self._x(frame))

    def predict_proba(self, frame) -> np.ndarray:
        return self.model.predict_proba(self._x(frame))
