"""Hostile-test fixes for the model probes: broadcast target shapes, untrainable models, nll_loss
on logits, M017 in eval mode, empty batches, eval_step from the CLI, summed losses, preflight
messages."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

import datavet
from datavet.cli import main
from datavet.errors import UsageError

from .models import CE, MSE, finding, run, seed_batch, seed_mlp, status

NLL = nn.functional.nll_loss


def regression_batch():
    torch.manual_seed(0)
    x = torch.randn(32, 8)
    return x, x @ torch.randn(8)  # a perfectly linear (32,) target


def regressor():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))  # output (32, 1)


@pytest.mark.filterwarnings("ignore:Using a target size")
def test_an_output_broadcast_against_the_target_is_an_m002_error():
    x, y = regression_batch()
    r = run(regressor(), (x, y), loss_fn=MSE, select="M002")
    f = finding(r, "M002")
    assert r.exit_code() == 1 and f.severity.name == "ERROR"
    assert "(32, 1)" in f.message and "(32,)" in f.message and "(32, 32)" in f.message
    assert "view_as" in f.hint
    # the other way round: an (N,) output against an (N, 1) target (preflight's regression batch)
    model = nn.Sequential(regressor(), nn.Flatten(0))
    f = finding(run(model, (x, y.reshape(-1, 1)), loss_fn=MSE, select="M002"), "M002")
    assert "broadcasts them to (32, 32)" in f.message


def test_matching_regression_shapes_fit_and_a_detached_loss_is_an_error():
    x, y = regression_batch()
    r = run(regressor(), (x, y.reshape(-1, 1)), loss_fn=MSE, select="M002")
    assert status(r, "M002") == "passed"

    class Detached(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(8, 1)

        def forward(self, x):
            return self.lin(x).detach()

    r = run(Detached(), (x, y.reshape(-1, 1)), loss_fn=MSE, select="M002")
    f = finding(r, "M002")
    assert f.severity.name == "ERROR" and "does not require a gradient" in f.message


@pytest.mark.parametrize(
    "model, phrase",
    [
        (nn.Identity(), "no parameter at all"),
        (nn.Sequential(nn.Linear(5, 5)).requires_grad_(False), "whole model is frozen"),
    ],
)
def test_a_model_with_nothing_to_train_is_an_error(model, phrase):
    x, y = torch.randn(32, 5), torch.randint(0, 5, (32,))
    r = datavet.probe(model, (x, y), loss_fn=CE, select="M002")
    f = finding(r, "M002")
    assert r.exit_code() == 1 and phrase in f.message


@pytest.mark.parametrize("head, kind", [((), "raw scores"), ((nn.Softmax(dim=1),), "-p")])
def test_nll_loss_without_log_softmax_is_an_m003_error_not_a_label_leak(head, kind):
    x, y, _ = seed_batch()
    r = run(seed_mlp(*head), (x, y), loss_fn=NLL, select=["M001", "M002", "M003"])
    f = finding(r, "M003")
    assert r.exit_code() == 1 and f.severity.name == "ERROR"
    assert "not log-probabilities" in f.message and kind in f.message
    assert "log_softmax" in f.hint
    assert all("leak" not in g.message for g in r.findings)
    assert status(r, "M001") == "skipped" and "M003" in r.probes["checks"]["M001"]["headline"]
    assert status(r, "M002") != "skipped"


class GrowingCache(nn.Module):
    """A buffer forward updates in any mode (like an old rotary-embedding cache)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(10, 5)
        self.register_buffer("cache", torch.zeros(4))

    def forward(self, x):
        if self.cache.numel() < x.shape[0]:
            self.cache = torch.arange(x.shape[0], dtype=torch.float32)
        return self.lin(x)


def eval_in_eval_mode(model, batch):
    model.eval()
    with torch.no_grad():
        model(batch[0])


def eval_in_train_mode(model, batch):
    with torch.no_grad():
        model(batch[0])


