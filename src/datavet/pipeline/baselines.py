"""The baselines (the B rules' evidence), fitted on the splits' samples after the scan."""

from __future__ import annotations

import traceback

from datavet.scan import Profile


def fit_baselines(profiles: dict[str, Profile], target: str, task: str, features: list[str]):
    from datavet.baselines import Baselines, run_baselines

    test = profiles.get("test")
    try:
        return run_baselines(
            profiles["train"].sample.table,
            test.sample.table if test is not None else None,
            target=target,
            task=task,
            features=features,
            sample_of=profiles["train"].rows,
        )
    except Exception as exc:  # B001/B002 report it as a crash (exit 2); the other rules go on
        return Baselines(
            task=task,
            skipped=f"crashed: {type(exc).__name__}: {exc}",
            error=traceback.format_exc(),
        )
