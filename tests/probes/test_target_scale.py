"""M001 on regression: an unscaled target (mean 1000) fires against var(y); its standardised
twin is quiet."""

from __future__ import annotations

import torch
from torch import nn

from .models import MSE, finding, run


def case(offset: float, scale: float):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(32, 6, generator=g)
    y = (offset + scale * torch.randn(32, 1, generator=g)).float()
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 1)), (x, y)


def test_unscaled_target_fires_against_its_variance():
    model, batch = case(1000.0, 10.0)
    f = finding(run(model, batch, loss_fn=MSE, select="M001"), "M001")
    assert "far from standard scale" in f.message and "var(y)" in f.message
    assert f.metrics["ratio"] > 1000 and "standardise the regression target" in f.hint


def test_standardised_target_is_quiet():
    model, batch = case(0.0, 1.0)
    assert run(model, batch, loss_fn=MSE, select="M001").findings == []