def test_m017_does_not_blame_train_mode_when_eval_step_calls_eval():
    x, y, _ = seed_batch()
    f = finding(run(GrowingCache(), (x, y), eval_step=eval_in_eval_mode, select="M017"), "M017")
    assert f.severity.name == "WARNING" and "cache" in f.columns
    assert "eval mode" in f.message and "BatchNorm" not in f.message
    assert "train mode" not in f.message
    # without model.eval() it is the error, still without claiming a BatchNorm it does not have
    f = finding(run(GrowingCache(), (x, y), eval_step=eval_in_train_mode, select="M017"), "M017")
    assert f.severity.name == "ERROR" and "model.eval() is missing" in f.message
    assert "BatchNorm" not in f.message


def test_m017_names_the_batchnorm_that_ran_in_train_mode():
    x, y, _ = seed_batch()
    torch.manual_seed(0)
    bn = nn.Sequential(nn.Linear(10, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 5))
    f = finding(run(bn, (x, y), eval_step=eval_in_train_mode, select="M017"), "M017")
    assert "BatchNorm ('1')" in f.message and f.metrics["modules_in_train_mode"] > 0


def test_an_empty_batch_is_a_usage_error():
    with pytest.raises(UsageError, match="empty"):
        datavet.probe(nn.Linear(10, 5), (torch.randn(0, 10), torch.randint(0, 5, (0,))), loss_fn=CE)


def test_m001_on_a_summed_loss_points_at_the_sum():
    x, y, _ = seed_batch()
    summed = lambda o, t: CE(o, t, reduction="sum")  # noqa: E731
    f = finding(run(seed_mlp(), (x, y), loss_fn=summed, select="M001"), "M001")
    assert "M009" in f.message and "reduction='mean'" in f.hint
    assert "standardise" not in f.message


FACTORIES = """
import torch
from torch import nn


def with_eval_step():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 5))

    def eval_step(model, batch):
        with torch.no_grad():
            model(batch[0])

    batch = (torch.randn(16, 10), torch.randint(0, 5, (16,)))
    return {"model": model, "batch": batch, "loss_fn": nn.functional.cross_entropy,
            "eval_step": eval_step}


def frozen():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2)).requires_grad_(False)
    return model, nn.functional.cross_entropy


def wrong_in():
    return nn.Sequential(nn.Linear(7, 32), nn.ReLU(), nn.Linear(32, 2)), nn.functional.cross_entropy


def five_outputs():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 5)), nn.functional.cross_entropy
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("fix_probes")
    (root / "f.py").write_text(FACTORIES)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 4))
    table = pd.DataFrame(x, columns=["a", "b", "c", "d"])
    table["label"] = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(int)
    table.to_parquet(root / "train.parquet")
    return root


def test_the_cli_factory_dict_accepts_eval_step(files, capsys):
    code = main(["probe", f"{files / 'f.py'}:with_eval_step", "--select", "M017"])
    out = capsys.readouterr().out
    assert code == 1 and "M017" in out


def preflight_cli(files, name, capsys):
    argv = ["preflight", f"{files / 'f.py'}:{name}", "--train", str(files / "train.parquet")]
    code = main([*argv, "--target", "label"])
    return code, *capsys.readouterr()


def test_preflight_fails_a_frozen_model_at_the_overfit_stage(files, capsys):
    code, out, _ = preflight_cli(files, "frozen", capsys)
    assert code == 1 and "4. [FAIL] overfit one batch" in out and "M002" in out


def test_preflight_model_errors_name_the_factory_and_the_batch(files, capsys):
    code, _, err = preflight_cli(files, "wrong_in", capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1
    assert "f.py:wrong_in" in lines[0] and "4 numeric feature column(s) (a, b, c, d)" in lines[0]


def test_preflight_notes_more_outputs_than_label_classes(files, capsys):
    code, out, _ = preflight_cli(files, "five_outputs", capsys)
    assert "the model outputs 5 classes but the target column has 2" in out
