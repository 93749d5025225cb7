"""journal: key=value .cfg files, ids after cut-off lines, duplicated ids, a missing folder."""

from __future__ import annotations

import json

import pytest

from datavet.errors import UsageError
from datavet.journal import Journal, load_config


def test_a_cfg_without_a_section_header_is_read_as_key_value(tmp_path):
    cfg = tmp_path / "a.cfg"
    cfg.write_text("lr=0.1\nbs=32\n")
    assert load_config(cfg) == {"lr": "0.1", "bs": "32"}
    ini = tmp_path / "b.cfg"
    ini.write_text("[opt]\nlr = 0.1\n")
    assert load_config(ini) == {"opt.lr": "0.1"}


def test_a_new_entry_takes_no_id_of_a_cut_off_line(tmp_path):
    j = Journal(tmp_path / "j.jsonl")
    for k in range(3):
        j.add(hypothesis=f"h{k}", changes=["c"], predict="p")
    text = j.path.read_text()
    j.path.write_text(text[:-40])  # the last entry (id 3) is cut off
    entry, _ = j.add(hypothesis="h", changes=["c"], predict="p")
    assert entry["id"] == 4


def test_predict_and_result_refuse_a_duplicated_id(tmp_path):
    j = Journal(tmp_path / "j.jsonl")
    j.add(hypothesis="h", changes=["c"], predict="p")
    j.add(hypothesis="h2", changes=["c"])
    rows = j.path.read_text().splitlines()
    j.path.write_text("\n".join([*rows, *rows]) + "\n")  # a hand-merged journal
    with pytest.raises(UsageError, match="2 entries with id 1"):
        j.result(1, observed="x")
    with pytest.raises(UsageError, match="2 entries with id 2"):
        j.predict(2, "p")
    assert all(json.loads(r)["result"] is None for r in j.path.read_text().splitlines())


def test_a_journal_in_a_missing_folder_is_refused(tmp_path):
    j = Journal(tmp_path / "typo" / "j.jsonl")
    with pytest.raises(UsageError, match="folder .* does not exist"):
        j.add(hypothesis="h", changes=["c"], predict="p")
    assert not (tmp_path / "typo").exists()
