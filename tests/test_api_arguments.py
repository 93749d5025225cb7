"""Hostile arguments to ``datavet.audit`` end in a finding, a skip, or a UsageError with a
clear message, never a raw AttributeError/TypeError/ValueError from inside."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet.errors import DatavetError, InputError, UsageError


@pytest.fixture(scope="module")
def named():
    return pd.DataFrame({"x": np.arange(40.0), "label": np.arange(40) % 2})


def test_integer_column_names_from_a_numpy_frame():
    frame = pd.DataFrame(np.random.default_rng(0).random((40, 3)))
    frame[3] = np.arange(40) % 2
    report = datavet.audit(frame, target=3, baselines=False)
    assert report.target == "3"
    report = datavet.audit(frame, target=np.int64(3), group=0, baselines=False)
    assert report.target == "3"
    with pytest.raises(InputError, match="'9' not found"):
        datavet.audit(frame, target=9)


BAD = {
    "tuple target": dict(target=("label",)),
    "list target": dict(target=["label"]),
    "float target": dict(target=1.5),
    "bytes target": dict(target=b"label"),
    "list time": dict(time=["x"]),
    "select int": dict(select=5),
    "select ints": dict(select=[1, 2]),
    "ignore int": dict(ignore=3),
    "fail_on bogus": dict(fail_on="bogus"),
    "fail_on int": dict(fail_on=3),
    "fail_on None": dict(fail_on=None),
    "severity list": dict(severity=["S002"]),
    "severity level": dict(severity={"V001": "fatal"}),
    "severity key": dict(severity={1: "error"}),
    "thresholds list": dict(thresholds=[1]),
    "thresholds not a mapping": dict(thresholds={"L001": 5}),
    "threshold text": dict(thresholds={"L001": {"max_ratio": "x"}}),
    "threshold nan": dict(thresholds={"L001": {"max_ratio": float("nan")}}),
    "threshold negative": dict(thresholds={"L001": {"max_ratio": -5}}),
    "threshold bool": dict(thresholds={"L001": {"max_ratio": True}}),
    "engine": dict(engine="bogus"),
    "sample_rows 0": dict(sample_rows=0),
    "sample_rows text": dict(sample_rows="many"),
    "batch_rows 0": dict(batch_rows=0),
    "batch_rows float": dict(batch_rows=1.5),
    "workers text": dict(workers="x"),
    "workers negative": dict(workers=-1),
    "encoding int": dict(encoding=5),
    "scheduler int": dict(engine="dask", scheduler=5),
    "max_samples 0": dict(max_samples=0),
    "thresholds ratio below 1": dict(thresholds={"L001": {"max_ratio": 0.5}}),
    "thresholds alpha of 1": dict(thresholds={"L002": {"alpha": 1.0}}),
    # raised a bare TypeError, or were accepted and ignored, before
    "per_column_ignores int": dict(per_column_ignores=5),
    "baselines text": dict(baselines="no"),
    "progress text": dict(progress="x"),
    "channel_axis float": dict(channel_axis=2.5),
    "channel_axis text": dict(channel_axis="last"),
    "inputs float": dict(inputs=5.5),
    "task bogus": dict(task="bogus"),
}


@pytest.mark.parametrize("kwargs", list(BAD.values()), ids=list(BAD))
def test_bad_arguments_are_usage_errors(named, kwargs):
    with pytest.raises(UsageError) as info:
        datavet.audit(named, **kwargs)
    name = next(iter(kwargs)) if "scheduler" not in kwargs else "scheduler"
    assert name.removesuffix("s") in str(info.value), str(info.value)  # names the argument


def test_usage_error_is_still_a_value_error(named):
    """Callers that caught ValueError for a bad fail_on keep working."""
    with pytest.raises(ValueError):
        datavet.audit(named, fail_on="bogus")


def test_every_hostile_call_is_a_datavet_error_or_a_report(named):
    for kwargs in BAD.values():
        try:
            datavet.audit(named, **kwargs)
        except DatavetError:
            continue


def test_argument_errors_come_before_any_input_is_opened(tmp_path):
    """A bad argument is reported as such even when the input is bad too."""
    with pytest.raises(UsageError, match="per_column_ignores"):
        datavet.audit(str(tmp_path / "missing.csv"), per_column_ignores=5)


def test_good_flags_and_channel_axes_still_pass(named):
    for kwargs in (
        dict(baselines=False),
        dict(baselines=np.bool_(True)),
        dict(progress=False),
        dict(channel_axis="none"),
        dict(channel_axis=1),
    ):
        assert datavet.audit(named, **kwargs).exit_code() in (0, 1)


def test_no_bare_value_or_type_error_on_user_arguments_in_the_engines():
    """engines/dask.py raised ValueError for an unknown scheduler scheme (caught and re-raised
    as a UsageError); engines raise the project's own errors."""
    import pathlib

    import datavet.engines

    root = pathlib.Path(datavet.engines.__file__).parent
    offenders = [
        f"{p.name}:{i}"
        for p in root.glob("*.py")
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if "raise ValueError" in line or "raise TypeError" in line
    ]
    assert not offenders, offenders


def test_assert_clean_with_nothing_to_audit_is_a_usage_error():
    """It raised a bare TypeError."""
    from datavet.testing import assert_clean

    with pytest.raises(UsageError, match="nothing to audit"):
        assert_clean(None, config=False)
