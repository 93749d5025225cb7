"""V004 mixed-types: a text column whose values are mostly numbers, with some text among them.

A value "reads as a number" when it matches ints, decimals, exponents, ``inf`` or ``nan``
("007", "1e3", " 12 ", "1_000"); missing values are neither numbers nor text. The rule fires when
numbers are at least ``min_numeric`` (50%) of the non-missing values and some text remains; the
examples are the rows of the first distinct text values.
"""

from __future__ import annotations

import pandas as pd
import pytest

import datavet
from datavet import Severity

NAN = float("nan")


def run(train, test=None, **kw):
    return datavet.audit(train, test, target="label", select="V004", **kw)


def labels(n: int) -> list[int]:
    return [i % 2 for i in range(n)]


def test_csv_column_of_numbers_with_marker_strings(tmp_path):
    values = ["1.5", "2", "?", "3", "n/a", "unknown", "4", "?", "5e2", "-6"]
    path = tmp_path / "train.csv"
    lines = ["x,y,c,label"] + [
        f"{v},{i * 0.5},{'abc'[i % 3]},{i % 2}" for i, v in enumerate(values)
    ]
    path.write_text("\n".join(lines) + "\n")
    report = datavet.audit(path, target="label", select="V004")
    # "n/a" is one of the CSV reader's missing-value markers: it is missing, not text. That leaves
    # 9 present values: 6 numbers (1.5, 2, 3, 4, 5e2, -6) and 3 text ("?", "unknown", "?").
    (f,) = report.findings  # y (floats) and c (categories) are quiet
    assert (f.code, f.name, f.severity) == ("V004", "mixed-types", Severity.WARNING)
    assert f.split == "train" and f.columns == ("x",)
    assert f.n_affected == 3
    assert f.examples == (2, 5)  # first row of each distinct text value: '?' row 2, 'unknown' 5
    assert f.metrics["numeric"] == 6 and f.metrics["text"] == 3
    assert f.metrics["numeric_fraction"] == pytest.approx(6 / 9)
    assert f.message == (
        "Column 'x' in train mixes numbers and text: 6 values (66.7%) read as numbers and 3 do "
        "not, e.g. '?' (row 2), 'unknown' (row 5)."
    )
    assert f.hint and "na_values" in f.hint
    (x,) = [c for c in report.datasets["train"]["columns"] if c["name"] == "x"]
    assert x["kind"] == "string" and x["nan"] == 1
    assert report.outcomes[0].status.value == "failed"


def test_pandas_object_column_of_python_ints_and_strings():
    train = pd.DataFrame(
        {
            "x": pd.Series([10, 20, "n/a", 30, "?", "n/a", 40, None, 2.5], dtype=object),
            "label": labels(9),
        }
    )
    # None is missing; in a DataFrame "n/a" is an ordinary string. Present: 8 values, numbers
    # 10, 20, 30, 40, 2.5 (5) and text 'n/a', '?', 'n/a' (3).
    (f,) = run(train).findings
    assert f.split == "train" and f.columns == ("x",)
    assert f.n_affected == 3 and f.examples == (2, 4)
    assert f.metrics["numeric"] == 5 and f.metrics["text"] == 3
    assert f.metrics["numeric_fraction"] == pytest.approx(5 / 8)
    assert "5 values (62.5%) read as numbers and 3 do not" in f.message
    assert "e.g. 'n/a' (row 2), '?' (row 4)." in f.message


def test_examples_are_the_first_five_distinct_text_values():
    x = ["1"] * 10 + ["a", "b", "a", "c", "d", "e", "f"]
    (f,) = run(pd.DataFrame({"x": x, "label": labels(len(x))})).findings
    assert f.n_affected == 7  # every text value counts, repeats included
    assert f.examples == (10, 11, 13, 14, 15)  # a, b, c, d, e; the second 'a' and 'f' are not
    assert "'a' (row 10), 'b' (row 11), 'c' (row 13), 'd' (row 14), 'e' (row 15)." in f.message
    assert "'f'" not in f.message


def test_quiet_on_a_purely_categorical_text_column():
    train = pd.DataFrame({"x": ["red", "blue", "green", "red", None], "label": labels(5)})
    report = run(train)
    assert report.findings == []
    assert report.outcomes[0].status.value == "passed"


def test_quiet_when_every_string_reads_as_a_number():
    x = ["007", "1e3", "-2.5", " 12 ", "1_000", ".5", "+3", "inf", "-Infinity", "NaN", "1E-3"]
    report = run(pd.DataFrame({"x": x, "label": labels(len(x))}))
    assert report.findings == []
    assert report.outcomes[0].status.value == "passed"


