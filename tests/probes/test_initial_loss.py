"""M001 initial-loss-mismatch: ln C, the class-prior entropy, mean(y^2); two-sided."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from .models import CE, MSE, finding, run, seed_batch, seed_mlp, status


def m001(report):
    return report.probes["checks"]["M001"]


def test_seed_normal_model_matches_ln_5():
    x, y, _ = seed_batch()
    r = run(seed_mlp(), (x, y), select="M001")
    d = m001(r)
    assert status(r, "M001") == "passed"
    assert f"{d['initial_loss']:.3f}" == "1.663"
    assert d["matched"] == "uniform logits"
    uniform = d["references"][0]
    assert uniform["formula"] == "ln 5" and f"{uniform['value']:.3f}" == "1.609"
    assert "ln 5 = 1.609" in d["headline"]


def test_seed_softmax_twice_passes_the_initial_loss_check():
    """PEERS lesson 6: 1.617 vs ln 5 = 1.609 is inside tolerance; M002/M003 must catch it."""
    x, y, _ = seed_batch()
    r = run(seed_mlp(nn.Softmax(dim=1)), (x, y), select="M001")
    assert status(r, "M001") == "passed"
    assert f"{m001(r)['initial_loss']:.3f}" == "1.617"


def test_the_class_prior_entropy_is_a_reference():
    x, y, _ = seed_batch()  # seed labels: counts [4, 6, 2, 2, 2] over 5 classes
    r = run(seed_mlp(), (x, y), select="M001")
    prior = m001(r)["references"][1]
    p = [4 / 16, 6 / 16, 2 / 16, 2 / 16, 2 / 16]
    assert prior["name"] == "class-prior entropy"
    assert prior["value"] == pytest.approx(-sum(q * math.log(q) for q in p))


def test_large_initial_logits_fire_above():
    x, y, _ = seed_batch()
    model = seed_mlp()
    with torch.no_grad():
        model[2].weight.mul_(30)  # an output layer initialised far too large
    r = run(model, (x, y), select="M001")
    f = finding(r, "M001")
    assert f.severity.label == "warning"
    assert f.metrics["ratio"] > 2
    assert "ln 5 = 1.609" in f.message and "too large" in f.message


def test_a_model_that_already_knows_the_labels_fires_below():
    class Leaky(nn.Module):  # the label rides along as the last input column
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(torch.tensor(8.0))

        def forward(self, x):
            return nn.functional.one_hot(x[:, -1].long(), 5).float() * self.scale

    x, y, _ = seed_batch()
    x = torch.cat([x, y[:, None].float()], dim=1)
    r = run(Leaky(), (x, y), select="M001")
    f = finding(r, "M001")
    assert f.metrics["ratio"] < 0.5
    assert "already predicts" in f.message


def test_tolerance_is_two_sided_and_configurable():
    x, y, _ = seed_batch()
    r = run(seed_mlp(), (x, y), select="M001", thresholds={"M001": {"tolerance": 1.01}})
    assert status(r, "M001") == "failed"  # 1.663 is 1.033x ln 5: outside a 1% tolerance


def test_regression_reference_is_mean_y_squared():
    torch.manual_seed(0)
    x = torch.randn(32, 4)
    y = 0.5 + torch.randn(32, 1)  # near standard scale (3 + N(0, 1) now fires: test_target_scale)
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
    r = run(model, (x, y), loss_fn=MSE, select="M001")
    d = m001(r)
    ref = d["references"][0]
    assert ref["formula"] == "mean(y^2)"
    assert ref["value"] == pytest.approx(float(y.pow(2).mean()), rel=1e-6)
    assert d["matched"] == "predicting 0" and status(r, "M001") == "passed"


def test_regression_with_huge_outputs_fires():
    torch.manual_seed(0)
    x = torch.randn(32, 4) * 100  # unstandardised inputs: large initial predictions
    y = torch.randn(32, 1)
    model = nn.Sequential(nn.Linear(4, 16), nn.Linear(16, 1))
    r = run(model, (x, y), loss_fn=MSE, select="M001")
    assert finding(r, "M001").metrics["ratio"] > 100


def test_binary_cross_entropy_uses_ln_2():
    torch.manual_seed(0)
    x = torch.randn(20, 3)
    y = (torch.rand(20) > 0.5).float()
    model = nn.Sequential(nn.Linear(3, 1), nn.Flatten(0))
    r = run(model, (x, y), loss_fn=nn.BCEWithLogitsLoss(), select="M001")
    assert r.task == "classification" and "binary" in r.task_reason
    assert m001(r)["references"][0]["formula"] == "ln 2"
    assert status(r, "M001") == "passed"


def test_a_non_finite_initial_loss_is_left_to_m004():
    from .models import log_feature_case

    model, (x, _) = log_feature_case()
    y = torch.zeros(6, dtype=torch.long)
    head = nn.Sequential(model, nn.Linear(1, 2), nn.Softplus(), nn.Linear(2, 2))
    x[4, 0] = -1.0  # log of a negative number: NaN all the way to the loss
    r = run(head, (x, y), loss_fn=CE, select="M001")
    assert status(r, "M001") == "skipped" and "M004" in r.outcomes[0].reason


def test_sequence_logits_use_ln_of_the_vocabulary_not_of_the_length():
    from .test_future_leakage import VOCAB, lm, lm_batch, lm_loss

    r = run(lm("causal"), lm_batch(), loss_fn=lm_loss, select="M001")
    d = r.probes["checks"]["M001"]
    assert d["references"][0]["formula"] == f"ln {VOCAB}"
    assert d["matched"] == "uniform logits"
