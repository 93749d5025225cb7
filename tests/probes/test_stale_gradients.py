"""M010 stale-gradients: the same batch twice at learning rate 0 must give the same gradients."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from .models import CE, finding, run, seed_batch, seed_mlp, status


def step_without_zero_grad(model, optimizer, batch):
    x, y = batch
    loss = CE(model(x), y)
    loss.backward()
    optimizer.step()


def step_zero_grad_first(model, optimizer, batch):
    optimizer.zero_grad()
    step_without_zero_grad(model, optimizer, batch)


def step_zero_grad_last(model, optimizer, batch):
    step_without_zero_grad(model, optimizer, batch)
    optimizer.zero_grad()


def test_missing_zero_grad_fires_with_ratio_two():
    x, y, _ = seed_batch()
    r = run(seed_mlp(), (x, y), train_step=step_without_zero_grad, select="M010")
    f = finding(r, "M010")
    assert f.severity.label == "error"
    assert f.metrics["ratio"] == pytest.approx(2.0, rel=1e-5)
    assert "zero_grad() is missing" in f.message
    assert "0.weight" in f.columns


@pytest.mark.parametrize("step", [step_zero_grad_first, step_zero_grad_last])
def test_zero_grad_anywhere_in_the_step_passes(step):
    x, y, _ = seed_batch()
    r = run(seed_mlp(), (x, y), train_step=step, select="M010")
    assert status(r, "M010") == "passed"
    assert r.probes["checks"]["M010"]["ratio"] == pytest.approx(1.0)


def test_dropout_does_not_make_a_correct_step_look_stale():
    x, y, _ = seed_batch()
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Dropout(0.5), nn.Linear(64, 5))
    r = run(model, (x, y), train_step=step_zero_grad_first, select="M010")
    assert status(r, "M010") == "passed"


def test_a_step_that_never_calls_the_optimizer_fires():
    def forgets_step(model, optimizer, batch):
        optimizer.zero_grad()
        CE(model(batch[0]), batch[1]).backward()

    x, y, _ = seed_batch()
    f = finding(run(seed_mlp(), (x, y), train_step=forgets_step, select="M010"), "M010")
    assert "called optimizer.step() 0 time(s)" in f.message


def test_the_optimizer_factory_is_used_at_learning_rate_zero():
    x, y, _ = seed_batch()
    made = []

    def factory(params):
        made.append(torch.optim.SGD(params, lr=0.5, momentum=0.9))
        return made[-1]

    model = seed_mlp()
    before = [p.detach().clone() for p in model.parameters()]
    r = run(
        model, (x, y), train_step=step_without_zero_grad, optimizer_factory=factory, select="M010"
    )
    assert status(r, "M010") == "failed"
    assert made and made[0].param_groups[0]["lr"] == 0.0
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))


def test_without_a_train_step_it_is_skipped():
    x, y, _ = seed_batch()
    r = run(seed_mlp(), (x, y), select="M010")
    assert status(r, "M010") == "skipped" and "train_step" in r.outcomes[0].reason
