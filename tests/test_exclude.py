"""``[tool.datavet] exclude`` / ``extend-exclude``: globs (as ruff reads them) that ``datavet
check`` (the pre-commit hook) skips, with a note; files given to ``datavet audit`` are audited."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from datavet import config
from datavet.cli import main

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


def run(capsys, argv):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project with training data (target 'label'), a lookup table and a fixture without it."""
    (tmp_path / "data" / "lookup").mkdir(parents=True)
    (tmp_path / "tests" / "fixtures").mkdir(parents=True)
    pd.read_csv(SAMPLE / "clean_train.csv").to_csv(tmp_path / "data" / "train.csv", index=False)
    lookup = pd.DataFrame({"code": [1, 2, 3], "name": ["a", "b", "c"]})
    lookup.to_csv(tmp_path / "data" / "lookup" / "codes.csv", index=False)
    lookup.to_csv(tmp_path / "tests" / "fixtures" / "tiny.csv", index=False)
    lookup.to_csv(tmp_path / "data" / "lookup_regions.csv", index=False)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.datavet]\ntarget = "label"\n'
        'exclude = ["data/lookup/**", "lookup_*.csv"]\n'
        'extend-exclude = ["fixtures"]\n'
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_config_reads_the_keys(project):
    settings = config.load(project / "pyproject.toml")
    assert settings.exclude == ("data/lookup/**", "lookup_*.csv")
    assert settings.extend_exclude == ("fixtures",)
    again = config.parse(
        __import__("tomllib").loads(settings.to_toml()), source=project / "pyproject.toml"
    )
    assert again.exclude == settings.exclude and again.extend_exclude == settings.extend_exclude


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ('"data/*.csv"', "expected a list of path globs"),
        ("[1]", "expected a list of path globs"),
        ('[""]', "non-empty"),
    ],
)
def test_bad_values_are_errors(tmp_path, capsys, value, problem):
    cfg = tmp_path / "datavet.toml"
    cfg.write_text(f"exclude = {value}\n")
    code, out, err = run(capsys, ["config", "--config", cfg])
    assert code == 2 and out == ""
    assert err.startswith("datavet: error: ") and "exclude" in err and problem in err
    assert len(err.splitlines()) == 1


def test_a_misspelt_key_is_an_error(tmp_path, capsys):
    cfg = tmp_path / "datavet.toml"
    cfg.write_text('excludes = ["x"]\n')
    code, _, err = run(capsys, ["config", "--config", cfg])
    assert code == 2 and "did you mean 'exclude'" in err


@pytest.mark.parametrize(
    ("path", "pattern"),
    [
        ("data/lookup/codes.csv", "data/lookup/**"),
        ("data/lookup_regions.csv", "lookup_*.csv"),
        ("tests/fixtures/tiny.csv", "fixtures"),  # a folder name anywhere
        ("data/train.csv", None),
        ("data/lookup.csv", None),  # '*' never crosses '/', the name pattern needs the '_'
    ],
)
def test_matching(project, path, pattern):
    settings = config.load(project / "pyproject.toml")
    assert config.excluded(settings, path) == pattern
    assert config.excluded(settings, project / path) == pattern  # absolute paths too


def test_patterns_are_relative_to_the_config_folder(project, monkeypatch):
    settings = config.load(project / "pyproject.toml")
    monkeypatch.chdir(project / "data")
    assert config.excluded(settings, "lookup/codes.csv") == "data/lookup/**"
    assert config.excluded(settings, "train.csv") is None


def test_double_star_and_sets():
    settings = config.Settings(exclude=("**/raw/*.parquet", "part-[0-9].csv"))
    assert config.excluded(settings, "a/b/raw/x.parquet") == "**/raw/*.parquet"
    assert config.excluded(settings, "raw/x.parquet") == "**/raw/*.parquet"
    assert config.excluded(settings, "raw/x.csv") is None
    assert config.excluded(settings, "part-3.csv") == "part-[0-9].csv"
    assert config.excluded(settings, "part-x.csv") is None


def test_check_skips_excluded_files_with_a_note(project, capsys):
    """Before: the lookup table and the fixture have no 'label' column, so the hook failed the
    commit (exit 2); now they are skipped and the training data is still checked."""
    code, out, err = run(
        capsys,
        [
            "check",
            "data/lookup/codes.csv",
            "tests/fixtures/tiny.csv",
            "data/train.csv",
            "--format",
            "json",
        ],
    )
    assert code == 0, err
    assert json.loads(out)["datasets"]["train"]["source"].endswith("train.csv")
    assert "skipped data/lookup/codes.csv: excluded by 'data/lookup/**' (pyproject.toml)" in err
    assert "skipped tests/fixtures/tiny.csv: excluded by 'fixtures' (pyproject.toml)" in err


def test_check_with_every_file_excluded_passes(project, capsys):
    code, out, err = run(capsys, ["check", "data/lookup/codes.csv", "data/lookup_regions.csv"])
    assert code == 0 and out == ""
    assert "every file given is excluded" in err


def test_without_exclude_the_lookup_table_fails_the_check(project, capsys):
    (project / "pyproject.toml").write_text('[tool.datavet]\ntarget = "label"\n')
    code, _, err = run(capsys, ["check", "data/lookup/codes.csv"])
    assert code == 2 and "label" in err


def test_audit_of_an_excluded_file_given_explicitly_still_runs(project, capsys):
    code, out, err = run(
        capsys, ["audit", "data/lookup/codes.csv", "--target", "name", "--format", "json"]
    )
    assert code in (0, 1), err
    assert json.loads(out)["datasets"]["train"]["source"].endswith("codes.csv")
    assert "skipped" not in err


def test_isolated_ignores_the_excludes(project, capsys):
    code, _, err = run(
        capsys, ["check", "--isolated", "--target", "label", "data/lookup/codes.csv"]
    )
    assert code == 2 and "skipped" not in err
