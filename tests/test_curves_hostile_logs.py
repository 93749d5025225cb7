"""curves: a cut-off last line, losses that go negative, several runs in one file, NaN steps
the run recovered from, C005 on converged runs, binary logs."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from datavet import InputError, UsageError, diagnose_curves
from datavet.cli import main
from datavet.curves.gradients import GradientSpikes


def _records(steps, losses, key="step"):
    return [{key: int(s), "train_loss": float(v)} for s, v in zip(steps, losses)]


def _codes(report):
    return [f.code for f in report.findings]


def _finding(report, code):
    (f,) = [f for f in report.findings if f.code == code]
    return f


def _csv(path, steps, losses):
    path.write_text("step,train_loss\n" + "".join(f"{a},{b}\n" for a, b in zip(steps, losses)))
    return path


# -- a run still writing, or killed mid-line -------------------------------------------


def test_a_cut_off_last_json_line_is_left_out_with_a_note(tmp_path):
    log = tmp_path / "run.jsonl"
    with open(log, "w") as f:
        for s in range(400):
            f.write(json.dumps({"step": s, "loss": 2.3 * 0.99**s}) + "\n")
        f.write('{"step": 400, "lo')
    r = diagnose_curves(log)
    assert r.datasets["log"]["rows"] == 400 and r.exit_code() == 0
    assert any("last line (401) is cut off" in n for n in r.notes)
    # garbage inside the log is still an error
    log.write_text('{"step": 0, "loss": 2}\n{"step": 1, "lo\n{"step": 2, "loss": 1}')
    with pytest.raises(InputError, match="line 2 is not JSON"):
        diagnose_curves(log)


def test_a_cut_off_last_csv_row_is_left_out_not_read_as_nan(tmp_path):
    log = tmp_path / "run.csv"
    rows = "".join(f"{s},{2.3 * 0.99**s},{1 + 0.01 * (s % 3)}\n" for s in range(100))
    log.write_text("step,loss,grad_norm\n" + rows + "100,0.8")
    r = diagnose_curves(log)
    assert r.datasets["log"]["rows"] == 100
    assert _codes(r) == []  # the padded row gave a NaN gradient norm: C001
    assert any("last row (line 102) is cut off (2 of 3 fields)" in n for n in r.notes)


# -- a loss that takes values <= 0 --------------------------------------------------------


def test_a_negative_loss_that_climbs_back_and_stays_is_a_divergence_from_its_turn():
    s = np.arange(400)
    loss = np.r_[np.linspace(0, -3, 200), np.linspace(-3, -0.5, 200)]
    f = _finding(diagnose_curves(_records(s, loss)), "C002")
    assert abs(f.metrics["onset_step"] - 200) <= 3
    assert "not as a ratio" in f.message


def test_a_loss_crossing_zero_gets_its_onset_and_no_ratio():
    rng = np.random.default_rng(1)
    s = np.arange(600)
    loss = np.r_[np.linspace(1, -2, 300), np.linspace(-2, 5, 300)] + rng.normal(0, 0.02, 600)
    f = _finding(diagnose_curves(_records(s, loss)), "C002")
    assert abs(f.metrics["onset_step"] - 300) <= 10  # the ratio rules said 389
    assert "344x" not in f.message and "140x" not in f.message
    for noise in (0.05, 0.3):  # a healthy negative loss is no divergence
        healthy = -2 * (1 - np.exp(-s / 100)) + rng.normal(0, noise, 600)
        assert "C002" not in _codes(diagnose_curves(_records(s, healthy)))


# -- several runs in one file ---------------------------------------------------------


def _multirun(tmp_path):
    rows = ["run,step,train_loss"]
    for run in "ab":
        for s in range(300):
            v = 2.3 * np.exp(-s / 60) + 0.1 if run == "a" else 2.3 + s * 0.05
            rows.append(f"{run},{s},{v}")
    log = tmp_path / "multirun.csv"
    log.write_text("\n".join(rows) + "\n")
    return log


def test_several_runs_in_one_file_are_refused_naming_the_column(tmp_path):
    with pytest.raises(InputError, match=r"2 runs in its 'run' column \('a', 'b'\).*--run"):
        diagnose_curves(_multirun(tmp_path))


def test_one_run_of_several_is_diagnosed_on_its_own(tmp_path):
    log = _multirun(tmp_path)
    assert _codes(diagnose_curves(log, run="a")) == []
    r = diagnose_curves(log, run="b")
    assert _codes(r) == ["C002"] and r.datasets["log"]["rows"] == 300
    with pytest.raises(InputError, match="no run 'c'"):
        diagnose_curves(log, run="c")
    with pytest.raises(UsageError, match="no run column"):
        diagnose_curves(_records(range(10), np.ones(10)), run="a")


def test_cli_run_option(tmp_path, capsys):
    log = _multirun(tmp_path)
    assert main(["curves", str(log)]) == 2
    assert "--run NAME" in capsys.readouterr().err
    assert main(["curves", str(log), "--run", "b"]) == 1


# -- isolated NaN/inf steps the run recovered from ------------------------------------


def test_one_inf_loss_the_run_recovers_from_is_a_warning(tmp_path):
    s = np.arange(600)
    loss = 2.3 * np.exp(-s / 100) + 0.1
    loss[300] = np.inf
    r = diagnose_curves(_csv(tmp_path / "amp.csv", s, loss))
    f = _finding(r, "C001")
    assert f.severity.name == "WARNING" and r.exit_code() == 0
    assert "recovered" in f.message and "noise" not in f.message
    assert f.metrics["nonfinite_steps"] == 1
    loss[301:] = 2.5  # after the inf the loss is not where it left off: still an error
    assert _finding(diagnose_curves(_records(s, loss)), "C001").severity.name == "ERROR"


def test_empty_and_nan_cells_the_run_recovers_from_are_a_warning(tmp_path):
    s = np.arange(300)
    loss = [f"{2.3 * np.exp(-a / 60) + 0.1}" for a in s]
    loss[51], loss[52], loss[53] = "nan", "", "NaN"
    r = diagnose_curves(_csv(tmp_path / "cells.csv", s, loss))
    assert _finding(r, "C001").severity.name == "WARNING"


# -- C005 on converged runs and its wording -------------------------------------------


def test_a_converged_per_epoch_log_does_not_barely_move():
    e = np.arange(30)
    r = diagnose_curves(_records(e, 0.05 + 0.001 * np.exp(-e / 5), key="epoch"))
    assert "C005" not in _codes(r)


def test_a_fine_tuning_run_that_levels_off_does_not_barely_move():
    rng = np.random.default_rng(1)
    s = np.arange(600)
    loss = 0.30 - 0.02 * (1 - np.exp(-s / 100)) + rng.normal(0, 0.01, 600)
    assert "C005" not in _codes(diagnose_curves(_records(s, loss)))


def test_a_fine_tuning_run_far_below_ln_c_does_not_barely_move():
    rng = np.random.default_rng(3)
    s = np.arange(300)
    loss = 0.3 - 0.0001 * s + rng.normal(0, 0.01, 300)
    assert "C005" in _codes(diagnose_curves(_records(s, loss)))
    assert "C005" not in _codes(diagnose_curves(_records(s, loss), classes=10))


def test_alternating_tasks_are_read_over_whole_cycles():
    s = np.arange(600)
    loss = np.where(s % 2, 1.5, 0.5) * np.exp(-s / 1000)  # a 45% drop
    assert "C005" not in _codes(diagnose_curves(_records(s, loss)))


def test_a_rising_loss_says_rose_and_a_slow_descent_still_barely_moves():
    s = np.arange(600)
    f = _finding(diagnose_curves(_records(s, 1.0 + 0.0002 * s)), "C005")
    assert "rose 6.5%" in f.message and "lower" not in f.message
    assert "C005" in _codes(diagnose_curves(_records(s, 1.0 - 0.0001 * s)))


# -- C009 reads its thresholds ------------------------------------------------------------


def test_c009_text_gives_the_threshold_in_use():
    assert f"``factor`` ({GradientSpikes.thresholds['factor']:g})" in GradientSpikes.__doc__
    assert "(5)" not in GradientSpikes.__doc__


def test_gzip_and_tensorboard_logs_say_what_they_are(tmp_path):
    gz = tmp_path / "run.csv.gz"
    gz.write_bytes(gzip.compress(b"step,loss\n0,1\n1,0.9\n"))
    with pytest.raises(InputError, match="gzip-compressed: decompress it first"):
        diagnose_curves(gz)
    ev = tmp_path / "events.out.tfevents.1.host"
    ev.write_bytes(b"\x18\x00\x00\x00\x00\x00\x00\x00brain.Event:2")
    with pytest.raises(InputError, match="TensorBoard event file: export its scalars"):
        diagnose_curves(ev)


def test_a_trainer_state_json_is_read_from_its_log_history(tmp_path):
    history = [{"loss": 2.3 * 0.98**s, "learning_rate": 1e-4, "step": s} for s in range(50)]
    history.append({"train_runtime": 10.0, "train_loss": 9.9, "step": 50})
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"global_step": 50, "log_history": history}))
    r = diagnose_curves(path)
    assert r.curves["columns"]["train_loss"] == "loss" and r.datasets["log"]["rows"] == 50
