"""Reading training logs: formats, column names and mapping, NaN versus 'not logged', merging."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from datavet import InputError, UsageError
from datavet.curves import read_curves
from datavet.curves.source import monitor_records, parse_columns


def test_csv_aliases_and_nan_tokens(tmp_path):
    p = tmp_path / "log.csv"
    p.write_text("iteration,loss,valid_loss,learning_rate\n0,2.3,2.4,0.1\n1,nan,,0.1\n2,inf,,0.1\n")
    log = read_curves(p)
    assert log.columns == {
        "step": "iteration",
        "train_loss": "loss",
        "val_loss": "valid_loss",
        "lr": "learning_rate",
    }
    rows, steps, values = log.points("train_loss")
    assert steps.tolist() == [0, 1, 2]
    assert values[0] == 2.3 and math.isnan(values[1]) and values[2] == math.inf
    # the empty validation cells are "not logged": validation is sparse
    assert log.points("val_loss")[1].tolist() == [0.0]
    assert log.format == "csv" and log.step_from == "step"


def test_tsv_and_json_array(tmp_path):
    tsv = tmp_path / "log.tsv"
    tsv.write_text("step\ttrain_loss\n0\t1.0\n1\t0.5\n")
    assert read_curves(tsv).points("train_loss")[2].tolist() == [1.0, 0.5]
    arr = tmp_path / "log.json"
    arr.write_text(json.dumps([{"step": 0, "loss": 1.0}, {"step": 1, "loss": 0.5}]))
    log = read_curves(arr)
    assert log.format == "json" and log.points("train_loss")[2].tolist() == [1.0, 0.5]


def test_jsonl_merges_lines_of_the_same_step_and_flattens_nesting(tmp_path):
    p = tmp_path / "log.jsonl"
    lines = [
        {"step": 0, "train": {"loss": 1.0}, "grad_norm": 0.5},
        {"step": 0, "val_loss": 1.1},
        {"step": 1, "train": {"loss": 0.9}, "grad_norm": 0.4},
    ]
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    log = read_curves(p)
    assert len(log) == 2  # two steps, not three lines
    assert log.columns["train_loss"] == "train/loss"
    assert log.points("val_loss")[1].tolist() == [0.0]
    assert log.points("train_loss")[2].tolist() == [1.0, 0.9]


def test_jsonl_nan_token_is_a_logged_value(tmp_path):
    p = tmp_path / "log.jsonl"
    p.write_text('{"step": 0, "loss": 1.0}\n{"step": 1, "loss": NaN}\n{"step": 2}\n')
    _, steps, values = read_curves(p).points("train_loss")
    assert steps.tolist() == [0, 1] and math.isnan(values[1])


def test_user_mapping_and_its_errors():
    df = pd.DataFrame({"it": [0, 1, 2], "nll": [2.0, 1.5, 1.2], "loss": [9, 9, 9]})
    log = read_curves(df, columns={"train_loss": "nll", "step": "it"})
    assert log.columns["train_loss"] == "nll"
    assert log.points("train_loss")[2].tolist() == [2.0, 1.5, 1.2]
    assert read_curves(df, columns=["train_loss=nll"]).columns["train_loss"] == "nll"
    with pytest.raises(UsageError, match="unknown curve column 'loss_train'"):
        read_curves(df, columns={"loss_train": "nll"})
    with pytest.raises(UsageError, match="CANONICAL=NAME"):
        parse_columns(["train_loss"])
    with pytest.raises(InputError, match="no column 'missing'"):
        read_curves(df, columns={"train_loss": "missing"})


def test_frame_nan_in_a_dense_column_is_a_logged_nan_but_a_sparse_one_is_not():
    n = 40
    loss = np.linspace(2, 1, n)
    loss[30:] = np.nan  # the run went NaN at step 30 (pandas keeps it as NaN)
    val = np.full(n, np.nan)
    val[::10] = 1.5  # validation every 10 steps
    lr = np.full(n, 0.1)
    log = read_curves(pd.DataFrame({"step": range(n), "loss": loss, "val_loss": val, "lr": lr}))
    _, steps, values = log.points("train_loss")
    assert len(steps) == n and np.isnan(values[30:]).all()
    assert log.points("val_loss")[1].tolist() == [0, 10, 20, 30]
    assert any("read as NaN" in note for note in log.notes)


def test_an_evaluation_only_row_is_not_a_nan_training_loss(tmp_path):
    p = tmp_path / "log.csv"
    rows = ["step,loss,val_loss"] + [f"{i},{1 / (i + 1)}," for i in range(20)] + ["20,,0.3"]
    p.write_text("\n".join(rows) + "\n")
    log = read_curves(p)
    values = log.points("train_loss")[2]
    assert len(values) == 20 and np.isfinite(values).all()


def test_steps_out_of_order_are_sorted_and_noted():
    df = pd.DataFrame({"step": [2, 0, 1], "loss": [0.5, 1.0, 0.7]})
    log = read_curves(df)
    assert log.steps.tolist() == [0, 1, 2]
    assert log.points("train_loss")[2].tolist() == [1.0, 0.7, 0.5]
    assert any("goes backwards" in n for n in log.notes)


def test_epoch_only_log_uses_epochs_as_x():
    df = pd.DataFrame(
        {"epoch": [0, 1, 2], "loss": [1.0, 0.8, 0.7], "val_accuracy": [0.5, 0.6, 0.7]}
    )
    log = read_curves(df)
    assert log.step_from == "epoch" and log.columns["val_metric"] == "val_accuracy"


def test_no_step_column_uses_the_row():
    log = read_curves([{"loss": 1.0}, {"loss": 0.5}])
    assert log.step_from == "row" and log.steps.tolist() == [0, 1]


def test_text_columns_are_ignored_and_a_log_without_a_loss_is_refused(tmp_path):
    df = pd.DataFrame({"step": [0, 1], "phase": ["a", "b"], "loss": [1.0, 0.9]})
    assert "phase" not in read_curves(df).columns.values()
    p = tmp_path / "log.csv"
    p.write_text("step,accuracy\n0,0.5\n")
    with pytest.raises(InputError, match="no loss or gradient-norm column"):
        read_curves(p)


@pytest.mark.parametrize(
    "text, problem",
    [("", "is empty"), ("step,loss\n", "has no rows"), ("{not json\n", "not JSON")],
)
def test_bad_files_name_the_file(tmp_path, text, problem):
    p = tmp_path / ("log.jsonl" if text.startswith("{") else "log.csv")
    p.write_text(text)
    with pytest.raises(InputError, match=problem) as info:
        read_curves(p)
    assert str(p) in str(info.value)


def test_missing_file():
    with pytest.raises(InputError, match="no such file"):
        read_curves("does/not/exist.csv")


def test_saved_monitor_record_and_report(tmp_path):
    saved = {"curve": [[0, 1.0], [1, None], [2, 0.5]], "loss_curve": [[0, 2.0], [2, 1.5]]}
    recs = monitor_records(saved)
    assert [r["step"] for r in recs] == [0, 1, 2] and math.isnan(recs[1]["grad_norm"])
    p = tmp_path / "monitor.json"
    p.write_text(json.dumps({"probes": {"monitor": saved}}))
    log = read_curves(p)
    _, steps, g = log.points("grad_norm")
    assert steps.tolist() == [0, 1, 2] and math.isnan(g[1])
    assert log.points("train_loss")[1].tolist() == [0, 2]


def test_live_gradient_monitor():
    import torch  # the [torch] extra, installed for the tests (make install-dev)

    import datavet

    model = torch.nn.Linear(3, 1)
    monitor = datavet.GradientMonitor(sync_every=4)
    for _ in range(6):
        loss = model(torch.randn(8, 3)).pow(2).mean()
        model.zero_grad()
        loss.backward()
        monitor.step(model, loss=loss)
    log = read_curves(monitor)
    assert log.points("grad_norm")[1].tolist() == list(range(6))  # pending norms flushed
    assert np.allclose(log.points("grad_norm")[2], monitor.norms)
    assert np.allclose(log.points("train_loss")[2], monitor.losses)
