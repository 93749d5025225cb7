"""pandas and NumPy values through the Python API: every column type ends in an audit, a skip
with a reason or an InputError that names the column; never a raw exception. ``(X_df, y)`` pairs
(what ``train_test_split`` returns) keep their column names and dtypes."""

from __future__ import annotations

import decimal

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import train_test_split

import datavet
from datavet.errors import InputError
from datavet.findings import Status

N = 40
ROWS = np.arange(N)

COLUMNS = {
    "ints_beyond_int64": lambda: pd.Series(
        [None if i % 7 == 3 else int(i % 4) * 2**70 for i in ROWS], dtype=object
    ),
    "longdouble": lambda: pd.Series((ROWS % 5).astype(np.longdouble)),
    "decimal_nan": lambda: pd.Series(
        [decimal.Decimal("NaN") if i % 9 == 4 else decimal.Decimal(int(i % 3)) for i in ROWS]
    ),
    "period": lambda: pd.Series(pd.period_range("2020-01", periods=N, freq="M")),
    "interval": lambda: pd.Series(pd.interval_range(0, N)),
    "lone_surrogate": lambda: pd.Series([f"a{i % 3}\ud800" for i in ROWS], dtype=object),
    "categorical": lambda: pd.Series(pd.Categorical([["a", "b", None][i % 3] for i in ROWS])),
    "tz_datetime": lambda: pd.Series(pd.date_range("2020", periods=N, tz="Europe/Paris")),
    "mixed_objects": lambda: pd.Series(
        [[1, "a", [1, 2], None, b"\xff", {"a": 1}][i % 6] for i in ROWS], dtype=object
    ),
    "arrays_2d": lambda: pd.Series([np.zeros((2, 2)) + i % 3 for i in ROWS]),
    "sparse": lambda: pd.Series(pd.arrays.SparseArray(ROWS % 2)),
    "bytes": lambda: pd.Series([[b"a", b"\xff"][i % 2] for i in ROWS]),
    "timedelta": lambda: pd.Series(pd.to_timedelta(ROWS % 3, unit="s")),
}


@pytest.mark.parametrize("role", ["feature", "label"])
@pytest.mark.parametrize("kind", sorted(COLUMNS))
def test_pandas_column_types_audit_without_a_crash(kind, role):
    df = pd.DataFrame({"x": np.random.default_rng(0).normal(size=N)})
    if role == "feature":
        df[kind] = COLUMNS[kind]()
        df["label"] = ROWS % 2
    else:
        df["label"] = COLUMNS[kind]()
    report = datavet.audit(df, target="label")
    crashed = [(o.code, o.reason) for o in report.outcomes if o.status == Status.CRASHED]
    assert not crashed, crashed


def test_values_keep_their_meaning():
    df = pd.DataFrame(
        {k: COLUMNS[k]() for k in ("ints_beyond_int64", "decimal_nan", "lone_surrogate")}
    )
    df["label"] = ROWS % 2
    report = datavet.audit(df, target="label")
    cols = {c["name"]: c for c in report.to_dict()["datasets"]["train"]["columns"]}
    assert cols["ints_beyond_int64"]["kind"] == "numeric"
    assert cols["ints_beyond_int64"]["max"] == pytest.approx(3 * 2.0**70)
    assert cols["decimal_nan"]["nan"] == sum(1 for i in ROWS if i % 9 == 4)  # NaN is missing
    assert cols["lone_surrogate"]["kind"] == "string"
    v001 = {f.columns for f in report.findings if f.code == "V001"}
    assert ("decimal_nan",) in v001 and ("ints_beyond_int64",) in v001


def test_complex_numbers_are_refused_with_the_column_name():
    df = pd.DataFrame({"z": ROWS + 1j, "label": ROWS % 2})
    with pytest.raises(InputError, match="column 'z' holds complex numbers"):
        datavet.audit(df, target="label")
    with pytest.raises(InputError, match="complex"):
        datavet.audit((np.ones((N, 2)) * 1j, ROWS % 2))


def test_structured_and_object_arrays():
    sa = np.zeros(N, dtype=[("a", "f8"), ("b", "i4")])
    sa["a"] = np.random.default_rng(0).normal(size=N)
    report = datavet.audit((sa, ROWS % 2))
    names = [c["name"] for c in report.to_dict()["datasets"]["train"]["columns"]]
    assert names == ["a", "b"]
    assert any(f.code == "F001" and f.columns == ("b",) for f in report.findings)
    obj = np.array([[1, "a"], [2, "b"]] * 10, dtype=object)
    report = datavet.audit((obj, np.arange(20) % 2))
    assert [c["name"] for c in report.to_dict()["datasets"]["train"]["columns"]] == ["x0", "x1"]


def _split():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "const": np.ones(N),
            "city": [["paris", "oslo", "rome"][i % 3] for i in ROWS],
            "v": rng.normal(size=N),
        }
    )
    y = pd.Series(rng.integers(0, 2, N), name="churn")
    return train_test_split(X, y, random_state=0)


def test_dataframe_and_series_pair_keeps_names_and_dtypes():
    x_tr, x_te, y_tr, y_te = _split()
    report = datavet.audit((x_tr, y_tr), (x_te, y_te))
    train = report.to_dict()["datasets"]["train"]
    assert [c["name"] for c in train["columns"]] == ["const", "city", "v"]
    assert {c["name"]: c["kind"] for c in train["columns"]}["city"] == "string"
    assert train["label"]["name"] == "churn"
    assert any(f.code == "F001" and f.columns == ("const",) for f in report.findings)


def test_pair_label_names():
    x_tr, x_te, y_tr, y_te = _split()
    unnamed = datavet.audit((x_tr, y_tr.rename(None)), (x_te, y_te.rename(None)))
    assert unnamed.to_dict()["datasets"]["train"]["label"]["name"] == "target"
    chosen = datavet.audit((x_tr, y_tr), (x_te, y_te), target="y")
    assert chosen.to_dict()["datasets"]["train"]["label"]["name"] == "y"
    arrays = datavet.audit((x_tr[["const", "v"]].to_numpy(), y_tr.to_numpy()))
    train = arrays.to_dict()["datasets"]["train"]
    assert [c["name"] for c in train["columns"]] == ["x0", "x1"]
    assert train["label"]["name"] == "label"
