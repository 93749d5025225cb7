"""Which columns are a row index written with the data (left out of the features), and which
unnamed columns are data someone left unnamed (kept, and audited)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

import datavet
from datavet.scan.idlike import index_columns


def _columns(report) -> list[str]:
    return [c["name"] for c in report.to_dict()["datasets"]["train"]["columns"]]


def test_pandas_index_written_first_is_left_out(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=100), "label": rng.integers(0, 2, 100)})
    frame.to_csv(tmp_path / "t.csv")  # the index as an unnamed first column
    report = datavet.audit(tmp_path / "t.csv", target="label")
    assert _columns(report) == ["a"]
    assert any("index" in n for n in report.notes)


def test_an_unnamed_integer_column_after_a_named_one_is_data(tmp_path):
    rng = np.random.default_rng(1)
    counts = rng.integers(0, 6, 100).astype(object)
    counts[[10, 20, 30]] = ""
    lines = ["age,,income,label"] + [
        f"{rng.integers(20, 60)},{counts[i]},{rng.integers(1000, 5000)},{i % 2}" for i in range(100)
    ]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    report = datavet.audit(tmp_path / "t.csv", target="label", baselines=False)
    assert _columns(report) == ["age", "", "income"]
    (v001,) = [f for f in report.findings if f.code == "V001"]
    assert v001.columns == ("",) and v001.examples == (10, 20, 30)


def test_index_columns_by_position_and_name():
    def fields(*spec):
        return [pa.field(n, t) for n, t in spec]

    i, f = pa.int64(), pa.float64()
    # two unnamed leading levels (a MultiIndex written by to_csv), then data
    assert index_columns(fields(("Unnamed: 0", i), ("Unnamed: 1", i), ("x", f))) == [
        "Unnamed: 0",
        "Unnamed: 1",
    ]
    assert index_columns(fields(("x", f), ("Unnamed: 1", i))) == []
    assert index_columns(fields(("x", f), ("", i), ("y", f))) == []
    # stored index levels and R's row names are recognised wherever they are
    assert index_columns(fields(("x", f), ("__index_level_0__", i))) == ["__index_level_0__"]
    assert index_columns(fields(("x", f), ("rownames", pa.string()))) == ["rownames"]
    # an unnamed float column was never taken for an index
    assert index_columns(fields(("", f), ("x", f))) == []
