"""The fuzzer, CI budget: a fixed plan of ``CI_CASES`` cases over every family (hostile bytes in
every format, Arrow types as feature and label, NumPy dtypes, torch layouts, deep nesting, outputs
aimed at inputs), run in process by two long-lived workers (tests/hardening/fuzz.py). Every case
must keep the contract: exit 0/1/2; exit 2 is one ``datavet: error:`` line; no hang, no death,
no traceback, no raw warning, strict JSON, no crashed rule; no file changed but the declared
outputs; an output aimed at an input refused with the input unchanged.

The plan is deterministic (``fuzz.plan(CI_CASES, seed=0)``): a failure here reproduces with
``python bench/fuzz.py -n 320 --seed 0`` (reproducers saved, grouped by problem). The long
budget: ``make fuzz`` (100,000 cases).
"""

from __future__ import annotations

import random

import pytest

from . import fuzz

CI_CASES = 320
JOBS = 2


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("fuzz")
    return fuzz.fuzz(fuzz.plan(CI_CASES, seed=0), workdir=workdir, jobs=JOBS)


def _report(breaks) -> str:
    lines = []
    for sig, rs in fuzz.group_breaks(breaks).items():
        lines.append(f"[{len(rs)}x] {sig}")
        lines += [f"    {r.describe()}" for r in rs[:3]]
    return "\n".join(lines)


def test_the_budget_covers_every_family(results):
    assert len(results) == CI_CASES
    families = {r.case.family for r in results}
    assert families == {f for f in fuzz.FAMILIES if fuzz.variants(f)}
    arrow = {r.case.variant.split(":")[0] for r in results if r.case.family == "arrow"}
    assert len(arrow) >= 40, sorted(arrow)  # most of the Arrow type list, in one CI run


@pytest.mark.parametrize("family", fuzz.FAMILIES)
def test_every_case_keeps_the_contract(results, family):
    """No break of any kind in ``family`` (see tests/hardening/fuzz.py for the contract)."""
    breaks = [r for r in results if r.case.family == family and not r.ok]
    assert not breaks, "\n" + _report(breaks)


# ---------------------------------------------------------------------------------------------
# the fuzzer itself


def test_the_plan_is_deterministic_and_mixes_every_family():
    a = fuzz.plan(200, seed=3)
    assert a == fuzz.plan(200, seed=3)
    assert a != fuzz.plan(200, seed=4)
    counts = {f: sum(c.family == f for c in a) for f in fuzz.FAMILIES}
    assert all(counts[f] > 0 for f in fuzz.FAMILIES if fuzz.variants(f)), counts
    assert counts["bytes"] >= max(v for f, v in counts.items() if f != "bytes")


def test_mutations_are_deterministic_and_change_the_bytes():
    data = bytes(range(256)) * 8 + b"1,2,3\n4,5,6\n"
    for mutation in fuzz.BINARY_MUTATIONS + fuzz.TEXT_MUTATIONS:
        for seed in range(20):
            a = fuzz.mutate(data, mutation, random.Random(seed))
            assert a == fuzz.mutate(data, mutation, random.Random(seed)), mutation
            assert a != data, (mutation, seed)


def test_every_variant_builds(tmp_path):
    """Each variant of each family writes its files (or says the format cannot store it)."""
    seeds = tmp_path / "seeds"
    for family in fuzz.FAMILIES:
        for i, variant in enumerate(fuzz.variants(family)):
            case = fuzz.Case(family, variant, i)
            folder = tmp_path / case.name
            folder.mkdir()
            try:
                spec = fuzz.build(case, folder, seeds)
            except fuzz.Unbuildable:
                assert family == "arrow" and variant.endswith(":parquet"), case
                continue
            assert spec.argv and spec.argv[0] in {
                "audit",
                "check",
                "diff",
                "preflight",
                "render",
                "curves",
                "probe",
                "journal",
            }, case


def test_the_pool_replaces_a_hung_or_dead_worker_and_records_the_case(tmp_path):
    cases = [
        fuzz.Case("selftest", "hang", 1),
        fuzz.Case("selftest", "segfault", 2),
        fuzz.Case("selftest", "stray", 3),
        fuzz.Case("selftest", "refused", 4),
    ]
    results = fuzz.fuzz(cases, workdir=tmp_path, jobs=2, timeout=3)
    outcomes = {r.case.variant: r.outcome for r in results}
    assert outcomes["hang"] == "timeout"
    assert outcomes["segfault"] == "died"
    assert "SIGSEGV" in next(r.detail for r in results if r.case.variant == "segfault")
    assert outcomes["stray"] == "stray-file"  # r.txt was not declared
    assert outcomes["refused"] == "exit2"  # audit refuses --output onto its train file


@pytest.mark.parametrize(
    ("code", "stdout", "stderr", "refuse", "changed", "outcome"),
    [
        (0, "{}", "", False, [], "exit0"),
        (1, '{"a": 1}', "datavet: wrote x\n", False, [], "exit1"),
        (2, "", "datavet: error: f.csv: bad\n", False, [], "exit2"),
        (2, "", "datavet: internal error: KeyError: 'x'\n", False, [], "internal-error"),
        (2, "", "usage: datavet\ndatavet: error: unrecognized\n", False, [], "exit2-bad-stderr"),
        (2, "", "", False, [], "exit2-bad-stderr"),
        (2, '{"outcomes": [{"status": "crashed", "code": "B004"}]}', "", False, [], "crashed-rule"),
        (1, '{"x": NaN}', "", False, [], "bad-json"),
        (0, "{}", "x.py:3: RuntimeWarning: overflow\n", False, [], "warning-leak"),
        (2, "", "Traceback (most recent call last):\n", False, [], "traceback"),
        (3, "", "", False, [], "other-exit"),
        (0, "{}", "", False, ["x.tmp (new)"], "stray-file"),
        (0, "", "datavet: wrote old.json\n", True, [], "not-refused"),
        (0, "", "datavet: wrote old.json\n", True, ["old.json (modified)"], "input-modified"),
        (2, "", "datavet: error: old.json: is an input\n", True, [], "exit2"),
    ],
)
def test_classify(code, stdout, stderr, refuse, changed, outcome):
    spec = fuzz.Spec(["audit"], refuse=refuse, json=True)
    assert fuzz.classify(code, stdout, stderr, spec=spec, changed=changed)[0] == outcome


def test_breaks_group_by_problem_not_by_path_or_type():
    case = fuzz.Case("arrow", "x", 1)
    a = fuzz.Result(
        case,
        "internal-error",
        2,
        "datavet: internal error: ArrowNotImplementedError: Function 'value_counts' has no "
        "kernel matching input types (list<element: int64>) (rerun with --verbose ...)",
        0.1,
    )
    b = fuzz.Result(
        fuzz.Case("arrow", "y", 2),
        "internal-error",
        2,
        "datavet: internal error: ArrowNotImplementedError: Function 'value_counts' has no "
        "kernel matching input types (struct<a: int64, b: string>) (rerun with --verbose ...)",
        0.1,
    )
    assert a.signature() == b.signature()
    assert len(fuzz.group_breaks([a, b])) == 1
    c = fuzz.Result(
        fuzz.Case("arrow", "z", 3),
        "internal-error",
        2,
        "datavet: internal error: ArrowNotImplementedError: Function 'array_filter' has no "
        "kernel matching input types (string_view, bool) (rerun with --verbose ...)",
        0.1,
    )
    assert c.signature() != a.signature()  # another function: another problem
