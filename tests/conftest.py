"""Shared fixtures. Tests build tiny inline frames; the seed table comes from sample_data."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run: a suite that fails one run in fifty on a
# new random example is not green. DATAVET_HYPOTHESIS_RANDOM=1 draws new ones, to explore.
settings.register_profile(
    "datavet", derandomize=not os.environ.get("DATAVET_HYPOTHESIS_RANDOM"), print_blob=True
)
settings.load_profile("datavet")

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DATA = ROOT / "sample_data"


def _load_sample_module():
    spec = importlib.util.spec_from_file_location(
        "make_sample_data", SAMPLE_DATA / "make_sample_data.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_sample_data", module)
    spec.loader.exec_module(module)
    return module


sample = _load_sample_module()


@pytest.fixture
def planted():
    """(train, test) DataFrames of the seed's planted-problem table."""
    return sample.planted()


@pytest.fixture
def clean():
    """(train, test) DataFrames with nothing wrong."""
    return sample.clean()


def codes(report) -> list[str]:
    return sorted({f.code for f in report.findings})
