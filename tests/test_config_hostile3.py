"""Configuration, the second look: `datavet check` on a file of a directory, glob or shared
dataset; URLs as dataset paths; a found config that is not a regular file; a tab delimiter;
`./` excludes; and the Python API checking severity/thresholds as the config file does."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet.cli import main
from datavet.config import ConfigError, excluded, find_config, load
from datavet.errors import UsageError

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {"a": rng.normal(size=n).round(4), "b": rng.normal(size=n).round(4)}
    ).assign(y=lambda d: (d.a + rng.normal(size=n) > 0).astype(int))


# --------------------------------------------------------------------------------------------
# `datavet check` (the pre-commit hook): a file that is part of a dataset audits the dataset


def test_a_part_file_of_a_glob_dataset_audits_the_whole_dataset(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    train = frame(200, 0)
    for i in range(4):
        train.iloc[i * 50 : (i + 1) * 50].to_csv(tmp_path / f"data/train-{i}.csv", index=False)
    train.iloc[:30].to_csv(tmp_path / "data/test.csv", index=False)  # 30 rows copied from train
    (tmp_path / "pyproject.toml").write_text(
        '[tool.datavet.datasets.main]\ntrain = "data/train-*.csv"\ntest = "data/test.csv"\n'
        'target = "y"\n'
    )
    code, out, err = run(capsys, "check", "data/train-1.csv", "--format", "json")
    payload = json.loads(out)
    assert payload["datasets"]["train"]["rows"] == 200  # all four parts, not 50
    assert payload["datasets"]["test"]["rows"] == 30
    assert payload["target"] == "y"  # the dataset's target
    assert "S001" in {f["code"] for f in payload["findings"]}  # train/test overlap checked
    assert code == 1, err


def test_a_hive_partition_file_audits_its_directory_dataset(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    for split in ("train", "test"):
        for year in (2023, 2024):
            folder = tmp_path / "data" / split / f"year={year}"
            folder.mkdir(parents=True)
            pd.DataFrame(
                {"x": rng.normal(size=50), "label": np.full(50, int(year == 2024))}
            ).to_parquet(folder / "part-0.parquet", index=False)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.datavet]\ntarget = "label"\n'
        '[tool.datavet.datasets.hive]\ntrain = "data/train"\ntest = "data/test"\n'
    )
    part = "data/train/year=2024/part-0.parquet"
    code, out, _ = run(capsys, "check", part, "--format", "json")
    payload = json.loads(out)
    assert payload["datasets"]["train"]["rows"] == 100  # both partitions
    columns = [c["name"] for c in payload["datasets"]["train"]["columns"]]
    assert "year" in columns  # the partition column, as `datavet audit` reads it
    found = {f["code"] for f in payload["findings"]}
    assert "B003" in found  # the real leak: 'year' predicts the label
    assert "L001" not in found  # not the artefact of one partition with a single class
    assert code == 1


def test_a_file_two_datasets_share_audits_both(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    train, test = frame(200, 0), frame(60, 1)
    train.to_csv("a_train.csv", index=False)
    pd.concat([train, test.iloc[:20]]).to_csv("b_train.csv", index=False)  # 20 test rows
    test.to_csv("test.csv", index=False)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.datavet]\ntarget = "y"\n'
        '[tool.datavet.datasets.v1]\ntrain = "a_train.csv"\ntest = "test.csv"\n'
        '[tool.datavet.datasets.v2]\ntrain = "b_train.csv"\ntest = "test.csv"\n'
    )
    code, out, err = run(capsys, "check", "test.csv", "--select", "S001")
    assert "auditing v1" in err and "auditing v2" in err
    assert "== dataset v1 ==" in out and "== dataset v2 ==" in out
    assert code == 1  # v2's overlap fails the commit


def test_datasets_holding_by_path_directory_and_glob(tmp_path, monkeypatch):
    from datavet.cli.plan import datasets_holding

    monkeypatch.chdir(tmp_path)
    for name in ("d/part-0.csv", "g/train-1.csv", "g/other.csv", "plain.csv"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("a\n1\n")
    (tmp_path / "datavet.toml").write_text(
        '[datasets.dir]\ntrain = "d"\n[datasets.glob]\ntrain = "g/train-*.csv"\n'
        '[datasets.plain]\ntrain = "plain.csv"\ntest = "g/other.csv"\n'
        '[datasets.url]\ntrain = "s3://bucket/d/part-0.csv"\n'
    )
    settings = load()

    def names(path):
        return [d.name for d in datasets_holding(settings, path)]

    assert names("d/part-0.csv") == ["dir"]
    assert names(tmp_path / "g/train-1.csv") == ["glob"]
    assert names("g/other.csv") == ["plain"]  # a glob that does not match it
    assert names("./plain.csv") == ["plain"]
    assert names("dd/part-0.csv") == []  # a sibling whose name starts alike is not inside


# --------------------------------------------------------------------------------------------
# URLs as dataset paths


def test_url_dataset_paths_are_kept_as_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    url = (SAMPLE / "planted_train.parquet").as_uri()  # file:///.../planted_train.parquet
    (tmp_path / "pyproject.toml").write_text(
        '[tool.datavet]\ntarget = "label"\n'
        f'[tool.datavet.datasets.url]\ntrain = "{url}"\n'
        '[tool.datavet.datasets.s3]\ntrain = "s3://bucket/train.parquet"\n'
        'test = "gs://bucket/test/"\n'
    )
    settings = load()
    assert settings.datasets["url"].train == url
    assert settings.datasets["s3"].train == "s3://bucket/train.parquet"
    assert settings.datasets["s3"].test == "gs://bucket/test/"
    code, out, err = run(capsys, "audit", "--dataset", "url")
    assert code == 1, err  # audited (the planted data fails), not "no such file"
    assert "no such file" not in err
    code, out, _ = run(capsys, "config")
    assert 'train = "s3://bucket/train.parquet"' in out


# --------------------------------------------------------------------------------------------
# a found config that is not a regular file is an error, never passed over


@pytest.mark.parametrize("kind", ["broken link", "fifo", "directory"])
@pytest.mark.parametrize("name", ["datavet.toml", "pyproject.toml"])
def test_a_found_config_that_is_not_a_file_is_an_error(tmp_path, monkeypatch, capsys, kind, name):
    project = tmp_path / "proj"
    sub = project / "sub"
    sub.mkdir(parents=True)
    (project / "pyproject.toml").write_text('[tool.datavet]\nfail-on = "info"\n')
    bad = sub / name
    if kind == "broken link":
        bad.symlink_to("../../shared/datavet.toml")
    elif kind == "fifo":
        os.mkfifo(bad)
    else:
        bad.mkdir()
    monkeypatch.chdir(sub)
    assert find_config() == bad  # not the parent's pyproject.toml
    with pytest.raises(ConfigError) as err:
        load()
    message = str(err.value)
    assert name in message
    expected = {
        "broken link": "broken symbolic link to ../../shared/datavet.toml",
        "fifo": "FIFO",
        "directory": "is a directory",
    }[kind]
    assert expected in message
    code, out, err_text = run(capsys, "config")
    assert code == 2 and out == ""
    (line,) = err_text.splitlines()
    assert line.startswith("datavet: error:") and expected in line


# --------------------------------------------------------------------------------------------
# delimiters a config dataset takes as the command line does


@pytest.mark.parametrize(("written", "sep"), [("\\t", "\t"), (" ", " "), ("tab", "\t")])
def test_a_tab_or_space_delimiter_in_the_config(tmp_path, monkeypatch, capsys, written, sep):
    monkeypatch.chdir(tmp_path)
    frame(60, 0).to_csv(tmp_path / "export.txt.csv", sep=sep, index=False)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.datavet.datasets.e]\ntrain = "export.txt.csv"\ntarget = "y"\n'
        f'delimiter = "{written}"\n'
    )
    assert load().datasets["e"].delimiter == ("tab" if written == "tab" else sep)
    code, out, err = run(capsys, "audit", "--format", "json")
    assert code in (0, 1), err
    payload = json.loads(out)
    assert payload["target"] == "y"  # read as three columns, not one
    assert [c["name"] for c in payload["datasets"]["train"]["columns"]] == ["a", "b"]


@pytest.mark.parametrize("written", ['""', '"ab"', "1"])
def test_a_bad_delimiter_in_the_config_names_the_key(tmp_path, written):
    path = tmp_path / "datavet.toml"
    path.write_text(f'[datasets.e]\ntrain = "x.csv"\ndelimiter = {written}\n')
    with pytest.raises(ConfigError, match=r"datavet\.toml: datasets\.e\.delimiter: "):
        load(path)


# --------------------------------------------------------------------------------------------
# excludes that start with ./


@pytest.mark.parametrize(
    "pattern",
    ["./data/lookup/**", "./data/lookup", "data/./lookup/*.csv", "./data/lookup/codes.csv"],
)
def test_dot_slash_excludes_match_as_ruff_reads_them(tmp_path, monkeypatch, capsys, pattern):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data/lookup").mkdir(parents=True)
    (tmp_path / "data/lookup/codes.csv").write_text("code,name\n1,a\n")
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.datavet]\ntarget = "label"\nexclude = ["{pattern}"]\n'
    )
    settings = load()
    assert excluded(settings, "data/lookup/codes.csv") == pattern
    assert excluded(settings, tmp_path / "data/lookup/codes.csv") == pattern
    assert excluded(settings, "other/data/lookup/codes.csv") is None  # anchored at the root
    code, _, err = run(capsys, "check", "data/lookup/codes.csv")
    assert code == 0, err
    assert f"excluded by {pattern!r}" in err


# --------------------------------------------------------------------------------------------
# datavet.audit checks severity and thresholds as the config file does


@pytest.fixture
def df() -> pd.DataFrame:
    return frame(60, 0)


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"severity": {"M001": "error"}}, r"M001 \(initial-loss-mismatch\) is a model-probe rule"),
        ({"severity": {"loss-divergence": "info"}}, r"C002 .* is a training-curve rule"),
        ({"thresholds": {"M001": {"bogus": 1}}}, r"M001 .* is a model-probe rule"),
        ({"thresholds": {"C001": {"bogus": 1}}}, r"C001 .* is a training-curve rule"),
        (
            {"select": "V", "thresholds": {"L001": {"maxratio": 5}}},
            r"L001 has no threshold 'maxratio' \(did you mean 'max_ratio'\?\)",
        ),
        ({"select": "V", "thresholds": {"V001": {"max_ratio": 5}}}, "V001 has no threshold"),
    ],
)
def test_audit_refuses_what_the_config_file_refuses(df, kwargs, expected):
    with pytest.raises(UsageError, match=expected):
        datavet.audit(df, target="y", baselines=False, **kwargs)


def test_the_config_file_and_audit_give_the_same_threshold_message(tmp_path, df):
    path = tmp_path / "datavet.toml"
    path.write_text('select = ["V"]\n[thresholds.L001]\nmaxratio = 5\n')
    with pytest.raises(ConfigError) as from_file:
        load(path)
    with pytest.raises(UsageError) as from_api:
        datavet.audit(df, select="V", thresholds={"L001": {"maxratio": 5}})
    problem = "L001 has no threshold 'maxratio' (did you mean 'max_ratio'?)"
    assert problem in str(from_file.value) and problem in str(from_api.value)
    assert "thresholds.L001.maxratio" in str(from_file.value)


def test_settings_that_are_right_still_apply(df):
    report = datavet.audit(
        df, target="y", select="L001", thresholds={"class-imbalance": {"max_ratio": 5}}
    )
    assert report.outcomes[0].code == "L001"


def test_a_dataset_named_by_file_url_holds_its_local_file(tmp_path, monkeypatch):
    from datavet.cli.plan import datasets_holding

    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.csv").write_text("a\n1\n")
    url = (tmp_path / "t.csv").as_uri()
    (tmp_path / "datavet.toml").write_text(
        f'[datasets.local]\ntrain = "{url}"\n[datasets.remote]\ntrain = "s3://b/t.csv"\n'
    )
    assert [d.name for d in datasets_holding(load(), "t.csv")] == ["local"]
