"""Property-based tests over random DataFrames: NaN, +-inf, None, NaT, mixed-type object columns,
unicode (column names and values), bool / categorical / date-time columns, duplicate names and
empty shapes.

- The audit returns a Report whose JSON is strict (no NaN/Infinity) and valid against the shipped
  schema, with no crashed rule -- or it raises InputError. Never anything else.
- The profile merge laws hold for every column kind: the profile of a table equals the merge of
  the profiles of its pieces, merging is associative, and an empty profile is the identity.
- The same input gives byte-identical JSON (the wall-clock ``duration_s`` aside): run twice, with
  1 or 3 scan threads, and in two processes with different hash seeds.

Settings are derandomized, so CI sees the same examples on every run; the file runs in well
under a minute.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import warnings
from datetime import datetime

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import datavet
from datavet.output import json as json_output
from datavet.scan import Profile, ScanPlan
from datavet.sources import open_source

from .helpers import child_env

SETTINGS = settings(
    derandomize=True,
    deadline=None,
    phases=(Phase.explicit, Phase.reuse, Phase.generate),  # shrinking a failure can take 5+ minutes
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

try:  # the dev extra ships jsonschema; without it only strictness is checked
    import jsonschema

    VALIDATOR = jsonschema.Draft202012Validator(json_output.schema())
except ImportError:  # pragma: no cover
    VALIDATOR = None

# ---------------------------------------------------------------------------------------------
# strategies

FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.sampled_from([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e308, 5e-324]),
    st.none(),
)
INTS = st.one_of(st.integers(-(2**62), 2**62), st.integers(-3, 3), st.none())
TEXT = st.one_of(
    st.text(max_size=6),  # any unicode but lone surrogates
    st.sampled_from(["", " ", "nan", "inf", "12", "1e3", "n/a", "é", "\x1b[31m", "=1+1", "::x"]),
    st.none(),
)
MIXED = st.one_of(FLOATS, INTS, TEXT, st.booleans())
BOOLS = st.one_of(st.booleans(), st.none())
WHEN = st.one_of(
    st.datetimes(
        min_value=datetime(1970, 1, 2), max_value=datetime(2200, 1, 1), allow_imaginary=False
    ),
    st.none(),
)
KINDS = ["float", "int", "text", "mixed", "bool", "category", "datetime", "datetime-tz"]
NAMES = st.one_of(
    st.text(min_size=0, max_size=5),
    st.sampled_from(["a", "label", "x", "é", "<b>", "::error::", "\x00", " "]),
)


def _column(kind: str, values: list) -> pd.Series:
    if kind == "float":
        return pd.Series([np.nan if v is None else v for v in values], dtype="float64")
    if kind == "int":
        return pd.Series(values, dtype="Int64")
    if kind == "text":
        return pd.Series(values, dtype=object)
    if kind == "mixed":
        return pd.Series(values, dtype=object)
    if kind == "bool":
        return pd.Series(values, dtype="boolean")
    if kind == "category":
        return pd.Series(pd.Categorical(values))
    if kind == "datetime":
        return pd.Series(pd.to_datetime(values))
    if kind == "datetime-tz":
        return pd.Series(pd.to_datetime(values)).dt.tz_localize("UTC").dt.tz_convert("Asia/Kolkata")
    raise AssertionError(kind)


ELEMENTS = {
    "float": FLOATS,
    "int": INTS,
    "text": TEXT,
    "mixed": MIXED,
    "bool": BOOLS,
    "category": st.one_of(st.sampled_from(["p", "q", "ü", ""]), st.none()),
    "datetime": WHEN,
    "datetime-tz": WHEN,
}


@st.composite
def frames(draw, min_rows=0, max_rows=25, max_cols=5, unique_names=False, with_label=True):
    n = draw(st.integers(min_rows, max_rows))
    k = draw(st.integers(0, max_cols))
    names = draw(
        st.lists(NAMES, min_size=k, max_size=k, unique=unique_names).filter(
            lambda ns: "label" not in ns
        )
    )
    series = []
    for name in names:
        kind = draw(st.sampled_from(KINDS))
        values = draw(st.lists(ELEMENTS[kind], min_size=n, max_size=n))
        series.append((name, _column(kind, values)))
    if with_label and draw(st.booleans()):
        kind = draw(st.sampled_from(["int", "float", "text", "bool", "category"]))
        elements = {
            "int": st.one_of(st.integers(0, 3), st.none()),
            "float": st.one_of(st.sampled_from([0.0, 1.5, 2.0, np.nan]), FLOATS),
            "text": st.one_of(st.sampled_from(["a", "b", "é", "<x>"]), st.none()),
            "bool": BOOLS,
            "category": st.one_of(st.sampled_from(["yes", "no"]), st.none()),
        }[kind]
        series.append(("label", _column(kind, draw(st.lists(elements, min_size=n, max_size=n)))))
    frame = pd.DataFrame({i: s for i, (_, s) in enumerate(series)}, index=range(n))
    frame.columns = [name for name, _ in series]
    return frame


def _strict(text: str) -> dict:
    def no_constants(name):
        raise AssertionError(f"non-JSON constant {name}")

    return json.loads(text, parse_constant=no_constants)


def _check_report(report) -> None:
    assert isinstance(report, datavet.Report)
    crashed = [(o.code, o.reason) for o in report.crashed]
    assert not crashed, crashed
    assert report.exit_code() in (0, 1)
    text = report.to_json()
    payload = _strict(text)
    if VALIDATOR is not None:
        errors = sorted(VALIDATOR.iter_errors(payload), key=lambda e: list(e.path))
        assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:3]]
    assert payload["exit_code"] == report.exit_code()


def _audit_or_input_error(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        try:
            report = datavet.audit(*args, **kwargs)
        except datavet.InputError:
            return None
    _check_report(report)
    return report


# ---------------------------------------------------------------------------------------------
# the audit: a valid Report or InputError


@settings(SETTINGS, max_examples=80)
@given(frame=frames(), baselines=st.booleans())
def test_audit_returns_a_valid_report_or_input_error(frame, baselines):
    _audit_or_input_error(frame, baselines=baselines)


@settings(SETTINGS, max_examples=50)
@given(
    train=frames(min_rows=1, unique_names=True),
    test=frames(min_rows=0, unique_names=True),
    baselines=st.booleans(),
)
def test_audit_of_two_splits_returns_a_valid_report_or_input_error(train, test, baselines):
    target = "label" if "label" in train.columns else None
    _audit_or_input_error(train, test, target=target, baselines=baselines)


# ---------------------------------------------------------------------------------------------
# profile merge laws


PLAN_TARGET = "label"


def _table(frame: pd.DataFrame) -> pa.Table:
    return open_source(frame).table


def _plan(table: pa.Table) -> ScanPlan:
    features = tuple(n for n in table.schema.names if n != PLAN_TARGET)
    target = PLAN_TARGET if PLAN_TARGET in table.schema.names else None
    return ScanPlan(target=target, hash_columns=features, sample_rows=8)


def _profile(table: pa.Table, lo: int, hi: int, plan: ScanPlan) -> Profile:
    batch = table.slice(lo, hi - lo).combine_chunks().to_batches()
    batch = batch[0] if batch else pa.RecordBatch.from_pylist([], schema=table.schema)
    return Profile.of_batch(batch, lo, plan, "train")


def _num(x):
    if x is None:
        return None
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    return x


def _close(a, b) -> bool:
    a, b = _num(a), _num(b)
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) or a == b
    return a == b


def _canon_counts(counter) -> tuple:
    return (counter.exact, counter.total, sorted(counter.counts.items(), key=repr))


def _canon(p: Profile) -> dict:
    cols = {}
    for name, c in p.columns.items():
        cols[name] = {
            "exact": (
                c.dtype,
                c.kind,
                c.rows,
                c.missing,
                c.posinf,
                c.neginf,
                c.finite.n,
                _num(c.min),
                _num(c.max),
                c.missing_rows,
                c.inf_rows,
                getattr(c, "tmin", None),
                getattr(c, "tmax", None),
                getattr(c, "numeric_text", None),
                getattr(c, "text_values", None),
                _canon_counts(c.values),
            ),
            "approx": (c.mean, c.std),
        }
    label = None
    if p.label is not None:
        lab = p.label
        label = (
            lab.dtype,
            lab.rows,
            lab.missing,
            lab.missing_rows,
            lab.integral,
            getattr(lab, "numeric_text", None),
            getattr(lab, "text_values", None),
            _canon_counts(lab.values),
        )
    pos, rows, labels = p.hashes.arrays()
    _, shared, _ = p.hashes.arrays(shared=True)
    return {
        "rows": p.rows,
        "columns": cols,
        "label": label,
        "hashes": (pos.tolist(), rows.tolist(), labels.tolist(), shared.tolist()),
        "sample": (p.sample.positions.tolist(), p.sample.seen),
    }


def assert_same_profile(a: Profile, b: Profile) -> None:
    ca, cb = _canon(a), _canon(b)
    assert ca["rows"] == cb["rows"]
    assert ca["columns"].keys() == cb["columns"].keys()
    for name in ca["columns"]:
        assert ca["columns"][name]["exact"] == cb["columns"][name]["exact"], name
        for x, y in zip(ca["columns"][name]["approx"], cb["columns"][name]["approx"]):
            assert _close(x, y), (name, x, y)
    assert ca["label"] == cb["label"]
    assert ca["hashes"] == cb["hashes"]
    assert ca["sample"] == cb["sample"]


@st.composite
def tables_and_cuts(draw):
    frame = draw(frames(min_rows=1, max_rows=30, max_cols=4, unique_names=True))
    n = len(frame)
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, n - 1)), max_size=4))) - {n})
    return frame, cuts


def _merge_all(parts):
    out = parts[0]
    for p in parts[1:]:
        out = out.merge(p)
    return out


@settings(SETTINGS, max_examples=80)
@given(case=tables_and_cuts())
def test_profile_of_whole_equals_merge_of_pieces(case):
    frame, cuts = case
    try:
        table = _table(frame)
    except datavet.InputError:
        return
    plan = _plan(table)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        whole = _profile(table, 0, table.num_rows, plan)
        bounds = [0, *cuts, table.num_rows]
        parts = [_profile(table, lo, hi, plan) for lo, hi in zip(bounds, bounds[1:]) if hi > lo]
        assert_same_profile(whole, _merge_all(parts))


@settings(SETTINGS, max_examples=50)
@given(case=tables_and_cuts())
def test_profile_merge_is_associative_with_an_identity(case):
    frame, _ = case
    try:
        table = _table(frame)
    except datavet.InputError:
        return
    n = table.num_rows
    if n < 3:
        return
    plan = _plan(table)
    a, b, c = (
        _profile(table, lo, hi, plan) for lo, hi in ((0, 1), (1, n // 2 + 1), (n // 2 + 1, n))
    )
    if c.rows == 0:
        return
    assert_same_profile(a.merge(b).merge(c), a.merge(b.merge(c)))
    empty = Profile(split="train")
    whole = a.merge(b).merge(c)
    assert_same_profile(empty.merge(whole), whole)
    assert_same_profile(whole.merge(empty), whole)


# ---------------------------------------------------------------------------------------------
# determinism: the same input, the same bytes


_DURATION = re.compile(r'"duration_s": (null|[-0-9.eE+]+)')


def stable_json(report) -> bytes:
    """The JSON payload with the wall-clock duration (the one field that measures the run, not
    the data) set to null; everything else byte for byte."""
    return _DURATION.sub('"duration_s": null', report.to_json()).encode("utf-8")


@settings(SETTINGS, max_examples=25)
@given(train=frames(min_rows=1, max_rows=40, unique_names=True), test=frames(unique_names=True))
def test_same_input_gives_byte_identical_json(train, test):
    target = "label" if "label" in train.columns else None
    outputs = []
    for workers in (1, 3, 1):
        try:
            report = datavet.audit(
                train.copy(), test.copy(), target=target, workers=workers, batch_rows=7
            )
        except datavet.InputError as exc:
            outputs.append(f"InputError: {exc}".encode())
            continue
        outputs.append(stable_json(report))
    assert outputs[0] == outputs[1] == outputs[2]


def test_json_is_byte_identical_across_processes_and_hash_seeds(tmp_path):
    """Two processes with different PYTHONHASHSEED (set and dict order of strings differ) write
    the same JSON for the planted sample, baselines included."""
    root = __import__("pathlib").Path(__file__).resolve().parents[2] / "sample_data"
    outs = []
    for seed in ("0", "12345"):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "datavet",
                "audit",
                root / "planted_train.csv",
                "--test",
                root / "planted_test.csv",
                "--target",
                "label",
                "--format",
                "json",
            ],
            capture_output=True,
            env=child_env({"PYTHONHASHSEED": seed}),
            timeout=120,
            cwd=tmp_path,
        )
        assert proc.returncode == 1, proc.stderr.decode()[-500:]
        outs.append(_DURATION.sub('"duration_s": null', proc.stdout.decode()))
    assert outs[0] == outs[1]


def test_duration_is_the_only_field_that_differs_between_runs(planted):
    """Guard for the normalisation above: two runs differ at most in ``duration_s``."""
    train, test = planted
    a = json.loads(datavet.audit(train, test, target="label").to_json())
    b = json.loads(datavet.audit(train, test, target="label").to_json())
    a.pop("duration_s"), b.pop("duration_s")
    assert a == b


@pytest.mark.parametrize("kind", ["float", "int", "text", "bool", "datetime-tz"])
def test_empty_shapes(kind):
    """0 rows, 0 columns, 0x0: InputError, never a crash."""
    col = _column(kind, [])
    for frame in (pd.DataFrame({"a": col}), pd.DataFrame(index=range(3)), pd.DataFrame()):
        with pytest.raises(datavet.InputError):
            datavet.audit(frame)
    one = pd.DataFrame({"a": _column(kind, [None])})
    _audit_or_input_error(one)
    _audit_or_input_error(one, one)
