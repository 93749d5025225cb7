"""No rule ever crashes, whatever the schema: a property test over random tables.

Each example draws a schema -- a label of one kind (string, bool, int, float, date, categorical,
all-missing, one class, or no label), one to five feature columns of any kind (float with
NaN/inf, int, bool, low- and high-cardinality strings, categorical, dates, timestamps with a time
zone, constant, all-null, a row counter that follows row order, a copy of the label), with or
without a test split, with or without a group and a time column -- writes it as Parquet and
audits it through ``datavet.audit`` on every engine: local, and Dask on a light in-process
``LocalCluster`` shared by the module. Every rule of the registry must report an outcome, none
``crashed``, and no exception may escape.

Derandomized (the same examples on every run), no deadline, no shrinking (a crash is reported
with its schema); the module runs in well under a minute.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import datavet
from datavet.rules import RULES

LABEL_KINDS = (
    "string",
    "bool",
    "int",
    "float",
    "date",
    "categorical",
    "all-missing",
    "one-class",
    "none",
)
FEATURE_KINDS = (
    "float",
    "float-nan-inf",
    "int",
    "bool",
    "string",
    "string-id",
    "categorical",
    "date",
    "timestamp-tz",
    "constant",
    "all-null",
    "row-counter",
    "label-copy",
)
ROWS = (1, 2, 7, 40, 150)


def _settings(examples: int):
    return settings(
        max_examples=examples,
        derandomize=True,
        deadline=None,
        database=None,
        phases=(Phase.explicit, Phase.generate),
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )


def _label(kind: str, n: int, g: np.random.Generator) -> pa.Array:
    classes = g.integers(0, 3, n)
    if kind == "string":
        return pa.array(np.array(["cat", "dog", "emu"])[classes])
    if kind == "bool":
        return pa.array(classes % 2 == 0)
    if kind == "int":
        return pa.array(classes.astype(np.int64))
    if kind == "float":
        return pa.array(g.normal(size=n) * 10 + 3)
    if kind == "date":
        return pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=int(c)) for c in classes])
    if kind == "categorical":
        return pa.array(np.array(["lo", "mid", "hi"])[classes]).dictionary_encode()
    if kind == "all-missing":
        return pa.nulls(n, pa.string())
    if kind == "one-class":
        return pa.array(np.ones(n, dtype=np.int64))
    raise AssertionError(kind)


def _feature(kind: str, n: int, g: np.random.Generator, label: pa.Array | None) -> pa.Array:
    if kind == "float":
        return pa.array(g.normal(size=n))
    if kind == "float-nan-inf":
        x = g.normal(size=n)
        x[g.random(n) < 0.2] = np.nan
        x[g.random(n) < 0.1] = np.inf
        return pa.array(x)
    if kind == "int":
        return pa.array(g.integers(-50, 50, n))
    if kind == "bool":
        return pa.array(g.random(n) < 0.5)
    if kind == "string":
        return pa.array(np.array(["a", "b", "c", "é"])[g.integers(0, 4, n)])
    if kind == "string-id":
        return pa.array([f"id-{i:06d}-{g.integers(0, 10**6)}" for i in range(n)])
    if kind == "categorical":
        return pa.array(np.array(["x", "y"])[g.integers(0, 2, n)]).dictionary_encode()
    if kind == "date":
        return pa.array(
            [dt.date(2020, 1, 1) + dt.timedelta(days=int(d)) for d in g.integers(0, 999, n)]
        )
    if kind == "timestamp-tz":
        return pa.array(
            (1_700_000_000 + g.integers(0, 10**7, n)) * 10**6, pa.timestamp("us", tz="Asia/Tokyo")
        )
    if kind == "constant":
        return pa.array(np.full(n, 7.0))
    if kind == "all-null":
        return pa.nulls(n, pa.float64())
    if kind == "row-counter":
        return pa.array(np.arange(n, dtype=np.int64))
    if kind == "label-copy":
        return label if label is not None else pa.array(g.normal(size=n))
    raise AssertionError(kind)


@st.composite
def schemas(draw):
    return {
        "label": draw(st.sampled_from(LABEL_KINDS)),
        "features": draw(st.lists(st.sampled_from(FEATURE_KINDS), min_size=1, max_size=5)),
        "rows": draw(st.sampled_from(ROWS)),
        "test_rows": draw(st.sampled_from((None, *ROWS))),
        "group": draw(st.booleans()),
        "time": draw(st.booleans()),
        "baselines": draw(st.booleans()),
        "seed": draw(st.integers(0, 2**16)),
    }


def _table(schema: dict, n: int, g: np.random.Generator) -> pa.Table:
    columns = {}
    label = None
    if schema["label"] != "none":
        label = _label(schema["label"], n, g)
    for i, kind in enumerate(schema["features"]):
        columns[f"f{i}_{kind}"] = _feature(kind, n, g, label)
    if schema["group"]:
        columns["subject"] = pa.array([f"s{k}" for k in g.integers(0, max(1, n // 3), n)])
    if schema["time"]:
        columns["when"] = pa.array(
            [dt.datetime(2024, 1, 1) + dt.timedelta(hours=int(h)) for h in g.integers(0, 9999, n)]
        )
    if label is not None:
        columns["label"] = label
    return pa.table(columns)


def _audit(schema: dict, folder, engine: str, scheduler: str | None):
    g = np.random.default_rng(schema["seed"])
    train = folder / "train.parquet"
    pq.write_table(_table(schema, schema["rows"], g), train)
    test = None
    if schema["test_rows"]:
        test = folder / "test.parquet"
        pq.write_table(_table(schema, schema["test_rows"], g), test)
    return datavet.audit(
        str(train),
        str(test) if test else None,
        target="label" if schema["label"] != "none" else None,
        group="subject" if schema["group"] else None,
        time="when" if schema["time"] else None,
        baselines=schema["baselines"],
        engine=engine,
        scheduler=scheduler,
    )


def _check(schema: dict, report) -> None:
    crashed = [f"{o.code}: {o.reason}" for o in report.crashed]
    assert not crashed, f"schema {schema}:\n" + "\n".join(crashed)
    codes = {o.code for o in report.outcomes}
    missing = [r.code for r in RULES if r.code not in codes]
    assert not missing, f"schema {schema}: no outcome for {missing}"


@pytest.fixture(scope="module")
def dask_scheduler():
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        yield cluster.scheduler_address


@_settings(100)
@given(schema=schemas())
def test_no_rule_crashes_on_the_local_engine(schema, tmp_path_factory):
    _check(schema, _audit(schema, tmp_path_factory.mktemp("s"), "local", None))


@_settings(25)
@given(schema=schemas())
def test_no_rule_crashes_on_the_dask_engine(schema, tmp_path_factory, dask_scheduler):
    _check(schema, _audit(schema, tmp_path_factory.mktemp("s"), "dask", dask_scheduler))


def test_the_schemas_cover_every_kind():
    """The strategy can draw every label and feature kind (a guard against a narrowed list)."""
    assert set(LABEL_KINDS) >= {"string", "bool", "int", "float", "date", "categorical"}
    assert {"all-missing", "one-class", "none"} <= set(LABEL_KINDS)
    g = np.random.default_rng(0)
    for kind in LABEL_KINDS[:-1]:
        assert len(_label(kind, 5, g)) == 5
    for kind in FEATURE_KINDS:
        assert len(_feature(kind, 5, g, _label("int", 5, g))) == 5


def test_b004_with_a_string_label_and_a_row_counter(tmp_path):
    """The shape that crashed B004 (a string label and a column that follows row order)."""
    schema = {
        "label": "string",
        "features": ["row-counter", "float"],
        "rows": 150,
        "test_rows": None,
        "group": False,
        "time": False,
        "baselines": True,
        "seed": 1,
    }
    _check(schema, _audit(schema, tmp_path, "local", None))
