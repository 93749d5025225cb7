"""M008 eval-nondeterminism: the same input twice under eval() must give the same output."""

from __future__ import annotations

import torch
from torch import nn

from .models import MSE, finding, run, status


class AlwaysDropout(nn.Module):
    """The classic bug: functional dropout whose ``training`` argument defaults to True."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 6)

    def forward(self, x):
        return nn.functional.dropout(self.lin(x), p=0.5)


def batch():
    torch.manual_seed(0)
    return torch.randn(8, 6), torch.randn(8, 6)


def test_functional_dropout_left_on_fires():
    r = run(AlwaysDropout(), batch(), loss_fn=MSE, select="M008")
    f = finding(r, "M008")
    assert f.severity.label == "warning"
    assert f.metrics["max_abs_diff"] > 0.01
    assert "training=self.training" in f.hint


def test_dropout_module_passes():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.5), nn.Linear(6, 6))
    r = run(model, batch(), loss_fn=MSE, select="M008")
    assert status(r, "M008") == "passed"
    assert r.probes["checks"]["M008"]["max_abs_diff"] == 0


def test_functional_dropout_following_the_mode_passes():
    class Correct(AlwaysDropout):
        def forward(self, x):
            return nn.functional.dropout(self.lin(x), p=0.5, training=self.training)

    assert status(run(Correct(), batch(), loss_fn=MSE, select="M008"), "M008") == "passed"
