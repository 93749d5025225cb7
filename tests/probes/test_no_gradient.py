"""M015: parameters that require a gradient but never get one, named with their share."""

from __future__ import annotations

import torch
from torch import nn

from .models import finding, run, seed_batch, seed_mlp


class Detached(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(10, 64)
        self.head = nn.Linear(64, 5)

    def forward(self, x):
        return self.head(torch.relu(self.body(x)).detach())


class DataArithmetic(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(10))
        self.net = seed_mlp()

    def forward(self, x):
        return self.net(x * self.scale.data)  # .data: no gradient reaches scale


def test_detached_path_is_named_with_its_share():
    x, y, _ = seed_batch()
    torch.manual_seed(0)
    f = finding(run(Detached(), (x, y), select="M015"), "M015")
    assert f.columns == ("body.weight", "body.bias")
    assert f.metrics["share"] == 704 / (704 + 325) and "68.4%" in f.message


def test_data_arithmetic_is_found():
    x, y, _ = seed_batch()
    f = finding(run(DataArithmetic(), (x, y), select="M015"), "M015")
    assert f.columns == ("scale",)


def test_healthy_model_is_quiet():
    x, y, _ = seed_batch()
    assert run(seed_mlp(), (x, y), select="M015").findings == []


def test_frozen_backbone_is_info():
    x, y, _ = seed_batch()
    model = seed_mlp()
    model[0].requires_grad_(False)  # 704 of 1,029 weights
    f = finding(run(model, (x, y), select="M015"), "M015")
    assert f.severity.label == "info" and "requires_grad=False" in f.message
