"""M019: an AMP (float16 autocast) train step without GradScaler fires; the twins are quiet."""

from __future__ import annotations

import torch

from .models import CE, finding, run, seed_batch, seed_mlp, status


def amp_step_without_scaler(model, optimizer, batch):
    x, y = batch
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16):
        loss = CE(model(x), y) * 1e-4  # a small loss: some float16 gradients underflow
    loss.backward()
    optimizer.step()


def amp_step_with_scaler(model, optimizer, batch):
    x, y = batch
    scaler = torch.amp.GradScaler("cpu")
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16):
        loss = CE(model(x), y) * 1e-4
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()


def amp_step_disabled_scaler(model, optimizer, batch):
    x, y = batch
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16):
        loss = CE(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()


def bf16_step(model, optimizer, batch):
    x, y = batch
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = CE(model(x), y)
    loss.backward()
    optimizer.step()


def fp32_step(model, optimizer, batch):
    x, y = batch
    optimizer.zero_grad()
    CE(model(x), y).backward()
    optimizer.step()


def test_fp16_autocast_without_scaler_fires():
    x, y, _ = seed_batch()
    r = run(seed_mlp(), (x, y), train_step=amp_step_without_scaler, select="M019")
    f = finding(r, "M019")
    assert f.severity.label == "warning"
    assert "never called" in f.message and "GradScaler" in f.hint
    assert f.metrics["scale_calls"] == 0
    assert 0 <= f.metrics["underflow_share"] <= 1


def test_the_same_step_with_grad_scaler_is_quiet():
    x, y, _ = seed_batch()
    r = run(seed_mlp(), (x, y), train_step=amp_step_with_scaler, select="M019")
    assert status(r, "M019") == "passed"
    assert r.probes["checks"]["M019"]["scale_calls"] == 1


def test_a_disabled_scaler_does_not_count_as_scaling():
    x, y, _ = seed_batch()
    f = finding(run(seed_mlp(), (x, y), train_step=amp_step_disabled_scaler, select="M019"), "M019")
    assert "disabled" in f.message


def test_bfloat16_and_fp32_steps_are_skipped():
    x, y, _ = seed_batch()
    for step in (bf16_step, fp32_step):
        r = run(seed_mlp(), (x, y), train_step=step, select="M019")
        assert status(r, "M019") == "skipped"


def test_no_train_step_is_skipped_and_the_scaler_class_is_restored():
    x, y, _ = seed_batch()
    original = torch.amp.GradScaler.scale
    assert status(run(seed_mlp(), (x, y), select="M019"), "M019") == "skipped"
    run(seed_mlp(), (x, y), train_step=amp_step_without_scaler, select="M019")
    assert torch.amp.GradScaler.scale is original
