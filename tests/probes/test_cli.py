"""``datavet probe FILE.py:FACTORY`` and the probes in ``datavet rules`` / ``datavet rule``."""

from __future__ import annotations

import inspect
import json
import textwrap

import pytest
from jsonschema import Draft202012Validator

from datavet import CURVE_RULES, PROBES, RULES
from datavet.cli import main
from datavet.output.json import schema

FACTORIES = textwrap.dedent(
    """
    import torch
    from torch import nn

    def _batch():
        torch.manual_seed(0)
        return torch.randn(16, 10), torch.randint(0, 5, (16,))

    def _mlp(*head):
        torch.manual_seed(1)
        return nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 5), *head)

    def normal():
        return _mlp(), _batch(), nn.functional.cross_entropy

    def softmax_twice():
        print("building the model")  # user output must not reach stdout
        return {"model": _mlp(nn.Softmax(dim=1)), "batch": _batch(),
                "loss_fn": nn.functional.cross_entropy}

    def broken():
        raise ValueError("no data here")

    def wrong_shape():
        return _mlp()
    """
)


@pytest.fixture(scope="module")
def factory_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("probe") / "factories.py"
    path.write_text(FACTORIES)
    return path


def run_cli(capsys, argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


FAST = ["--steps", "150"]  # the seed's softmax-twice model is stuck well before that


def test_softmax_twice_exits_1_with_findings_on_stdout(factory_file, capsys):
    code, out, err = run_cli(capsys, ["probe", f"{factory_file}:softmax_twice", *FAST])
    assert code == 1
    assert "M002 cannot-overfit-batch" in out and "M003 double-softmax" in out
    assert "building the model" in err and "building the model" not in out


def test_normal_model_exits_0(factory_file, capsys):
    code, out, _ = run_cli(capsys, ["probe", f"{factory_file}:normal"])
    assert code == 0 and "passed at fail-on 'error' (exit 0)" in out


def test_json_payload_is_schema_valid(factory_file, capsys):
    code, out, _ = run_cli(
        capsys, ["probe", f"{factory_file}:softmax_twice", "--format", "json", *FAST]
    )
    payload = json.loads(out)
    assert code == 1 and payload["exit_code"] == 1
    assert list(Draft202012Validator(schema()).iter_errors(payload)) == []
    assert payload["probes"]["checks"]["M002"]["steps"] == 150


def test_html_output_and_exit_zero(factory_file, capsys, tmp_path):
    page = tmp_path / "probe.html"
    code, _, err = run_cli(
        capsys,
        ["probe", f"{factory_file}:softmax_twice", "--html", page, "--exit-zero", *FAST],
    )
    assert code == 0 and f"wrote {page}" in err
    html = page.read_text()
    assert 'data-test-probes="model"' in html and 'data-test-probe="M003"' in html


def test_select_and_fail_on(factory_file, capsys):
    code, out, _ = run_cli(
        capsys, ["probe", f"{factory_file}:softmax_twice", "--select", "M001,M004"]
    )
    assert code == 0 and "M003" not in out


@pytest.mark.parametrize(
    "spec, message",
    [
        ("{file}:broken", "the factory raised ValueError: no data here"),
        ("{file}:missing", "has no function 'missing'"),
        ("{file}:wrong_shape", "must return (model, batch, loss_fn)"),
        ("{file}", "expected FILE.py:FACTORY"),
        ("nowhere.py:normal", "nowhere.py: no such file"),
    ],
)
def test_errors_exit_2_with_one_line(factory_file, capsys, spec, message):
    code, out, err = run_cli(capsys, ["probe", spec.format(file=factory_file)])
    assert code == 2 and out == ""
    assert err.startswith("datavet: error:") and message in err
    assert len(err.strip().splitlines()) == 1


def test_rules_lists_the_probes_after_the_rules(capsys):
    code, out, _ = run_cli(capsys, ["rules"])
    lines = out.splitlines()
    assert code == 0 and len(lines) == 1 + len(RULES) + len(PROBES) + len(CURVE_RULES)
    for probe, line in zip(PROBES, lines[1 + len(RULES) :]):
        fields = line.split()
        assert fields[:3] == [probe.code, probe.name, probe.severity.label]
        assert probe.summary in line


@pytest.mark.parametrize("probe", PROBES, ids=lambda p: p.code)
def test_rule_explains_each_probe(probe, capsys):
    code, out, _ = run_cli(capsys, ["rule", probe.code])
    assert code == 0
    assert out.startswith(f"{probe.code} {probe.name} (default severity: {probe.severity.label})")
    assert inspect.cleandoc(probe.__doc__) in out
    for key, value in probe.thresholds.items():
        assert f"{key} = {value}" in out
