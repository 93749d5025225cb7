"""The local engine: threads give the serial result; progress goes to stderr only when asked."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

import datavet
from datavet.engines.local import profile_source
from datavet.engines.plan import plan_tables as _plan
from datavet.engines.progress import Progress
from datavet.sources import open_source


def frame(n=20_000, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 4)), columns=list("abcd"))
    df["d"] = rng.integers(0, 3000, n).astype(float)  # past the exact counter: a sketch
    df.loc[rng.choice(n, 30, replace=False), "a"] = np.nan
    df["label"] = rng.integers(0, 3, n)
    return df


def test_threads_give_exactly_the_serial_profile():
    src = open_source(frame())
    plan = _plan(src, None, "label", 1000)
    serial = profile_source(src, plan, "train", batch_rows=1000, workers=1)
    threaded = profile_source(src, plan, "train", batch_rows=1000, workers=4)
    for name, s in serial.columns.items():
        t = threaded.columns[name]
        assert (s.missing, s.missing_rows, s.min, s.max) == (
            t.missing,
            t.missing_rows,
            t.min,
            t.max,
        )
        assert s.finite == t.finite  # merged in the same order: bit-identical moments
        assert s.values.counts == t.values.counts and s.values.exact == t.values.exact
    assert serial.label.values.counts == threaded.label.values.counts
    np.testing.assert_array_equal(serial.hashes.arrays()[1], threaded.hashes.arrays()[1])
    np.testing.assert_array_equal(serial.sample.positions, threaded.sample.positions)


def test_audit_results_do_not_depend_on_workers():
    df = frame(8000, 1)
    a = datavet.audit(df, target="label", workers=1, batch_rows=500).to_dict()
    b = datavet.audit(df, target="label", workers=3, batch_rows=500).to_dict()
    a.pop("duration_s"), b.pop("duration_s")
    assert a == b


def test_progress_line_counts_rows_and_time_left():
    out = io.StringIO()
    meter = Progress("scanning train", 1000, enabled=True, delay=0.0, stream=out)
    meter.update(250)
    meter.last = 0.0  # allow the next redraw at once
    meter.update(250)
    meter.close()
    text = out.getvalue()
    assert "500 rows of 1,000 (50%)" in text and "left" in text and "rows/s" in text
    assert text.endswith("\n") and "datavet: scanning train: 500 rows in" in text


def test_progress_is_silent_when_not_enabled_or_short():
    out = io.StringIO()
    meter = Progress("x", 10, enabled=False, stream=out)
    meter.update(10)
    meter.close()
    quick = Progress("x", 10, enabled=True, delay=60.0, stream=out)
    quick.update(10)
    quick.close()
    assert out.getvalue() == ""


def test_cli_progress_flag(tmp_path, capsys):
    from datavet.cli import main

    path = tmp_path / "t.parquet"
    frame(3000).to_parquet(path)
    assert main(["audit", str(path), "--no-progress", "--select", "V001"]) == 1
    assert capsys.readouterr().err == ""
