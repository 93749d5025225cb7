"""M002 cannot-overfit-batch: the seed's three cases, and what makes the loop unable to fit."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from .models import finding, run, seed_batch, seed_mlp, status


@pytest.fixture(scope="module")
def seed_cases():
    x, y, shuffled = seed_batch()
    return {
        "normal": run(seed_mlp(), (x, y), select="M002"),
        "softmax twice": run(seed_mlp(nn.Softmax(dim=1)), (x, y), select="M002"),
        "random labels": run(seed_mlp(), (x, shuffled), select="M002"),
    }


def details(report):
    return report.probes["checks"]["M002"]


def test_seed_figures_initial_and_after_300_steps(seed_cases):
    # seed: normal 1.663 -> 0.0003, softmax twice 1.617 -> 0.9674, random labels 1.583 -> 0.0004
    figures = {
        k: (details(r)["initial_loss"], details(r)["final_loss"]) for k, r in seed_cases.items()
    }
    assert f"{figures['normal'][0]:.3f}" == "1.663" and f"{figures['normal'][1]:.4f}" == "0.0003"
    assert f"{figures['softmax twice'][0]:.3f}" == "1.617"
    assert f"{figures['softmax twice'][1]:.4f}" == "0.9674"
    assert f"{figures['random labels'][0]:.3f}" == "1.583"
    assert f"{figures['random labels'][1]:.4f}" == "0.0004"
    assert all(details(r)["steps"] == 300 for r in seed_cases.values())


def test_normal_model_passes(seed_cases):
    r = seed_cases["normal"]
    assert status(r, "M002") == "passed" and r.findings == [] and r.exit_code() == 0


def test_softmax_twice_fails_and_says_so(seed_cases):
    r = seed_cases["softmax twice"]
    assert status(r, "M002") == "failed" and r.exit_code() == 1
    f = finding(r, "M002")
    assert f.severity.label == "error"
    assert "1.617 to 0.9674" in f.message and "300 steps" in f.message
    assert f.metrics["final_loss"] == pytest.approx(0.9674, abs=5e-5)
    assert "softmax" in f.hint


def test_random_labels_overfit_too(seed_cases):
    """The probe checks the wiring, not the data: memorising 16 random labels passes."""
    assert status(seed_cases["random labels"], "M002") == "passed"


def test_curve_is_kept_for_the_report(seed_cases):
    curve = details(seed_cases["softmax twice"])["curve"]
    assert curve[0] == [0, pytest.approx(1.617, abs=5e-4)]
    assert curve[-1][0] == 300 and len(curve) <= 101


def test_detached_parameters_are_named():
    class Detached(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(10, 64)
            self.head = nn.Linear(64, 5)

        def forward(self, x):
            return self.head(torch.relu(self.body(x)).detach())  # no gradient reaches body

    x, y, _ = seed_batch()
    torch.manual_seed(0)
    r = run(Detached(), (x, y), select="M002", thresholds={"M002": {"steps": 60}})
    f = finding(r, "M002")
    assert "never changed: body.weight, body.bias" in f.message
    assert f.columns == ("body.weight", "body.bias")


def test_steps_and_lr_are_configurable():
    x, y, _ = seed_batch()
    few = run(seed_mlp(), (x, y), select="M002", thresholds={"M002": {"steps": 3}})
    assert status(few, "M002") == "failed"  # 3 steps cannot fit even the normal model
    assert details(few)["steps"] == 3 and len(details(few)["curve"]) == 4


def test_optimizer_factory_is_used():
    x, y, _ = seed_batch()
    r = run(
        seed_mlp(),
        (x, y),
        select="M002",
        optimizer_factory=lambda params: torch.optim.SGD(params, lr=0.0),
        thresholds={"M002": {"steps": 20}},
    )
    f = finding(r, "M002")
    assert "(SGD)" in f.message
    assert f.metrics["final_loss"] == pytest.approx(f.metrics["initial_loss"])


def test_a_loss_that_turns_nan_is_reported_with_its_step():
    x, y, _ = seed_batch()
    r = run(
        seed_mlp(),
        (x, y),
        select="M002",
        optimizer_factory=lambda params: torch.optim.SGD(params, lr=1e30),
    )
    f = finding(r, "M002")
    step = f.metrics["nonfinite_step"]
    assert step >= 1 and f"at step {step}" in f.message
    assert not math.isfinite(details(r)["final_loss"])


def test_a_model_without_trainable_parameters_fails():
    """A frozen model cannot learn: an error, not a skip (preflight used to say "ok")."""
    model = seed_mlp().requires_grad_(False)
    x, y, _ = seed_batch()
    r = run(model, (x, y), select="M002")
    assert status(r, "M002") == "failed"
    (f,) = r.findings
    assert "frozen" in f.message


def test_docstring_says_it_checks_wiring_not_data():
    from datavet.probes.overfit import OverfitBatch

    doc = OverfitBatch.__doc__
    assert "wired" in doc and "random" in doc and "not** that" in doc
