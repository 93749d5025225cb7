"""GradientMonitor's per-snapshot figures: M020 update/weight ratio, M021 float16 range, the
clipping figures, and saving the first non-finite step for ``datavet probe`` to replay."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import datavet
from datavet import GradientMonitor

from .models import CE, finding, status


def train(opt_factory, *, steps=30, layer_every=5, model=None, **options):
    torch.manual_seed(0)
    model = model or nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 5))
    opt = opt_factory(model.parameters())
    monitor = GradientMonitor(layer_every=layer_every, **options)
    for _ in range(steps):
        x, y = torch.randn(32, 10), torch.randint(0, 5, (32,))
        loss = CE(model(x), y)
        opt.zero_grad()
        loss.backward()
        monitor.step(model, loss=loss)
        opt.step()
    return monitor


def test_update_ratio_far_too_large_fires():
    monitor = train(lambda p: torch.optim.SGD(p, lr=50.0))
    f = finding(monitor.report(), "M020")
    assert f.metrics["too_large"] >= 1 and f.metrics["max_median_ratio"] > 0.1
    assert "too large" in f.message and "lower the learning rate" in f.hint


def test_update_ratio_far_too_small_fires():
    monitor = train(lambda p: torch.optim.SGD(p, lr=1e-9))
    f = finding(monitor.report(), "M020")
    assert f.metrics["too_small"] >= 1 and f.metrics["min_median_ratio"] < 1e-6
    assert "too small" in f.message


def test_healthy_adam_update_ratio_is_quiet():
    monitor = train(lambda p: torch.optim.Adam(p, lr=1e-3))
    r = monitor.report()
    assert status(r, "M020") == "passed"
    ratios = [v for vs in monitor.update_ratios().values() for v in vs]
    assert len(ratios) >= 6 and 1e-5 < sorted(ratios)[len(ratios) // 2] < 1e-1


def test_update_ratio_needs_snapshots():
    monitor = train(lambda p: torch.optim.SGD(p, lr=50.0), steps=8)
    assert status(monitor.report(), "M020") == "skipped"


def half_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 1)).half()


def run_half(scale, *, activations=True, steps=12):
    model = half_model()
    monitor = GradientMonitor(layer_every=5, activations=activations, update_ratio=False)
    for _ in range(steps):
        x = (torch.randn(8, 10) * scale).half()
        out = model(x)
        loss = out.float().mean()
        model.zero_grad()
        loss.backward()
        monitor.step(model, loss=loss)
    return monitor


def test_fp16_activations_near_the_limit_fire():
    r = run_half(8000.0).report()
    f = finding(r, "M021")
    assert f.metrics["max_abs"] >= 1e4 and "65504" in f.message
    assert any(c in ("0", "1", "2") for c in f.columns)


def test_fp16_activations_in_range_are_quiet():
    monitor = run_half(1.0)
    assert status(monitor.report(), "M021") == "passed"
    assert monitor.fp16_range()["activation_abs_max"]  # the hooks recorded the snapshot passes
    assert "float16" in monitor.fp16_range()["activation_dtypes"]


def test_fp32_model_is_skipped_with_the_figures_kept():
    monitor = train(lambda p: torch.optim.Adam(p, lr=1e-3), activations=True)
    r = monitor.report()
    assert status(r, "M021") == "skipped"
    assert monitor.fp16_range()["gradient_abs_max"]


def spiky(monitor_after_clip: bool, clip_norm=None):
    torch.manual_seed(0)
    model = nn.Linear(10, 5)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    monitor = GradientMonitor(window=20, min_history=5, clip_norm=clip_norm)
    for i in range(60):
        x, y = torch.randn(32, 10), torch.randint(0, 5, (32,))
        if i in (30, 45):
            x = x * 100  # an outlier batch
        loss = CE(model(x), y)
        opt.zero_grad()
        loss.backward()
        if monitor_after_clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.05)
        monitor.step(model, loss=loss)
        if not monitor_after_clip and clip_norm:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
        opt.step()
    return monitor


def test_spikes_come_with_a_suggested_max_norm():
    monitor = spiky(False)
    f = finding(monitor.report(), "M011")
    clip = monitor.clipping()
    assert clip["suggested_max_norm"] < clip["max"] and clip["ceiling"] is None
    spikes = monitor.spikes
    assert spikes and all(
        monitor.norms[monitor.step_numbers.index(st)] > clip["suggested_max_norm"] for st in spikes
    )
    assert f"max_norm={clip['suggested_max_norm']:.3g}" in f.message


def test_declared_clip_norm_counts_the_clipped_steps():
    monitor = spiky(False, clip_norm=1.0)
    clip = monitor.clipping()
    assert clip["clipped_steps"] >= 2
    assert "cut" in finding(monitor.report(), "M011").message


def test_a_monitor_after_clipping_sees_the_ceiling():
    clip = spiky(True).clipping()
    assert clip["ceiling"] == pytest.approx(0.05, rel=1e-3)


class LogModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)

    def forward(self, x):
        return self.lin(torch.log(x))


def test_first_nonfinite_step_is_saved_and_replays_through_probe(tmp_path):
    path = tmp_path / "nonfinite.pt"
    torch.manual_seed(0)
    model = LogModel()
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    monitor = GradientMonitor(save_nonfinite=path)
    for i in range(10):
        x = torch.rand(8, 3) + 0.1
        if i == 6:
            x[2, 0] = 0.0  # log(0) = -inf
        y = torch.zeros(8, 1)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        monitor.step(model, loss=loss, batch=(x, y))
        if torch.isfinite(loss):
            opt.step()
    assert monitor.first_nonfinite["step"] == 6 and monitor.saved == str(path)
    f = finding(monitor.report(), "M012")
    assert str(path) in f.message and "datavet probe" in f.message
    saved = GradientMonitor.load_saved(path)
    assert saved["step"] == 6 and float(saved["batch"][0][2, 0]) == 0.0
    replay = LogModel()
    replay.load_state_dict(saved["model"])
    r = datavet.probe(replay, saved["batch"], loss_fn=nn.functional.mse_loss, select="M004")
    assert finding(r, "M004").examples == (2,)


def _nonfinite_run(path) -> GradientMonitor:
    torch.manual_seed(0)
    model = LogModel()
    monitor = GradientMonitor(save_nonfinite=path)
    for i in range(3):
        x = torch.rand(8, 3) + 0.1
        if i == 1:
            x[2, 0] = 0.0
        loss = nn.functional.mse_loss(model(x), torch.zeros(8, 1))
        model.zero_grad()
        loss.backward()
        monitor.step(model, loss=loss, batch=(x,))
    return monitor


def test_a_file_that_is_not_a_snapshot_is_never_replaced(tmp_path):
    """The snapshot path is checked when the monitor is made: a user's file (a checkpoint) there
    is refused, and left byte for byte as it was."""
    import hashlib

    from datavet.errors import OutputError

    path = tmp_path / "model.pt"
    torch.save({"weights": torch.ones(3)}, path)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(OutputError, match="delete it, or choose another path"):
        GradientMonitor(save_nonfinite=path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    with pytest.raises(datavet.UsageError, match="file path"):
        GradientMonitor(save_nonfinite="-")


def test_a_snapshot_of_an_earlier_run_is_replaced(tmp_path):
    path = tmp_path / "nonfinite.pt"
    assert _nonfinite_run(path).saved == str(path)
    assert _nonfinite_run(path).saved == str(path)  # the rerun may replace its own snapshot
    assert GradientMonitor.load_saved(path)["step"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["nonfinite.pt"]  # no temporary left


def test_a_fifo_stays_a_fifo(tmp_path):
    """A path that is not a regular file (a FIFO here; /dev/null alike) is written in place, never
    renamed over (the snapshot is small: it fits the pipe's buffer, read after the run)."""
    import os
    import stat

    fifo = tmp_path / "snapshot.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        monitor = _nonfinite_run(fifo)
        data = os.read(reader, 1 << 16)
    finally:
        os.close(reader)
    assert monitor.saved == str(fifo)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert data[:2] == b"PK"  # torch.save's zip archive came through the pipe


def test_without_a_nonfinite_step_nothing_is_saved(tmp_path):
    path = tmp_path / "nonfinite.pt"
    monitor = train(lambda p: torch.optim.Adam(p, lr=1e-3), save_nonfinite=path)
    assert monitor.saved is None and not path.exists()
