"""Shared helpers for the curve tests: tiny synthetic logs and the sample generator."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
CURVES = ROOT / "sample_data" / "curves"


def load_make_curves():
    spec = importlib.util.spec_from_file_location("make_curves", CURVES / "make_curves.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_curves", module)
    spec.loader.exec_module(module)
    return module


def codes(report) -> list[str]:
    return sorted({f.code for f in report.findings})


def finding(report, code):
    found = [f for f in report.findings if f.code == code]
    assert len(found) == 1, [f.code for f in report.findings]
    return found[0]


def healthy_loss(n=400, seed=0, start=1.386, floor=0.2, noise=0.15):
    """A minibatch-like loss: exponential descent to a floor, multiplicative noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    clean = floor + (start - floor) * np.exp(-t / 60)
    return clean * np.exp(noise * rng.standard_normal(n))


@pytest.fixture
def records():
    """Build a list of per-step records from columns: records(step=..., train_loss=...)."""

    def build(**columns):
        n = max(len(v) for v in columns.values())
        out = []
        for i in range(n):
            rec = {}
            for k, v in columns.items():
                if i < len(v) and v[i] is not None:
                    rec[k] = float(v[i])
            out.append(rec)
        return out

    return build
