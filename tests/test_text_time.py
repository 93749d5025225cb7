"""A data frame's text time column (``pd.read_csv`` without ``parse_dates``) is read as ISO-8601
dates/times for S008, as a CSV reader reads them; text that is not dates is left as it is."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import datavet


def _frames(when):
    rng = np.random.default_rng(0)
    n = len(when)
    df = pd.DataFrame({"when": when, "x": rng.normal(size=n), "label": rng.integers(0, 2, n)})
    train = df.sample(frac=0.8, random_state=0)
    return train, df.drop(train.index)


DAYS = pd.date_range("2020-01-01", periods=400, freq="D")


@pytest.mark.parametrize(
    "when",
    [
        DAYS.strftime("%Y-%m-%d"),
        DAYS.strftime("%Y-%m-%dT%H:%M:%S"),
        DAYS.strftime("%Y-%m-%d %H:%M"),
    ],
)
def test_iso_text_is_read_as_times(when):
    train, test = _frames(list(when))
    report = datavet.audit(train, test, target="label", time="when", select="S008")
    (f,) = report.findings
    assert f.code == "S008" and f.n_affected == len(test)
    assert "newest train row (2021-02-03 00:00:00)" in f.message
    assert any("'when' held text: read as ISO-8601" in n for n in report.notes)


def test_offsets_and_values_that_are_not_dates():
    when = (DAYS.strftime("%Y-%m-%dT%H:%M:%S") + "+01:00").to_numpy(dtype=object)
    when[::50] = "unknown"  # 8 rows
    train, test = _frames(when)
    report = datavet.audit(train, test, target="label", time="when", select="S008,V001")
    codes = {f.code: f for f in report.findings}
    assert "S008" in codes  # UTC wall time: 2020-01-01T00:00+01:00 is 2019-12-31 23:00
    missing = sum(f.n_affected for f in report.findings if f.code == "V001")
    assert missing == 8
    (note,) = [n for n in report.notes if "ISO-8601" in n]
    assert "read as missing" in note


def test_text_that_is_not_iso_dates_stays_text_and_s008_says_why():
    train, test = _frames(list(DAYS.strftime("%d/%m/%Y")))
    report = datavet.audit(train, test, target="label", time="when", select="S008")
    (o,) = [o for o in report.outcomes if o.code == "S008"]
    assert o.status.value == "skipped" and "not ISO-8601" in o.reason
    assert report.to_dict()["datasets"]["train"]["columns"][0]["dtype"] in (
        "string",
        "large_string",
    )


def test_polars_and_arrow_frames_too():
    pl = pytest.importorskip("polars")
    import pyarrow as pa

    train, test = _frames(list(DAYS.strftime("%Y-%m-%d")))
    for make in (pl.from_pandas, lambda f: pa.Table.from_pandas(f, preserve_index=False)):
        report = datavet.audit(make(train), make(test), target="label", time="when", select="S008")
        assert [f.code for f in report.findings] == ["S008"]


def test_blank_cells_are_missing_not_failed_dates():
    when = DAYS.strftime("%Y-%m-%d").to_numpy(dtype=object)
    when[[3, 7]] = ["", "   "]
    train, test = _frames(when)
    report = datavet.audit(train, test, target="label", time="when", select="S008,V001")
    assert sum(f.n_affected for f in report.findings if f.code == "V001") == 2
    (note,) = [n for n in report.notes if "ISO-8601" in n]
    assert "read as missing" not in note  # blanks are missing values, not dates that failed
