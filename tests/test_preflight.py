"""datavet.preflight / `datavet preflight`: the stages in order, stopping at the first failure."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch
from jsonschema import Draft202012Validator
from torch import nn

import datavet
from datavet.cli import main
from datavet.output.json import schema
from datavet.preflight import batch_from_table

CE = nn.functional.cross_entropy


@pytest.fixture(autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def table(n=300, seed=0, random_labels=False):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4))
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(int)
    if random_labels:
        y = rng.integers(0, 2, n)
    return pd.DataFrame(x, columns=["a", "b", "c", "d"]).assign(label=y)


def small_model(*head):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2), *head)


def verdicts(report):
    return [s["verdict"] for s in report.stages]


def test_healthy_data_and_model_pass_every_stage():
    r = datavet.preflight(small_model(), table(), table(seed=1), target="label", loss_fn=CE)
    assert verdicts(r) == ["passed"] * 4 and r.exit_code() == 0
    assert r.probes["checks"]["M002"]["final_loss"] < 0.05
    assert r.to_dict()["preflight"]["stages"][3]["title"] == "overfit one batch"


def test_random_labels_stop_at_the_baselines_stage():
    """The overfit probe alone passes random labels (a network memorises a batch): the staged
    run stops before it, at B001."""
    r = datavet.preflight(small_model(), table(random_labels=True), target="label", loss_fn=CE)
    assert verdicts(r) == ["passed", "failed", "not run", "not run"]
    assert "B001" in r.stages[1]["codes"] and r.exit_code() == 1
    assert r.probes is None and not any(f.code.startswith("M") for f in r.findings)
    assert "the baselines stage failed" in r.stages[2]["summary"]
    batch = batch_from_table(table(random_labels=True), "label", "classification", 32)
    alone = datavet.probe(small_model(), batch, loss_fn=CE, select="M002")
    assert alone.exit_code() == 0  # what the probe alone says


def test_softmax_twice_fails_at_the_overfit_stage():
    r = datavet.preflight(
        small_model(nn.Softmax(dim=1)), table(), target="label", loss_fn=CE, seed=0
    )
    assert verdicts(r) == ["passed", "passed", "passed", "failed"]
    assert {"M002", "M003"} <= set(r.stages[3]["codes"])


def test_nan_initial_loss_stops_before_the_overfit_stage():
    class Log(nn.Module):
        def forward(self, x):
            return torch.log(x)  # negative features: NaN

    torch.manual_seed(0)
    model = nn.Sequential(Log(), nn.Linear(4, 2))
    r = datavet.preflight(model, table(), target="label", loss_fn=CE)
    assert verdicts(r) == ["passed", "passed", "failed", "not run"]
    assert "M004" in r.stages[2]["codes"]


def test_data_errors_stop_at_the_data_stage():
    train = table()
    test = train.iloc[:50]  # every test row is in train
    r = datavet.preflight(small_model(), train, test, target="label", loss_fn=CE)
    assert verdicts(r)[0] == "failed" and verdicts(r)[1:] == ["not run"] * 3
    assert "S001" in r.stages[0]["codes"]


def write_factory(tmp_path, body: str):
    path = tmp_path / "model.py"
    path.write_text(
        "import torch\nfrom torch import nn\n\n\ndef factory():\n    torch.manual_seed(0)\n" + body
    )
    return path


def test_cli_json_and_html(tmp_path, capsys):
    data = tmp_path / "train.parquet"
    table().to_parquet(data)
    model = write_factory(
        tmp_path,
        "    print('hello from the factory')\n"
        "    return nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2)), "
        "nn.functional.cross_entropy\n",
    )
    html = tmp_path / "r.html"
    code = main(
        ["preflight", f"{model}:factory", "--train", str(data), "--target", "label",
         "--format", "json", "--html", str(html)]
    )  # fmt: skip
    out = capsys.readouterr().out
    payload = json.loads(out)  # the factory's print went to stderr
    assert list(Draft202012Validator(schema()).iter_errors(payload)) == []
    assert code == 0 and [s["verdict"] for s in payload["preflight"]["stages"]] == ["passed"] * 4
    assert "overfit one batch passed" in html.read_text()


def test_cli_text_lists_the_stages(tmp_path, capsys):
    data = tmp_path / "train.csv"
    table(random_labels=True).to_csv(data, index=False)
    model = write_factory(tmp_path, "    return nn.Linear(4, 2), nn.functional.cross_entropy\n")
    code = main(["preflight", f"{model}:factory", "--train", str(data), "--target", "label"])
    out = capsys.readouterr().out
    assert code == 1
    assert "2. [FAIL] baselines" in out and "4. [--  ] overfit one batch" in out


def test_cli_bad_input_is_one_line_exit_2(tmp_path, capsys):
    model = write_factory(tmp_path, "    return nn.Linear(4, 2), nn.functional.cross_entropy\n")
    code = main(["preflight", f"{model}:factory", "--train", str(tmp_path / "missing.parquet")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("datavet: error: ")
    code = main(["preflight", f"{tmp_path / 'nope.py'}:factory", "--train", "x.csv"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "nope.py" in err[0]
