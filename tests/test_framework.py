"""The one rule framework: the Rule base every family shares, the runner (passed, failed,
skipped for an unmet need or Skip, crashed with a traceback), declarations read instead of
codes, and a Severity that equals its name."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

import datavet
from datavet import Finding, Severity
from datavet.auditors.base import Auditor
from datavet.auditors.base import Skip as AuditorSkip
from datavet.curves.base import CurveRule
from datavet.curves.base import Skip as CurveSkip
from datavet.findings import Status
from datavet.framework import NEEDS, Rule, Skip, needing, option_of, run_rules
from datavet.probes.base import Probe, ProbeContext
from datavet.probes.base import Skip as ProbeSkip
from datavet.rules import REGISTRY

SRC = Path(datavet.__file__).resolve().parent


class Ctx:
    """A context that knows one need: "test"."""

    def __init__(self, has_test: bool):
        self.has_test = has_test

    def unmet(self, need: str) -> str | None:
        return None if need != "test" or self.has_test else "no test split given (pass --test)"


class Finds(Rule):
    """Finds one thing."""

    code, name, severity, summary = "X001", "finds", Severity.WARNING, "finds one thing"
    thresholds = {"limit": 1.0}

    def check(self, ctx):
        yield self.finding(f"found at {self.options['limit']}", metrics={"x": 1.0})


class Quiet(Rule):
    code, name, severity, summary = "X002", "quiet", Severity.INFO, "finds nothing"

    def check(self, ctx):
        return []


class NeedsTest(Rule):
    code, name, severity, summary = "X003", "needs-test", Severity.ERROR, "needs a test split"
    needs = "test"

    def check(self, ctx):
        yield self.finding("ran")


class Skips(Rule):
    code, name, severity, summary = "X004", "skips", Severity.INFO, "cannot apply"

    def check(self, ctx):
        raise Skip("not a classification task")


class Crashes(Rule):
    code, name, severity, summary = "X005", "crashes", Severity.INFO, "has a bug"

    def check(self, ctx):
        raise ZeroDivisionError("division by zero")


def test_every_family_is_the_one_rule_and_the_one_skip():
    for base in (Auditor, Probe, CurveRule):
        assert issubclass(base, Rule)
    assert all(issubclass(r, Rule) for r in REGISTRY)
    assert AuditorSkip is ProbeSkip is CurveSkip is Skip


@pytest.mark.parametrize("workers", [1, 3])
def test_runner_records_every_outcome_and_keeps_going(workers):
    rules = [Finds(), Quiet(), NeedsTest(), Skips(), Crashes(), Finds(severity=Severity.ERROR)]
    seen = []
    ran = run_rules(
        rules, Ctx(has_test=False), after=lambda r, o: seen.append(o.code), workers=workers
    )
    assert [o.status for o in ran.outcomes] == [
        Status.FAILED,
        Status.PASSED,
        Status.SKIPPED,
        Status.SKIPPED,
        Status.CRASHED,
        Status.FAILED,
    ]
    assert seen == [o.code for o in ran.outcomes] and set(ran.seconds) == {r.code for r in rules}
    need, skip, crash = ran.outcomes[2], ran.outcomes[3], ran.outcomes[4]
    assert need.reason == "no test split given (pass --test)"
    assert skip.reason == "not a classification task"
    assert crash.reason == "ZeroDivisionError: division by zero"
    assert "Traceback" in crash.traceback and "ZeroDivisionError" in crash.traceback
    assert [f.severity for f in ran.findings] == [Severity.WARNING, Severity.ERROR]
    findings, outcomes = ran  # unpacks as the runner loops did
    assert findings == ran.findings and outcomes == ran.outcomes
    ran = run_rules([NeedsTest()], Ctx(has_test=True))
    assert ran.outcomes[0].status is Status.FAILED


def test_rules_on_threads_give_the_serial_report(tmp_path):
    """The audit's rules run on several threads, beside the row checks, the near-duplicate
    rows and the baselines; the report is the serial one, byte for byte (outside the timings),
    and the row checks every S rule shares are computed once."""
    from datavet.auditors import base
    from datavet.engines import base as engine

    calls = []
    checks_of = base.checks_of

    def counted(*args, **kwargs):
        calls.append(1)
        return checks_of(*args, **kwargs)

    sample = Path(__file__).resolve().parents[1] / "sample_data"
    train, test = sample / "planted_train.csv", sample / "planted_test.csv"
    reports = []
    for workers in (1, 4):
        calls.clear()
        # started by the engine after the scan (or, outside an audit, by the first rule)
        base.checks_of = engine.checks_of = counted
        try:
            report = datavet.audit(train, test, target="label", workers=workers)
        finally:
            base.checks_of = engine.checks_of = checks_of
        assert len(calls) == 1
        data = report.to_dict()
        data.pop("duration_s", None)
        reports.append(json.dumps(data, sort_keys=True, default=str))
    assert reports[0] == reports[1]
    assert '"S001"' in reports[0]  # the row checks found the planted copies


def test_needs_are_declared_from_one_vocabulary():
    assert NeedsTest.needs == ("test",)  # a single string is one need
    with pytest.raises(TypeError, match="not in framework.NEEDS"):

        class Bad(Rule):  # noqa: F841
            code, name, severity, summary = "X009", "bad", Severity.INFO, "bad"
            needs = ("a GPU",)

    assert set(NEEDS) >= {"target", "test", "near_hashes", "torch", "model"}


def test_the_runner_reads_declarations_not_codes():
    rules = [r() for r in REGISTRY]
    assert [r.code for r in needing(rules, "near_hashes")] == ["S007", "S008"]
    assert [r.code for r in needing(rules, "row_keys")] == ["S001", "S002", "S003"]
    assert {r.code[0] for r in needing(rules, "baselines")} == {"B"}
    assert [r.code for r in needing(rules, "known_task")] == ["M001", "M003"]
    near = needing(REGISTRY, "near_hashes")[0]
    assert option_of(rules, "near_hashes", "digits", 0) == near.thresholds["digits"]
    assert option_of([], "near_hashes", "digits", 6) == 6
    tuned = [near(thresholds={"digits": 3})]
    assert option_of(tuned, "near_hashes", "digits", 6) == 3


def test_probe_of_unknown_task_is_skipped_by_its_declared_need():
    ctx = ProbeContext(
        model=None,
        inputs=None,
        target=None,
        loss_fn=None,
        task="unknown",
        task_reason="the output is 3-D",
        n_classes=None,
        device="cpu",
        batch_size=1,
    )
    m001 = datavet.rules.lookup("M001")
    ran = run_rules([m001()], ctx)
    assert ran.outcomes[0].status is Status.SKIPPED
    assert ran.outcomes[0].reason == "the task is unknown (the output is 3-D); pass task="


# Rule codes may be spelled only by their rule's module and the registry. The modules below
# still name other rules' codes, for what they compose (a preflight recipe, the probe CLI's
# overfit options).
SPELLS_CODES = {
    "preflight.py",
    "cli/probe.py",
    "curves/base.py",  # the curve context's shared analyses read C002's and C009's thresholds
}
RULE_MODULES = {r.__module__.replace("datavet.", "", 1).replace(".", "/") + ".py" for r in REGISTRY}


def test_no_rule_code_is_spelled_outside_the_rules():
    """The runners, scan and renderers read what rules declare (needs, sections, cells)."""
    spelled = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in SPELLS_CODES or rel in RULE_MODULES or rel == "rules.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if re.fullmatch(r"[VFLSBTMC][0-9]{3}", node.value):
                    spelled.append(f"{rel}:{node.lineno} {node.value}")
    assert spelled == []


# -- Severity ---------------------------------------------------------------------------------


def test_severity_equals_its_lowercase_name():
    assert Severity.ERROR == "error" and "error" == Severity.ERROR
    assert Severity.WARNING == "WARNING"  # the name, in any case
    assert Severity.ERROR != "warning" and not (Severity.ERROR == "bogus")
    assert Severity.INFO in ("info", "warning")
    f = Finding(code="V001", name="nan-values", severity=Severity.ERROR, message="m")
    assert f.severity == "error"
    assert [x for x in [f] if x.severity == "error"] == [f]


def test_severity_still_orders_hashes_and_serialises_as_before():
    assert Severity.ERROR > Severity.WARNING > Severity.INFO
    assert Severity.ERROR >= "warning" and Severity.INFO < "error"
    assert sorted([Severity.ERROR, Severity.INFO, Severity.WARNING]) == [
        Severity.INFO,
        Severity.WARNING,
        Severity.ERROR,
    ]
    assert max([Severity.INFO, Severity.ERROR]) is Severity.ERROR
    counts = {Severity.ERROR: 2, Severity.WARNING: 1}
    assert counts[Severity.ERROR] == 2 and len({Severity.ERROR, Severity.ERROR}) == 1
    assert Severity.ERROR == 30 and int(Severity.WARNING) == 20  # still an IntEnum
    assert str(Severity.ERROR) == "error" and f"{Severity.INFO:>5}" == " info"
    assert Severity.parse("error") is Severity.ERROR
    f = Finding(code="V001", name="nan-values", severity=Severity.WARNING, message="m")
    assert json.loads(json.dumps(f.to_dict()))["severity"] == "warning"
    with pytest.raises(TypeError):
        _ = Severity.ERROR < "bogus"
