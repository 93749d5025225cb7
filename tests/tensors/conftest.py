"""Helpers for the tensor tests: small image-like arrays with planted problems."""

from __future__ import annotations

import numpy as np
import pytest


def images(n: int = 120, shape=(3, 8, 8), seed: int = 0, dtype=np.float32) -> np.ndarray:
    """Standardised random images (nothing wrong with them)."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, *shape)).astype(dtype)


def labels(n: int = 120, classes: int = 3, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, classes, n)


def codes(report) -> list[str]:
    return sorted({f.code for f in report.findings})


def by_code(report, code: str) -> list:
    return [f for f in report.findings if f.code == code]


@pytest.fixture
def torch():
    import torch

    return torch
