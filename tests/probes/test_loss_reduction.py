"""M009 batch-size-dependent-loss: a sum (or a double division) where a mean was meant."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from .models import finding, run, seed_batch, seed_mlp, status


def test_mean_reduction_passes_with_ratio_one():
    x, y, _ = seed_batch()
    r = run(seed_mlp(), (x, y), select="M009")
    assert status(r, "M009") == "passed"
    assert r.probes["checks"]["M009"]["ratio"] == pytest.approx(1.0, rel=1e-5)


def test_sum_reduction_fires_with_ratio_two():
    x, y, _ = seed_batch()
    r = run(seed_mlp(), (x, y), loss_fn=nn.CrossEntropyLoss(reduction="sum"), select="M009")
    f = finding(r, "M009")
    assert f.metrics["ratio"] == pytest.approx(2.0, rel=1e-5)
    assert "grows with the batch size" in f.message and "16 samples" in f.message


def test_dividing_by_the_batch_twice_fires_below():
    x, y, _ = seed_batch()

    def twice(out, target):
        return nn.functional.cross_entropy(out, target) / len(target)

    f = finding(run(seed_mlp(), (x, y), loss_fn=twice, select="M009"), "M009")
    assert f.metrics["ratio"] == pytest.approx(0.5, rel=1e-5)
    assert "shrinks" in f.message


def test_odd_batches_compare_equal_halves():
    x, y, _ = seed_batch()
    r = run(seed_mlp(), (x[:15], y[:15]), select="M009")
    assert r.probes["checks"]["M009"]["samples"] == 14 and status(r, "M009") == "passed"


def test_a_batch_of_one_is_skipped():
    x, y, _ = seed_batch()
    r = run(seed_mlp(), (x[:1], y[:1]), select="M009")
    assert status(r, "M009") == "skipped"


def test_dict_and_tuple_inputs_are_sliced_too():
    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(10, 5), nn.Linear(10, 5)

        def forward(self, left, right):
            return self.a(left) + self.b(right)

    torch.manual_seed(0)
    x, y, _ = seed_batch()
    sum_loss = nn.CrossEntropyLoss(reduction="sum")
    r = run(Two(), ((x, x * 2), y), loss_fn=sum_loss, select="M009")
    assert finding(r, "M009").metrics["ratio"] == pytest.approx(2.0, rel=1e-5)
    r = run(Two(), ({"left": x, "right": x}, y), loss_fn=sum_loss, select="M009")
    assert finding(r, "M009").metrics["ratio"] == pytest.approx(2.0, rel=1e-5)
