"""The probes' cost, in training steps of the model, is reported and capped by ``budget``."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from datavet.errors import UsageError

from .models import run, seed_batch, seed_mlp


def test_cost_is_reported_per_probe_and_in_a_note():
    x, y, _ = seed_batch()
    r = run(seed_mlp(), (x, y), select=["M001", "M002"])
    cost = r.probes["cost"]
    assert cost["budget_steps"] == 500 and cost["steps"] > 0 and cost["step_seconds"] > 0
    assert set(cost["per_probe_steps"]) == {"M001", "M002"}
    assert any(n.startswith("probe cost: ") and "budget 500" in n for n in r.notes)


def test_no_budget_is_said():
    x, y, _ = seed_batch()
    r = run(seed_mlp(), (x, y), select="M001", budget=None)
    assert r.probes["cost"]["budget_steps"] is None
    assert any("(no budget)" in n for n in r.notes)


class Slow(nn.Module):
    """A model whose every forward pass costs the same fixed work, so the budget's unit (one
    training step) is large enough that the 5-second floor does not apply."""

    def __init__(self):
        super().__init__()
        self.net = seed_mlp()

    def forward(self, x):
        a = torch.ones(400, 400)
        for _ in range(12):
            a = a @ a / 400
        return self.net(x) + 0 * a.sum()


def test_a_small_budget_trims_m002_and_says_so(monkeypatch):
    # Without the 5-second floor the budget is 40 steps whatever this machine's speed: Slow()
    # alone (a step near 0.1 s) left the floor out on some machines, not on faster ones.
    monkeypatch.setattr("datavet.api.probes.MIN_BUDGET_S", 0.0)
    x, y, _ = seed_batch()
    r = run(Slow(), (x, y), select="M002", budget=40)
    d = r.probes["checks"]["M002"]
    assert d["steps"] < 300 and "budget" in d["budget_note"]
    cost = r.probes["cost"]
    allowed = cost["budget_seconds"] / cost["step_seconds"]  # 40 steps
    assert d["model_steps"] <= allowed + 20


@pytest.mark.parametrize("bad", [0, -5, True, "many"])
def test_budget_must_be_a_positive_number(bad):
    x, y, _ = seed_batch()
    with pytest.raises((UsageError, TypeError)):
        run(seed_mlp(), (x, y), select="M001", budget=bad)
