"""V006 numbers-as-text: a text column of numbers written with thousands separators or decimal
commas ("47,617", "1.234.567", "3,5") is reported as what it is, naming the column; IDs, plain
numbers and text with commas are not."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import datavet
from datavet import Severity
from datavet.scan import Profile
from datavet.scan.idlike import id_like_columns
from datavet.scan.numbers import SeparatedNumbers
from datavet.scan.profile import ScanPlan


def run(train, test=None, select="V006", **kw):
    return datavet.audit(train, test, target="label", select=select, **kw)


def frame(**cols) -> pd.DataFrame:
    n = len(next(iter(cols.values())))
    return pd.DataFrame({**cols, "label": [i % 2 for i in range(n)]})


def amounts(n=60):
    rng = np.random.default_rng(0)
    return [f"{v:,}" for v in rng.integers(1_000, 9_000_000, n)]  # "47,617", "1,234,567"


def test_thousands_commas_in_a_csv(tmp_path):
    path = tmp_path / "sales.csv"
    vals = amounts()
    path.write_text(
        "store,amount,label\n" + "".join(f'{i},"{v}",{i % 2}\n' for i, v in enumerate(vals))
    )
    report = run(path)
    (f,) = report.findings
    assert (f.code, f.name, f.severity) == ("V006", "numbers-as-text", Severity.WARNING)
    assert f.columns == ("amount",) and f.split == "train"
    assert f.n_affected == 60
    assert "thousands separators ','" in f.message and repr(vals[0]) in f.message
    assert f.examples[0] == 0
    assert f.hint.startswith("parse with thousands=','")


def test_decimal_commas_in_a_semicolon_file(tmp_path):
    path = tmp_path / "eu.csv"
    path.write_text(
        "x;price;label\n" + "".join(f"{i};{i % 7},{i % 10}5;{i % 2}\n" for i in range(40))
    )
    report = run(path)
    (f,) = report.findings
    assert f.columns == ("price",)
    assert "decimal commas" in f.message
    assert f.hint.startswith("parse with decimal=','")
    assert f.metrics["decimal_comma"] == 40


def test_dotted_thousands_and_european_decimals():
    report = run(frame(v=["1.234.567", "2.000.000,5", "12,75", "7"] * 10))
    (f,) = report.findings
    assert f.metrics["thousands_dot"] == 10 and f.metrics["decimal_comma"] == 20
    assert f.metrics["plain_numbers"] == 10
    assert f.hint.startswith("parse with decimal=',', thousands='.'")


@pytest.mark.parametrize(
    "values",
    [
        [f"user-{i:05d}" for i in range(60)],  # identifiers
        [str(i * 13) for i in range(60)],  # plain numbers as text
        [f"{i}.5" for i in range(60)],  # plain decimals
        [f"Smith, John {i}" for i in range(60)],  # text with commas
        [f"{i}, {i + 1}" for i in range(60)],  # pairs with a space
        ["a,b", "c,d"] * 30,
        ["1.234", "12.500"] * 30,  # plain decimals that look grouped: numbers already
    ],
)
def test_quiet_on_ids_plain_numbers_and_text(values):
    assert run(frame(v=values)).findings == []


def test_quiet_when_most_values_are_not_numbers():
    values = ["1,234"] * 5 + [f"word{i}" for i in range(55)]
    assert run(frame(v=values)).findings == []


def test_not_taken_for_an_identifier():
    """A column of distinct formatted amounts is numbers, not an ID (kept as a feature); a
    column of distinct codes is still an ID."""
    df = frame(amount=amounts(100), code=[f"u{i:04d}" for i in range(100)])
    profile = Profile.of_batch(pa.Table.from_pandas(df).to_batches()[0], 0, ScanPlan(), "train")
    assert id_like_columns(profile, exclude=("label",)) == ["code"]


def test_counts_merge_across_batches():
    df = frame(v=amounts(40) + ["3,5"] * 20 + ["12"] * 20)
    whole = run(df).findings[0]
    pieces = run(df, batch_rows=7).findings[0]
    assert whole.metrics == pieces.metrics and whole.examples == pieces.examples
    a = SeparatedNumbers(decimal_comma=1, examples=((5, "3,5"),))
    b = SeparatedNumbers(thousands_comma=2, examples=((1, "1,000"),))
    c = SeparatedNumbers(thousands_space=3, examples=((9, "1 000"),))
    assert a.merge(b).merge(c) == a.merge(b.merge(c))
    assert a.merge(b).merge(c).count == 6
    assert a.merge(b).examples == ((1, "1,000"), (5, "3,5"))
