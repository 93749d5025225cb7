"""``datavet check`` over several files: an unreadable one is its own one-line error, and the
other files are still audited and reported (the pre-commit hook must not hide their findings)."""

from __future__ import annotations

from datavet.cli import main


def _files(tmp_path):
    good = tmp_path / "good.csv"
    good.write_text("a,b,label\n1,,0\n3,4,1\n5,6,0\n")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    return good, empty


def test_an_unreadable_file_does_not_hide_the_others(tmp_path, capsys):
    good, empty = _files(tmp_path)
    for order in ([good, empty], [empty, good]):
        code = main(["check", "--isolated", "--format", "concise", *map(str, order)])
        out, err = capsys.readouterr()
        assert code == 2
        assert "V001" in out and "good.csv" in out  # the good file's finding is shown
        errors = [line for line in err.splitlines() if line.startswith("datavet: error:")]
        assert len(errors) == 1 and "empty.csv" in errors[0] and "empty" in errors[0]


def test_one_unreadable_file_alone_is_still_exit_2_with_nothing_on_stdout(tmp_path, capsys):
    _, empty = _files(tmp_path)
    code = main(["check", "--isolated", str(empty)])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("datavet: error:") == 1


def test_html_of_each_readable_file_is_written(tmp_path, capsys):
    good, empty = _files(tmp_path)
    other = tmp_path / "other.csv"
    other.write_text("a,b,label\n1,2,0\n3,4,1\n5,6,0\n")
    html = tmp_path / "report.html"
    code = main(["check", "--isolated", "--html", str(html), str(good), str(empty), str(other)])
    capsys.readouterr()
    assert code == 2
    written = sorted(p.name for p in tmp_path.glob("report*.html"))
    assert len(written) == 2, written  # one page per audited file, none for the empty one
