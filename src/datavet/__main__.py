"""``python -m datavet``: the ``datavet`` program (:func:`datavet.cli.run`). Ctrl-C while the
command line loads is one line, ``datavet: interrupted``, and exit 2, as it is once it runs."""

try:
    from datavet.cli import run

    raise SystemExit(run())
except KeyboardInterrupt:
    import sys

    print("datavet: interrupted", file=sys.stderr)
    raise SystemExit(2) from None
