"""The sample curves: each committed log produces exactly its codes, the README says the same,
and a fresh build (real training runs) gives the same codes."""

from __future__ import annotations

import re

import pytest

import datavet

from .conftest import CURVES, codes, load_make_curves

mc = load_make_curves()


@pytest.mark.parametrize("name", sorted(mc.EXPECTED))
def test_committed_sample_produces_exactly_its_codes(name):
    report = datavet.diagnose_curves(CURVES / name, **mc.OPTIONS.get(name, {}))
    assert codes(report) == mc.EXPECTED[name]
    assert not report.crashed
    assert report.exit_code() == (
        1 if any(f.severity.label == "error" for f in report.findings) else 0
    )


def test_readme_lists_the_same_codes():
    text = (CURVES / "README.md").read_text()
    rows = re.findall(r"^\| `([\w.]+)` \|[^|]*\|[^|]*\| (.*) \|$", text, re.M)
    listed = {name: sorted(set(re.findall(r"`(C\d{3})`", last))) for name, last in rows}
    assert listed == {k: sorted(v) for k, v in mc.EXPECTED.items()}


def test_every_sample_file_is_listed():
    files = {p.name for p in CURVES.iterdir() if p.suffix in (".csv", ".jsonl", ".json")}
    assert files == set(mc.EXPECTED)


def test_the_key_figures_of_the_samples():
    r = datavet.diagnose_curves(CURVES / "lr_too_high.csv")
    assert r.findings[0].metrics["onset_step"] == mc.SWITCH + 1
    r = datavet.diagnose_curves(CURVES / "lr_100x_from_start.csv", classes=4)
    assert r.findings[0].metrics["onset_step"] == 3 and r.findings[0].metrics["peak_step"] == 34
    r = datavet.diagnose_curves(CURVES / "grad_spikes.csv")
    assert list(r.findings[0].examples) == [120, 230, 330]
    r = datavet.diagnose_curves(CURVES / "nonfinite.csv")
    assert r.findings[0].metrics["step"] == 150
    r = datavet.diagnose_curves(CURVES / "overfitting.jsonl")
    assert r.findings[0].metrics["gap_step"] == 40


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 3])
def test_a_fresh_build_gives_the_same_codes(tmp_path, seed, monkeypatch):
    monkeypatch.setattr(mc, "SEED", seed)
    written = mc.write(tmp_path)
    assert {p.name for p in written} == set(mc.EXPECTED)
    for name, expected in mc.EXPECTED.items():
        report = datavet.diagnose_curves(tmp_path / name, **mc.OPTIONS.get(name, {}))
        assert codes(report) == expected, (seed, name, [f.message for f in report.findings])
