"""A scikit-learn step that audits the data a ``Pipeline`` is fitted on.

>>> from sklearn.pipeline import make_pipeline
>>> from sklearn.linear_model import LogisticRegression
>>> from datavet.sklearn import AuditStep
>>> model = make_pipeline(AuditStep(), LogisticRegression())  # doctest: +SKIP
>>> model.fit(X_train, y_train)  # raises datavet.AuditFailed on bad training data  # doctest: +SKIP
"""

from __future__ import annotations

try:
    from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
except ImportError as exc:
    raise ImportError(
        "datavet.sklearn is a scikit-learn Pipeline step and needs scikit-learn: "
        "pip install 'datavet[sklearn]'"
    ) from exc

import numpy as np

from datavet.api import audit
from datavet.errors import AuditFailed

__all__ = ["AuditFailed", "AuditStep"]


class AuditStep(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Audit what ``fit`` receives; raise :class:`datavet.AuditFailed` when findings reach
    ``fail_on``. ``transform`` passes its input through unchanged, and the step is transparent
    to the rest of the pipeline: ``get_feature_names_out`` gives its input's names and
    ``set_output(transform="pandas")`` works as for any transformer. A scipy sparse matrix is
    refused (``datavet.UsageError``): pass ``X.toarray()``.

    Parameters
    ----------
    fail_on : {"info", "warning", "error"}
        The severity at or above which ``fit`` refuses the data.
    select, ignore : str or list of str, optional
        Rules to run / leave out, as in :func:`datavet.audit`.
    thresholds, severity : mapping, optional
        Per-rule threshold and severity overrides, as in :func:`datavet.audit`.
    baselines : bool
        Fit the baseline models (B001, B002); off by default, since the pipeline fits a model.
        B003 and B004 (one feature at a time) run either way.

    Attributes
    ----------
    report_ : datavet.Report
        The report of the last ``fit``.
    n_features_in_ : int
        The number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        Their names, when ``X`` has string column names (a DataFrame).

    Examples
    --------
    >>> import numpy as np
    >>> from datavet.sklearn import AuditStep
    >>> X = np.array([[1.0], [np.nan], [3.0], [4.0]]); y = np.array([0, 1, 0, 1])
    >>> AuditStep().fit(X, y)
    Traceback (most recent call last):
    ...
    datavet.errors.AuditFailed: datavet audit failed: 1 finding(s) at or above error (V001)
    """

    def __init__(
        self,
        *,
        fail_on: str = "error",
        select=None,
        ignore=None,
        thresholds=None,
        severity=None,
        baselines: bool = False,
    ) -> None:
        self.fail_on = fail_on
        self.select = select
        self.ignore = ignore
        self.thresholds = thresholds
        self.severity = severity
        self.baselines = baselines

    def fit(self, X, y=None, **fit_params):
        data = X if y is None else (X, y)
        self.report_ = audit(
            data,
            target=None if y is None else _label_name(X, y),
            select=self.select,
            ignore=self.ignore,
            thresholds=self.thresholds,
            severity=self.severity,
            fail_on=self.fail_on,
            baselines=self.baselines,
        )
        self.report_.raise_for_findings(self.fail_on)
        shape = getattr(X, "shape", None)
        if shape is not None and len(shape) == 2:
            self.n_features_in_ = int(shape[1])
        names = getattr(X, "columns", None)
        if names is not None and len(names) and all(isinstance(c, str) for c in names):
            self.feature_names_in_ = np.asarray(list(names), dtype=object)
        elif hasattr(self, "feature_names_in_"):  # refitted on data without names
            del self.feature_names_in_
        return self

    def transform(self, X):
        return X

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # NaN is what it looks for; never refuse it first
        return tags


def _label_name(X, y) -> str:
    """y's own name, unless a feature has it (``y = X["a"] > 0`` keeps the name "a")."""
    taken = {str(c) for c in getattr(X, "columns", ())}
    own = getattr(y, "name", None)
    for name in (own, "target", "label", "y"):
        if name is not None and str(name) not in taken:
            return str(name)
    return "__target__"
