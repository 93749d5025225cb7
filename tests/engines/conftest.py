"""Shared fixtures of the engine tests."""

from __future__ import annotations

import sys

import pytest


@pytest.fixture(scope="session")
def spark():
    """One real local SparkSession (local[2], 127.0.0.1, no UI) for every Spark test: a JVM
    start costs seconds."""
    from pyspark.sql import SparkSession

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYSPARK_PYTHON", sys.executable)  # the executors run this interpreter
        session = (
            SparkSession.builder.master("local[2]")
            .appName("datavet-tests")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", "4")
            .getOrCreate()
        )
        session.sparkContext.setLogLevel("ERROR")
        try:
            yield session
        finally:
            session.stop()
