"""The corruption fuzzer, short budget (CI): 21 mutated inputs over seven formats (CSV, gzip CSV,
Parquet, Arrow IPC, Feather, NPY, NPZ; three mutations each, every mutation kind covered), each
audited by ``python -m datavet`` in a child process with a 30 s timeout. Every case must end in
exit 0/1/2, never hang, never print a traceback, and exit 2 must be exactly one stderr line
starting ``datavet: error:``.

The long budget: ``python bench/fuzz_readers.py --iterations 2000`` (or ``make fuzz``).
"""

from __future__ import annotations

import random

import pytest

from . import fuzz

CI_CASES = 3 * len(fuzz.FORMATS)  # 21: a child process each costs ~1 s of interpreter start
TIMEOUT_S = 30


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("fuzz")
    return fuzz.fuzz(
        CI_CASES,
        seed=0,
        timeout=TIMEOUT_S,
        workdir=workdir,
        keep_dir=workdir / "failures",
    )


def _failures(results, fmt=None, outcomes=None):
    return [
        r.describe()
        for r in results
        if (fmt is None or r.case.fmt == fmt)
        and (not r.ok if outcomes is None else r.outcome in outcomes)
    ]


def test_the_budget_covers_every_format(results):
    assert len(results) == CI_CASES
    assert {r.case.fmt for r in results} == set(fuzz.FORMATS)
    assert {r.case.role for r in results} == {"train", "test"}
    assert {r.case.mutation for r in results} >= set(fuzz.BINARY_MUTATIONS)


@pytest.mark.parametrize("fmt", fuzz.FORMATS)
def test_every_case_exits_0_1_or_2(results, fmt):
    bad = [r.describe() for r in results if r.case.fmt == fmt and (r.exit_code not in (0, 1, 2))]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("fmt", fuzz.FORMATS)
def test_no_case_hangs(results, fmt):
    assert not _failures(results, fmt, {"timeout"})


@pytest.mark.parametrize("fmt", fuzz.FORMATS)
def test_no_traceback(results, fmt):
    bad = [r.describe() for r in results if r.case.fmt == fmt and r.traceback]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("fmt", fuzz.FORMATS)
def test_exit_2_is_one_error_line(results, fmt):
    """An input that cannot be audited: one line 'datavet: error: ...', nothing on stdout; not
    an internal error, not a report whose rules crashed."""
    bad = [
        r.describe()
        for r in results
        if r.case.fmt == fmt and r.exit_code == 2 and r.outcome != "exit2"
    ]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("fmt", fuzz.FORMATS)
def test_finished_audits_print_strict_json_and_no_warnings(results, fmt):
    bad = _failures(results, fmt, {"bad-json", "warning-leak"})
    assert not bad, "\n".join(bad)


# ---------------------------------------------------------------------------------------------
# the fuzzer itself


def test_mutations_are_deterministic_and_change_the_bytes():
    data = bytes(range(256)) * 8 + b"1,2,3\n4,5,6\n"
    for mutation in fuzz.BINARY_MUTATIONS + fuzz.TEXT_MUTATIONS:
        for seed in range(20):
            a = fuzz.mutate(data, mutation, random.Random(seed))
            b = fuzz.mutate(data, mutation, random.Random(seed))
            assert a == b, mutation
            assert a != data, (mutation, seed)


def test_plan_is_deterministic_and_balanced():
    a = fuzz.plan(140, seed=3)
    assert a == fuzz.plan(140, seed=3)
    assert a != fuzz.plan(140, seed=4)
    per_format = {f: sum(c.fmt == f for c in a) for f in fuzz.FORMATS}
    assert set(per_format.values()) == {20}


@pytest.mark.parametrize(
    ("code", "stdout", "stderr", "outcome"),
    [
        (0, "{}", "", "exit0"),
        (1, '{"a": 1}', "datavet: wrote x\n", "exit1"),
        (2, "", "datavet: error: f.csv: bad\n", "exit2"),
        (2, "", "datavet: internal error: KeyError: 'x' (rerun ...)\n", "internal-error"),
        (2, "", "usage: datavet\ndatavet: error: unrecognized\n", "exit2-bad-stderr"),
        (2, '{"outcomes": [{"status": "crashed"}]}', "", "crashed-rule"),
        (1, "{NaN}", "", "bad-json"),
        (1, '{"x": NaN}', "", "bad-json"),
        (0, "{}", "x.py:3: RuntimeWarning: overflow\n", "warning-leak"),
        (2, "", "Traceback (most recent call last):\n", "traceback"),
        (None, "", "", "timeout"),
        (-11, "", "", "signal"),
        (3, "", "", "other-exit"),
    ],
)
def test_classify(code, stdout, stderr, outcome):
    assert fuzz.classify(code, stdout, stderr) == outcome
