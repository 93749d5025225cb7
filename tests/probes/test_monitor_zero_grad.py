"""M018 zero-gradient-layer: GradientMonitor names parameters whose gradient stays at zero."""

from __future__ import annotations

import torch
from torch import nn

import datavet


class Net(nn.Module):
    def __init__(self, detach: bool):
        super().__init__()
        self.body = nn.Linear(10, 32)
        self.head = nn.Linear(32, 5)
        self.detach = detach

    def forward(self, x):
        h = torch.relu(self.body(x))
        return self.head(h.detach() if self.detach else h)


def train(detach: bool, steps=30):
    torch.manual_seed(0)
    model = Net(detach)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    monitor = datavet.GradientMonitor(layer_every=10)
    for _ in range(steps):
        x, y = torch.randn(16, 10), torch.randint(0, 5, (16,))
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        monitor.step(model, loss=loss)
        opt.step()
    return monitor.report()


def test_detached_body_is_named():
    r = train(detach=True)
    (f,) = [f for f in r.findings if f.code == "M018"]
    assert f.columns == ("body.weight", "body.bias") and f.metrics["share"] > 0.6


def test_healthy_training_is_quiet():
    r = train(detach=False)
    assert [f.code for f in r.findings] == []
    assert [o.code for o in r.outcomes] == ["M011", "M012", "M018", "M020", "M021"]
