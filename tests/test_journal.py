"""The debugging journal (``datavet journal``, ``datavet.journal.Journal``): the prediction is
written before the result, one change per entry, JSON lines plus a Markdown view, atomic and
locked writes, search by symptom."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from datavet.cli import main
from datavet.errors import InputError, OutputError, UsageError
from datavet.journal import Journal, config_diff, late_prediction, load_config, render_markdown

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def journal(tmp_path):
    return Journal(tmp_path / "journal.jsonl")


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


# -- the API ---------------------------------------------------------------------------------


def test_add_writes_one_json_line_and_the_markdown_view(journal):
    entry, warnings = journal.add(
        hypothesis="lr too high for this batch size",
        changes=["lr 0.1 -> 0.01"],
        predict="no NaN before step 5000",
        symptom="loss NaN at step 3000",
        codes=["C001"],
    )
    assert warnings == []
    assert entry["id"] == 1 and entry["prediction"] == "no NaN before step 5000"
    assert entry["predicted_at"] is not None and entry["result"] is None
    (saved,) = lines(journal.path)
    assert saved == entry
    md = journal.markdown_path.read_text()
    assert journal.markdown_path == journal.path.with_suffix(".md")
    row = [x for x in md.splitlines() if x.startswith("| 1 |")]
    assert len(row) == 1
    assert "loss NaN at step 3000 (C001)" in row[0] and "lr 0.1 -&gt; 0.01" in row[0]
    assert "*open*" in row[0]


def test_a_result_needs_a_prediction_written_first(journal):
    entry, warnings = journal.add(hypothesis="labels shuffled", changes=["re-join on id"])
    assert any("no prediction yet" in w for w in warnings)
    with pytest.raises(UsageError, match="has no prediction"):
        journal.result(entry["id"], observed="val acc 0.81")
    assert lines(journal.path)[0]["result"] is None  # refused: nothing written
    journal.predict(entry["id"], "val acc above 0.7 within 2 epochs")
    closed = journal.result(entry["id"], observed="val acc 0.81", verdict="confirmed")
    assert closed["result"]["observed"] == "val acc 0.81"
    assert closed["predicted_at"] <= closed["result"]["at"]
    assert lines(journal.path)[0]["result"]["verdict"] == "confirmed"


def test_a_prediction_is_not_written_after_the_result_nor_rewritten(journal):
    entry, _ = journal.add(hypothesis="h", changes=["c"], predict="p")
    with pytest.raises(UsageError, match="already predicts"):
        journal.predict(entry["id"], "something else")
    journal.result(entry["id"], observed="o")
    with pytest.raises(UsageError, match="already has a result"):
        journal.predict(entry["id"], "late")
    with pytest.raises(UsageError, match="already has a result"):
        journal.result(entry["id"], observed="again")
    assert lines(journal.path)[0]["prediction"] == "p"
    assert lines(journal.path)[0]["result"]["observed"] == "o"


def test_several_changes_are_warned_about(journal):
    entry, warnings = journal.add(
        hypothesis="the optimiser setup",
        changes=["lr 0.1 -> 0.01", "add BatchNorm", "He init"],
        predict="loss below 0.5 by step 1000",
    )
    assert len(warnings) == 1
    assert "changes 3 things" in warnings[0] and "one thing at a time" in warnings[0].lower()
    assert "**3 changes**" in journal.markdown_path.read_text()
    _, warnings = journal.add(hypothesis="h", changes=["one thing"], predict="p")
    assert warnings == []


def test_a_config_diff_touching_several_keys_is_warned_about(journal, tmp_path):
    old, new = tmp_path / "old.json", tmp_path / "new.toml"
    old.write_text(json.dumps({"optimizer": {"lr": 0.1, "momentum": 0.9}, "batch": 64}))
    new.write_text("batch = 64\n[optimizer]\nlr = 0.01\nmomentum = 0.99\n")
    diff = config_diff(load_config(old), load_config(new))
    assert diff == {"optimizer.lr": [0.1, 0.01], "optimizer.momentum": [0.9, 0.99]}
    entry, warnings = journal.add(hypothesis="h", config=diff, predict="p")
    assert "changes 2 things" in warnings[0] and "optimizer.lr" in warnings[0]
    one = config_diff(load_config(old), {**load_config(old), "optimizer.lr": 0.01})
    _, warnings = journal.add(hypothesis="h", config=one, predict="p")
    assert warnings == []


@pytest.mark.parametrize(
    "name, text, expected",
    [
        ("c.ini", "[opt]\nlr = 0.1\n", {"opt.lr": "0.1"}),
        ("c.env", "# comment\nlr=0.1\nseed = 3\n", {"lr": "0.1", "seed": "3"}),
        ("c.json", '{"a": {"b": [1, 2]}}', {"a.b": [1, 2]}),
    ],
)
def test_load_config_formats(tmp_path, name, text, expected):
    path = tmp_path / name
    path.write_text(text)
    assert load_config(path) == expected


def test_load_config_errors_name_the_file(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_config(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InputError) as exc:
        load_config(bad)
    assert str(bad) in str(exc.value)
    listy = tmp_path / "list.json"
    listy.write_text("[1, 2]")
    with pytest.raises(InputError, match="mapping"):
        load_config(listy)


def test_an_entry_needs_a_hypothesis_and_a_change(journal):
    with pytest.raises(UsageError, match="hypothesis"):
        journal.add(hypothesis="  ", changes=["c"])
    with pytest.raises(UsageError, match="what you change"):
        journal.add(hypothesis="h", changes=[" "])
    assert not journal.path.exists()


def test_codes_are_checked_and_names_become_codes(journal):
    entry, _ = journal.add(hypothesis="h", changes=["c"], codes=["loss-divergence", "v001"])
    assert entry["codes"] == ["C002", "V001"]
    with pytest.raises(UsageError, match="unknown rule 'C02'"):
        journal.add(hypothesis="h", changes=["c"], codes=["C02"])


def test_search_finds_past_entries_by_symptom_best_first(journal):
    journal.add(hypothesis="bad shard", changes=["drop shard 7"], symptom="loss spikes at 12k")
    journal.add(
        hypothesis="lr too high",
        changes=["lr 3e-4 -> 1e-4"],
        symptom="loss NaN after warm-up",
        codes=["C001"],
    )
    journal.add(hypothesis="dropout in eval", changes=["call model.eval()"], symptom="val < train")
    found = journal.search(["loss", "NaN"])
    assert [e["id"] for e in found] == [2, 1]  # both words first, then one
    assert [e["id"] for e in journal.search(["NAN"])] == [2]  # case-insensitive
    # the curve code stands for its rule: its name and summary are searchable
    assert [e["id"] for e in journal.search(["nonfinite"])] == [2]
    assert journal.search(["overfitting"]) == []
    with pytest.raises(UsageError):
        journal.search(["  "])


def test_lines_that_do_not_parse_are_kept_and_ids_go_on(journal):
    journal.path.write_text('{"id": 4, "hypothesis": "h"}\nnot json at all\n{"id": true}\n')
    entry, _ = journal.add(hypothesis="h2", changes=["c"], predict="p")
    assert entry["id"] == 5
    text = journal.path.read_text().splitlines()
    assert text[1] == "not json at all" and text[2] == '{"id": true}'
    assert journal.unreadable() == 2 and [e["id"] for e in journal.entries()] == [4, 5]


def test_a_markdown_journal_path_is_refused(tmp_path):
    with pytest.raises(UsageError, match="Markdown"):
        Journal(tmp_path / "notes.md")


def test_writes_are_atomic(journal, monkeypatch):
    import datavet._io as io

    journal.add(hypothesis="h", changes=["c"], predict="p")
    before = journal.path.read_text()

    def broken(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(io.os, "replace", broken)
    with pytest.raises(OutputError, match="disk full") as exc:
        journal.result(1, observed="o")
    assert str(exc.value).startswith(f"{journal.path}: cannot be written")
    assert journal.path.read_text() == before
    leftovers = [p.name for p in journal.path.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_concurrent_writers_lose_no_entry(tmp_path):
    path = tmp_path / "journal.jsonl"
    code = (
        "import sys; from datavet.journal import Journal\n"
        "for i in range(5): Journal(sys.argv[1]).add(hypothesis=f'h{i}', changes=['c'])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path)], env=env) for _ in range(4)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    ids = [e["id"] for e in Journal(path).entries()]
    assert sorted(ids) == list(range(1, 21))


def test_a_run_log_older_than_the_prediction_is_warned_about(journal, tmp_path):
    log = tmp_path / "run.csv"
    log.write_text("step,loss\n0,1.0\n")
    old = time.time() - 3600
    os.utime(log, (old, old))
    entry, _ = journal.add(hypothesis="h", changes=["c"], predict="p", run=str(log))
    entry = journal.result(entry["id"], observed="o")
    assert "was last written before the prediction" in late_prediction(entry)
    log.write_text("step,loss\n0,1.0\n1,0.9\n")  # the run wrote its log after the prediction
    assert late_prediction(entry) is None
    assert late_prediction({**entry, "run": "python train.py --lr 0.01"}) is None


def test_markdown_cells_cannot_break_the_table_or_inject_html():
    md = render_markdown(
        [
            {
                "id": 1,
                "created": "2024-01-01T00:00:00+00:00",
                "hypothesis": "a | b\nnew row <script>",
                "changes": ["c"],
                "prediction": "p",
                "result": None,
            }
        ]
    )
    row = md.splitlines()[-1]
    assert row.count(" | ") == 6 and "a \\| b<br>new row &lt;script&gt;" in row


# -- the command line ------------------------------------------------------------------------


def test_cli_add_predict_result_search_list_show(tmp_path, capsys):
    j = tmp_path / "j.jsonl"
    code, out, err = run_cli(
        capsys,
        "journal",
        "add",
        "--journal",
        j,
        "--hypothesis",
        "lr too high",
        "--change",
        "lr 0.1 -> 0.01",
        "--symptom",
        "loss NaN at 3000",
        "--code",
        "C001",
    )
    assert code == 0 and out.strip() == "1"
    assert "no prediction yet" in err and f"wrote {j}" in err
    code, out, err = run_cli(capsys, "journal", "result", "1", "--observed", "x", "--journal", j)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith("datavet: error: entry 1 has no prediction")
    code, _, _ = run_cli(
        capsys, "journal", "predict", "1", "--predict", "no NaN in 10k steps", "--journal", j
    )
    assert code == 0
    code, out, _ = run_cli(
        capsys,
        "journal",
        "result",
        "1",
        "--observed",
        "no NaN in 10k steps",
        "--verdict",
        "confirmed",
        "--journal",
        j,
    )
    assert code == 0 and "confirmed: no NaN in 10k steps" in out
    code, out, _ = run_cli(capsys, "journal", "search", "nan", "--journal", j)
    assert code == 0 and out.startswith("#1 ") and "[C001]" in out
    assert run_cli(capsys, "journal", "search", "overfitting", "--journal", j)[0] == 1
    code, out, _ = run_cli(capsys, "journal", "list", "--journal", j)
    assert code == 0 and len(out.splitlines()) == 1
    code, out, _ = run_cli(capsys, "journal", "show", "--journal", j)
    assert code == 0 and out == j.with_suffix(".md").read_text()


def test_cli_warns_about_several_changes_and_reads_config_diffs(tmp_path, capsys):
    j = tmp_path / "j.jsonl"
    code, _, err = run_cli(
        capsys,
        "journal",
        "add",
        "--journal",
        j,
        "--hypothesis",
        "h",
        "--change",
        "lr",
        "--change",
        "init",
        "--predict",
        "p",
    )
    assert code == 0 and "changes 2 things" in err
    old, new = tmp_path / "a.toml", tmp_path / "b.toml"
    old.write_text("lr = 0.1\nseed = 1\nwarmup = 0\n")
    new.write_text("lr = 0.01\nseed = 1\nwarmup = 500\n")
    code, _, err = run_cli(
        capsys,
        "journal",
        "add",
        "--journal",
        j,
        "--hypothesis",
        "h",
        "--config-diff",
        old,
        new,
        "--predict",
        "p",
    )
    assert code == 0 and "changes 2 things (lr, warmup)" in err
    assert lines(j)[1]["config_diff"] == {"lr": [0.1, 0.01], "warmup": [0, 500]}
    code, _, err = run_cli(
        capsys,
        "journal",
        "add",
        "--journal",
        j,
        "--hypothesis",
        "h",
        "--config-diff",
        old,
        tmp_path / "missing.toml",
    )
    assert code == 2 and str(tmp_path / "missing.toml") in err and "no such file" in err


def test_cli_uses_the_environment_variable_and_refuses_unknown_entries(
    tmp_path, capsys, monkeypatch
):
    j = tmp_path / "env.jsonl"
    monkeypatch.setenv("DATAVET_JOURNAL", str(j))
    code, _, _ = run_cli(capsys, "journal", "add", "--hypothesis", "h", "--change", "c")
    assert code == 0 and j.exists()
    code, _, err = run_cli(capsys, "journal", "result", "7", "--observed", "o")
    assert code == 2 and "has no entry 7" in err
