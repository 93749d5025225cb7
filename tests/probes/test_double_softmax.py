"""M003 double-softmax: probabilities fed to a loss that applies (log-)softmax again."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from .models import finding, run, seed_batch, seed_mlp, status


def test_seed_softmax_twice_fires_with_the_floor():
    x, y, _ = seed_batch()
    r = run(seed_mlp(nn.Softmax(dim=1)), (x, y), select="M003")
    f = finding(r, "M003")
    assert f.severity.label == "error"
    assert f.metrics["loss_floor"] == pytest.approx(math.log(1 + 4 / math.e))
    assert "log(1 + 4/e) = 0.905" in f.message
    assert f.metrics["loss_on_crafted"] == pytest.approx(
        f.metrics["cross_entropy_of_probabilities"]
    )


def test_logits_with_cross_entropy_pass():
    x, y, _ = seed_batch()
    r = run(seed_mlp(), (x, y), select="M003")
    assert status(r, "M003") == "passed"
    assert r.probes["checks"]["M003"]["output_is_distribution"] is False


def test_softmax_with_a_loss_on_probabilities_passes():
    x, y, _ = seed_batch()

    def nll_of_probabilities(p, target):
        return nn.functional.nll_loss(torch.log(p), target)

    r = run(seed_mlp(nn.Softmax(dim=1)), (x, y), loss_fn=nll_of_probabilities, select="M003")
    assert status(r, "M003") == "passed"
    d = r.probes["checks"]["M003"]
    assert d["output_is_distribution"] is True and d["loss_reapplies"] is False


def test_sigmoid_twice_fires_for_binary():
    torch.manual_seed(0)
    x = torch.randn(20, 3)
    y = (torch.rand(20, 1) > 0.5).float()
    model = nn.Sequential(nn.Linear(3, 1), nn.Sigmoid())
    r = run(model, (x, y), loss_fn=nn.BCEWithLogitsLoss(), select="M003")
    f = finding(r, "M003")
    assert "sigmoid" in f.message and "loss_floor" not in f.metrics


def test_sigmoid_with_bce_on_probabilities_passes():
    torch.manual_seed(0)
    x = torch.randn(20, 3)
    y = (torch.rand(20, 1) > 0.5).float()
    model = nn.Sequential(nn.Linear(3, 1), nn.Sigmoid())
    r = run(model, (x, y), loss_fn=nn.BCELoss(), select="M003")
    assert status(r, "M003") == "passed"


def test_regression_is_skipped():
    torch.manual_seed(0)
    r = run(
        nn.Linear(3, 1), (torch.randn(8, 3), torch.randn(8, 1)), loss_fn=nn.MSELoss(), select="M003"
    )
    assert status(r, "M003") == "skipped"


def test_the_loss_is_evaluated_with_the_users_function_not_assumed():
    """A loss with reduction='sum' on double softmax still fires (compared on a log scale)."""
    x, y, _ = seed_batch()
    r = run(
        seed_mlp(nn.Softmax(dim=1)),
        (x, y),
        loss_fn=nn.CrossEntropyLoss(reduction="sum"),
        select="M003",
    )
    assert status(r, "M003") == "failed"


def test_sequence_logits_with_classes_last_are_understood():
    """A language model's (N, T, V) output with (N, T) targets and a flattening loss: the
    classes are on the last dimension, not dimension 1 (T)."""
    from .test_future_leakage import VOCAB, lm, lm_batch, lm_loss

    softmaxed = nn.Sequential(lm("causal"), nn.Softmax(dim=-1))
    r = run(softmaxed, lm_batch(), loss_fn=lm_loss, select="M003")
    assert (
        r.task_reason
        == f"integer targets (4, 12) and {VOCAB} classes on the output's last dimension"
    )
    f = finding(r, "M003")
    assert f.metrics["loss_floor"] == pytest.approx(math.log(1 + (VOCAB - 1) / math.e))
    assert status(run(lm("causal"), lm_batch(), loss_fn=lm_loss, select="M003"), "M003") == "passed"