def test_strings_that_do_not_read_as_numbers():
    # thousands separators, units, hex and a bare sign are text
    x = ["1", "2", "3", "4", "5", "1,234", "12 kg", "0x1F", "-"]
    (f,) = run(pd.DataFrame({"x": x, "label": labels(len(x))})).findings
    assert f.metrics["numeric"] == 5 and f.n_affected == 4
    assert f.examples == (5, 6, 7, 8)


@pytest.mark.parametrize(
    "x, fires",
    [
        (["1", "2", "a", "b"], True),  # numbers exactly 50% of present values
        (["1", "2", "a", "b", None, None], True),  # missing values do not count
        (["1", "2", "a", "b", "c"], False),  # 40%
        (["red", "blue", "3", "green"], False),  # one number among words: a categorical column
    ],
)
def test_the_50_percent_threshold(x, fires):
    findings = run(pd.DataFrame({"x": x, "label": labels(len(x))})).findings
    assert len(findings) == (1 if fires else 0)
    if fires:
        (f,) = findings
        assert f.metrics["numeric_fraction"] == 0.5 and f.n_affected == 2


def test_threshold_is_configurable():
    train = pd.DataFrame({"x": ["1", "2", "3", "a"], "label": labels(4)})  # 75% numbers
    assert len(run(train).findings) == 1
    strict = run(train, thresholds={"V004": {"min_numeric": 0.8}})
    assert strict.findings == []


def test_test_split_is_checked_too():
    train = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "label": labels(4)})
    test = pd.DataFrame({"x": ["5", "?", "6", "7", "?"], "label": labels(5)})
    (f,) = run(train, test).findings
    assert f.split == "test" and f.columns == ("x",)
    assert f.n_affected == 2 and f.examples == (1,)  # '?' twice, shown once
    assert "Column 'x' in test" in f.message and "3 values (60.0%)" in f.message


def test_both_splits_give_one_finding_each():
    train = pd.DataFrame({"x": ["1", "?", "2"], "label": labels(3)})
    test = pd.DataFrame({"x": ["x", "3", "4", "5"], "label": labels(4)})
    found = {f.split: (f.n_affected, f.examples) for f in run(train, test).findings}
    assert found == {"train": (1, (1,)), "test": (1, (0,))}


def test_runs_without_a_target():
    train = pd.DataFrame({"x": ["1", "2", "oops"], "y": [1.0, 2.0, 3.0]})
    (f,) = datavet.audit(train, select="V004").findings
    assert f.columns == ("x",) and f.examples == (2,)


def test_the_target_column_is_checked_too():
    # The rule's docstring: "Every text column of every split (target included)". A label column
    # of numbers with a stray "?" is the typical case.
    train = pd.DataFrame(
        {"x": [1.0, 2.0, 3.0, 4.0, 5.0], "label": pd.Series([0, 1, "?", 1, 0], dtype=object)}
    )
    findings = run(train).findings
    assert [(f.columns, f.n_affected, f.examples) for f in findings] == [(("label",), 1, (2,))]


@pytest.mark.parametrize("batch_rows", [3, 4, 5])
def test_batching_gives_the_same_result(tmp_path, batch_rows):
    values = ["1", "?", "2", "3", "n/a", "x", "4", "?", "5", "y", "6", "7"]
    path = tmp_path / "train.csv"
    path.write_text("x,label\n" + "".join(f"{v},{i % 2}\n" for i, v in enumerate(values)))
    whole = datavet.audit(path, target="label", select="V004").findings
    batched = datavet.audit(path, target="label", select="V004", batch_rows=batch_rows).findings
    (f,) = whole
    # 11 present ('n/a' is missing): 7 numbers, text '?' x2, 'x', 'y'
    assert f.metrics["numeric"] == 7 and f.n_affected == 4
    assert f.examples == (1, 5, 9)
    assert batched == whole


def test_a_batch_of_text_only_keeps_its_examples():
    # Rows 3-5 are text only: with batch_rows=3 one batch has no number at all, and its text
    # values must still be counted and shown.
    x = ["1", "2", "3", "?", "x", "y", "4", "5", "6"]
    train = pd.DataFrame({"x": x, "label": labels(9)})
    whole = run(train).findings
    batched = run(train, batch_rows=3).findings
    (f,) = whole
    assert f.n_affected == 3 and f.examples == (3, 4, 5)
    assert "e.g. '?' (row 3), 'x' (row 4), 'y' (row 5)." in f.message
    assert batched == whole
