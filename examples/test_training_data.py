"""pytest: data checks beside the unit tests, with datavet.testing.assert_clean.

A failing check prints each finding as the assertion message, and it shows up in pytest's own
JUnit XML (--junitxml) like any other test. Run: pytest examples/test_training_data.py
"""

from __future__ import annotations

import os
from pathlib import Path

from datavet.testing import assert_clean

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
TRAIN = Path(os.environ.get("DATAVET_TRAIN", SAMPLE / "clean_train.parquet"))
TEST = Path(os.environ.get("DATAVET_TEST", SAMPLE / "clean_test.parquet"))


def test_training_data_is_clean():
    assert_clean(TRAIN, TEST, target="label")


def test_no_missing_values_even_as_warnings():
    assert_clean(TRAIN, TEST, target="label", select=["V001", "V002", "V003"], fail_on="info")
