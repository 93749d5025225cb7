"""The baselines (the B rules' evidence), and the imports they and the scipy rules need,
started in the background while the scan runs."""

from __future__ import annotations

import importlib
import sys
import threading
import traceback

from datavet.framework import needing
from datavet.scan import Profile

PREFETCH_SKLEARN = (
    "sklearn.compose",
    "sklearn.impute",
    "sklearn.linear_model",
    "sklearn.metrics",
    "sklearn.pipeline",
    "sklearn.preprocessing",
)


def prefetch(rules, baselines: bool, test: bool = True) -> threading.Thread | None:
    """Import scipy.stats (~0.7 s) for the rules that declare ``scipy`` and will run (those
    that need a test split only when ``test``) in a background thread while the scan runs: the
    scan spends its time in NumPy and Arrow kernels that release the GIL, so the import mostly
    costs no wall time. ``audit`` joins the thread before anything else imports them (no two
    threads import one package at once). The baselines need neither SciPy nor scikit-learn
    (``datavet.linear``); ``baselines`` is kept for callers."""
    names = []
    if any(test or "test" not in r.needs for r in needing(rules, "scipy")):
        names.append("scipy.stats")
    names = [n for n in dict.fromkeys(names) if n not in sys.modules]
    if not names:
        return None

    def run():
        for name in names:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - the real import, later, reports it
                return

    thread = threading.Thread(target=run, name="datavet-prefetch", daemon=True)
    thread.start()
    return thread


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
