"""The evidence computed after the scan (row checks, near-duplicate rows, baselines) runs on
threads of its own beside the rules: the same report, errors raised where they were before."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import datavet
from datavet._later import Later
from datavet.errors import InputError

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
TRAIN, TEST = SAMPLE / "planted_train.csv", SAMPLE / "planted_test.csv"


def test_later_gives_the_value_and_raises_the_error_to_every_reader():
    started = threading.Event()
    release = threading.Event()

    def slow(x):
        started.set()
        release.wait(30)
        return x * 2

    later = Later(slow, 21)
    assert started.wait(30) and not later.done()  # running, on another thread
    release.set()
    assert later.get() == 42 and later.get() == 42 and later.done()
    assert Later.now(later) == 42 and Later.now(7) == 7 and Later.now(None) is None

    def broken():
        raise ValueError("no")

    failed = Later(broken)
    for _ in range(2):
        with pytest.raises(ValueError, match="no"):
            failed.get()


def test_later_without_a_thread_computes_on_the_caller():
    names = []
    later = Later(lambda: names.append(threading.current_thread().name), thread=False)
    assert later.done() and names == [threading.current_thread().name]


def _record_threads(monkeypatch):
    """The threads the post-scan evidence is computed on, by piece."""
    from datavet.engines import base as engine
    from datavet.pipeline import evidence

    seen: dict[str, str] = {}

    def on_thread(name, function):
        def wrapped(*args, **kwargs):
            seen[name] = threading.current_thread().name
            return function(*args, **kwargs)

        return wrapped

    monkeypatch.setattr(engine, "checks_of", on_thread("rows", engine.checks_of))
    monkeypatch.setattr(engine, "near_pair", on_thread("near", engine.near_pair))
    monkeypatch.setattr(evidence, "fit_baselines", on_thread("baselines", evidence.fit_baselines))
    return seen


def test_post_scan_evidence_runs_on_its_own_threads(tmp_path, monkeypatch):
    import pandas as pd

    # Parquet: the near-duplicate hashes are folded into the main pass (a CSV gets a second
    # pass instead), so all three pieces are started after the scan
    for name, src in (("train", TRAIN), ("test", TEST)):
        pd.read_csv(src).to_parquet(tmp_path / f"{name}.parquet")
    seen = _record_threads(monkeypatch)
    threaded = datavet.audit(tmp_path / "train.parquet", tmp_path / "test.parquet", target="label")
    assert seen == {
        "rows": "datavet-rows",
        "near": "datavet-near",
        "baselines": "datavet-baselines",
    }
    seen.clear()
    serial = datavet.audit(
        tmp_path / "train.parquet", tmp_path / "test.parquet", target="label", workers=1
    )
    main = threading.current_thread().name
    assert seen == {"rows": main, "near": main, "baselines": main}
    one, two = threaded.to_dict(), serial.to_dict()
    one.pop("duration_s"), two.pop("duration_s")
    assert one == two
    assert {"S001", "S007", "B001"} <= {o.code for o in threaded.outcomes}
    assert threaded.baselines is not None and not any(
        o.status.value == "crashed" for o in threaded.outcomes
    )


def test_rules_needing_no_baselines_run_while_they_are_fitted(monkeypatch):
    """The baselines' fit waits until a rule that does not need them has run: fitted before
    the rules (the old order), it would wait out its timeout and the test would fail."""
    from datavet.auditors.nan_values import NanValues
    from datavet.pipeline import evidence

    v001_ran = threading.Event()
    fit = evidence.fit_baselines
    run = NanValues.run

    def run_and_tell(self, ctx):
        try:
            return run(self, ctx)
        finally:
            v001_ran.set()

    waited = []

    def fit_after_v001(*args, **kwargs):
        waited.append(v001_ran.wait(30))
        return fit(*args, **kwargs)

    monkeypatch.setattr(NanValues, "run", run_and_tell)
    monkeypatch.setattr(evidence, "fit_baselines", fit_after_v001)
    report = datavet.audit(TRAIN, TEST, target="label")
    assert waited == [True]
    assert report.baselines is not None and report.baselines["models"]
    assert not [o for o in report.outcomes if o.status.value == "crashed"]


def test_the_one_feature_rules_do_not_queue_behind_the_baselines(monkeypatch):
    """B003 and B004 read the sample and the label, not the fitted baselines: they are not
    started last with the rules that wait for the fit. The fit waits until both have run, on
    two rule threads: queued behind B001 and B002 (each waiting for the fit on a thread), they
    never would, and the fit would wait out its timeout."""
    import datavet.api as api
    from datavet.auditors.order_feature_leakage import OrderFeatureLeakage
    from datavet.auditors.single_feature_leakage import SingleFeatureLeakage
    from datavet.pipeline import evidence

    ran = {"B003": threading.Event(), "B004": threading.Event()}
    fit = evidence.fit_baselines

    def telling(cls):
        run = cls.run

        def run_and_tell(self, ctx):
            try:
                return run(self, ctx)
            finally:
                ran[self.code].set()

        monkeypatch.setattr(cls, "run", run_and_tell)

    telling(SingleFeatureLeakage)
    telling(OrderFeatureLeakage)
    waited = []

    def fit_after_b003_b004(*args, **kwargs):
        waited.append(all(event.wait(30) for event in ran.values()))
        return fit(*args, **kwargs)

    monkeypatch.setattr(evidence, "fit_baselines", fit_after_b003_b004)
    monkeypatch.setattr(api, "rule_workers", lambda workers: 2)
    report = datavet.audit(TRAIN, TEST, target="label")
    assert waited == [True]
    status = {o.code: o.status.value for o in report.outcomes}
    assert status["B001"] != "skipped" and status["B003"] != "skipped"


def test_the_one_feature_rules_need_no_baselines():
    """Selected alone, B003 and B004 fit no baselines; with the baselines off they still run
    (B001 and B002, which compare against the fitted models, are skipped)."""
    alone = datavet.audit(TRAIN, TEST, target="label", select=["B003", "B004"])
    assert alone.baselines is None
    assert {o.code: o.status.value for o in alone.outcomes} == {"B003": "passed", "B004": "passed"}
    off = datavet.audit(TRAIN, TEST, target="label", baselines=False)
    status = {o.code: o.status.value for o in off.outcomes}
    assert status["B001"] == status["B002"] == "skipped"
    assert status["B003"] == status["B004"] == "passed"


def test_an_error_of_the_near_duplicate_pass_is_raised_by_audit(tmp_path, monkeypatch):
    import pandas as pd

    from datavet.engines import base as engine

    for name, src in (("train", TRAIN), ("test", TEST)):
        pd.read_csv(src).to_parquet(tmp_path / f"{name}.parquet")

    def unreadable(train, test):
        raise InputError("spill", "cannot read the spilled hashes back: I/O error")

    monkeypatch.setattr(engine, "near_pair", unreadable)
    with pytest.raises(InputError, match="cannot read the spilled hashes back"):
        datavet.audit(tmp_path / "train.parquet", tmp_path / "test.parquet", target="label")


def test_a_crash_of_the_row_checks_is_each_reading_rules_crash(monkeypatch):
    from datavet.engines import base as engine

    def broken(*args, **kwargs):
        raise RuntimeError("row checks broke")

    monkeypatch.setattr(engine, "checks_of", broken)
    report = datavet.audit(TRAIN, TEST, target="label")
    crashed = {o.code: o.reason for o in report.outcomes if o.status.value == "crashed"}
    assert {"S001", "S002", "S003"} <= set(crashed)
    assert all("row checks broke" in r for r in crashed.values())
    assert report.exit_code() == 2


def test_rules_waiting_for_pending_evidence_start_last():
    """On threads, the rules that would wait for evidence still being computed start after the
    others (the threads work meanwhile); the outcomes stay in rule order."""
    from datavet.findings import Severity
    from datavet.framework import Rule, run_rules

    started: list[str] = []
    lock = threading.Lock()

    def make(code, needs=()):
        class Recorded(Rule):
            name, severity, summary = f"rule-{code.lower()}", Severity.INFO, "records its start"

            def check(self, ctx):
                with lock:
                    started.append(self.code)
                return []

        Recorded.code, Recorded.needs = code, tuple(needs)
        return Recorded()

    class Ctx:
        def unmet(self, need):
            return None

    rules = [make("X001", ["baselines"]), make("X002", ["row_checks"]), make("X003")]
    rules += [make(f"X{n:03d}") for n in range(4, 9)]
    ran = run_rules(rules, Ctx(), workers=2, pending={"baselines", "row_checks"})
    assert [o.code for o in ran.outcomes] == [r.code for r in rules]
    # submitted last; two threads may swap neighbours, so: among the last three to start
    assert {"X001", "X002"} <= set(started[-3:]) and len(started) == 8
    started.clear()
    ran = run_rules(rules, Ctx(), workers=1, pending={"baselines"})  # one thread: rule order
    assert started == [r.code for r in rules]
