"""The seed's models and batches (seeds/004), rebuilt exactly, plus small planted-bug models."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

import datavet

CE = nn.functional.cross_entropy
MSE = nn.functional.mse_loss


def seed_batch():
    """``torch.manual_seed(0); x = randn(16, 10); y = randint(0, 5, (16,))`` and the shuffled
    labels of the seed's third case (the next draw, ``randperm(16)``)."""
    torch.manual_seed(0)
    x = torch.randn(16, 10)
    y = torch.randint(0, 5, (16,))
    return x, y, y[torch.randperm(16)]


def seed_mlp(*head: nn.Module) -> nn.Module:
    """The seed's model: built right after ``torch.manual_seed(1)``."""
    torch.manual_seed(1)
    return nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 5), *head)


class LogFeature(nn.Module):
    """The log of a positive feature (concentration): -inf when a 0 comes in."""

    def forward(self, x):
        return torch.cat([torch.log(x[:, :1]), x[:, 1:]], dim=1)


def log_feature_case():
    """The seed's NaN/inf localisation example; its loss ``model(x).pow(2).mean()`` is MSE
    against zeros."""
    torch.manual_seed(0)
    model = nn.Sequential(LogFeature(), nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    x = torch.rand(6, 3)
    x[4, 0] = 0.0
    return model, (x, torch.zeros(6, 1))


class NormOffset(nn.Module):
    """The seed's backward-only NaN: ``sqrt((w ** 2).sum())`` differentiated at ``w = 0``."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 1)
        self.w = nn.Parameter(torch.zeros(3))

    def forward(self, x):
        return self.lin(x) + torch.sqrt((self.w**2).sum())  # the line anomaly mode points at


def norm_case():
    torch.manual_seed(0)
    return NormOffset(), (torch.randn(8, 3), torch.randn(8, 1))


def tanh_stacks() -> tuple[torch.Tensor, dict[str, nn.Module]]:
    """The seed's activation table: ``default_rng(0)``, x0 (512, 256), then 10 weight matrices
    per configuration drawn in the seed's order; float64 so the figures match NumPy's."""
    rng = np.random.default_rng(0)
    x0 = torch.from_numpy(rng.normal(size=(512, 256)))
    models = {}
    for name, std in (("std 1", 1.0), ("std 1/sqrt(D)", 1 / np.sqrt(256)), ("std 0.01", 0.01)):
        layers: list[nn.Module] = []
        for _ in range(10):
            lin = nn.Linear(256, 256, bias=False).double()
            with torch.no_grad():  # a @ W in the seed is x @ weight.T here
                lin.weight.copy_(torch.from_numpy(rng.normal(0, std, size=(256, 256)).T))
            layers += [lin, nn.Tanh()]
        models[name] = nn.Sequential(*layers)
    return x0, models


def run(model, batch, loss_fn=CE, **kwargs):
    return datavet.probe(model, batch, loss_fn=loss_fn, **kwargs)


def codes(report) -> list[str]:
    return sorted({f.code for f in report.findings})


def status(report, code: str) -> str:
    return next(o.status.value for o in report.outcomes if o.code == code)


def finding(report, code: str):
    found = [f for f in report.findings if f.code == code]
    assert len(found) == 1, [f.message for f in found]
    return found[0]
