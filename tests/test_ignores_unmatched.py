"""A per-column ignore whose column matches no column of the data is reported in a note."""

import datavet


def test_unmatched_per_column_ignore_is_noted_with_a_suggestion():
    report = datavet.audit(
        "sample_data/planted_train.parquet",
        target="label",
        baselines=False,
        per_column_ignores={
            "X3": {"rules": ["F001"], "reason": "constant by design"},
            "nothing_like_it*": {"rules": ["F001"], "reason": "old column"},
        },
    )
    notes = [n for n in report.notes if n.startswith("per-column-ignores:")]
    assert len(notes) == 2
    assert "'X3' matches no column of the data (did you mean 'x3'?)" in notes[0]
    assert "'nothing_like_it*' matches no column" in notes[1]
    assert [f.columns for f in report.findings if f.code == "F001"] == [("x3",)]  # not ignored


def test_matching_ignores_add_no_note():
    report = datavet.audit(
        "sample_data/planted_train.parquet",
        target="label",
        baselines=False,
        per_column_ignores={"x*": {"rules": ["F001"], "reason": "constant by design"}},
    )
    assert not [n for n in report.notes if n.startswith("per-column-ignores:")]
    assert [i.finding.columns for i in report.ignored] == [("x3",)]
