"""Dagster: a blocking asset check that stops downstream assets when datavet finds problems.

``@asset_check(asset=..., blocking=True)`` returning ``AssetCheckResult(passed=False,
severity=AssetCheckSeverity.ERROR)`` fails the run and keeps the downstream ``model`` asset from
materialising. datavet's errors map to ``ERROR`` (blocking), warnings to ``WARN`` (shown, not
blocking); the counts and failing rule codes go into the check's metadata.

Dagster is imported only inside :func:`build_definitions`; :func:`check_result` (the datavet side:
the result's fields) runs and is tested without it. Run it:

    dagster dev -f examples/dagster_assets.py
    python examples/dagster_assets.py          # one in-process run, prints the outcome
"""

import os  # no `from __future__ import annotations`: Dagster resolves annotations at runtime
from pathlib import Path

import datavet

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
TRAIN = os.environ.get("DATAVET_TRAIN", str(SAMPLE / "clean_train.csv"))
TEST = os.environ.get("DATAVET_TEST", str(SAMPLE / "clean_test.csv"))


def check_result(report: datavet.Report) -> dict:
    """The fields of the AssetCheckResult for ``report``; ``severity`` is the name of an
    ``AssetCheckSeverity`` member ("ERROR" or "WARN")."""
    failing = report.failing()
    worst_is_error = bool(report.crashed) or any(
        f.severity is datavet.Severity.ERROR for f in failing
    )
    counts = report.counts()
    codes = sorted({f.code for f in failing})
    return {
        "passed": report.exit_code() == 0,
        "severity": "ERROR" if worst_is_error else "WARN",
        "metadata": {
            "errors": counts["error"],
            "warnings": counts["warning"],
            "info": counts["info"],
            "ignored": len(report.ignored),
            "fail_on": report.fail_on.label,
            "failing_rules": ", ".join(codes) or "none",
            "exit_code": report.exit_code(),
        },
        "description": (
            "; ".join(f"{f.code} {f.split or '-'}: {f.message}" for f in failing[:5])
            or "no findings at or above fail-on"
        ),
    }


def build_definitions(train: str = TRAIN, test: str | None = TEST, *, target: str = "label"):
    import dagster as dg
    import pandas as pd

    @dg.asset
    def training_data() -> dict:
        return {"train": pd.read_csv(train), "test": pd.read_csv(test) if test else None}

    @dg.asset_check(asset=training_data, blocking=True)
    def datavet_audit(training_data: dict) -> dg.AssetCheckResult:
        report = datavet.audit(training_data["train"], training_data["test"], target=target)
        fields = check_result(report)
        return dg.AssetCheckResult(
            passed=fields["passed"],
            severity=dg.AssetCheckSeverity[fields["severity"]],
            metadata=fields["metadata"],
            description=fields["description"],
        )

    @dg.asset(deps=[training_data])
    def model() -> None:
        print("training on data that passed datavet")

    return dg.Definitions(assets=[training_data, model], asset_checks=[datavet_audit])


try:
    import dagster  # noqa: F401
except ImportError:  # the module stays importable, and check_result() testable, without Dagster
    pass
else:
    defs = build_definitions()

if __name__ == "__main__":
    import dagster as dg

    result = dg.materialize([*defs.assets, *defs.asset_checks], raise_on_error=False)
    checks = [
        (e.check_name, e.passed, e.severity.value) for e in result.get_asset_check_evaluations()
    ]
    done = sorted(m.asset_key.to_user_string() for m in result.get_asset_materialization_events())
    print(f"run success={result.success} checks={checks} materialized={done}")
