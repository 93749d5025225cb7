"""Cold start on a small file: datavet against the smallest script that reads the data.

    python bench/bench_cold.py [--runs 5]

Each command runs in a fresh interpreter, the commands interleaved (run 1 of each, then run 2
of each, ...), and the median of the runs is reported. Byte code is cached (one untimed run of
each command first), as it is after an install:

- ``floor``: a script that imports pyarrow and NumPy, reads ``sample_data/planted_train.csv``
  (400 rows) and computes NaN/inf counts, mean and std per column;
- ``import``: ``python -c "import datavet"``;
- ``audit``: ``datavet audit sample_data/planted_train.csv --target label`` (baselines
  included);
- ``check``: ``datavet check`` on the 400-row train/test pair with the target.

Targets: the audit at most 2.0x the floor, ``import datavet`` at most 0.5x (it loads neither
pandas, SciPy, scikit-learn, Jinja2 nor PyTorch), and ``check`` at most 2.0x. ``targets()``
returns the rows (name, measured, target, met) for ``bench/bench_compare.py``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRAIN = ROOT / "sample_data" / "planted_train.csv"
TEST = ROOT / "sample_data" / "planted_test.csv"

FLOOR = """\
import sys
import numpy as np
import pyarrow.csv as pacsv

table = pacsv.read_csv(sys.argv[1])
for name in table.column_names:
    col = table.column(name)
    try:
        a = col.to_numpy().astype(float)
    except (TypeError, ValueError):
        continue
    finite = a[np.isfinite(a)]
    print(name, int(np.isnan(a).sum()), int(np.isinf(a).sum()),
          finite.mean() if finite.size else None, finite.std() if finite.size else None)
"""

# name -> (target ratio to the floor or None, command builder)
TARGETS = {"floor": None, "import": 0.5, "audit": 2.0, "check": 2.0}


def _commands(floor_script: str) -> dict[str, list[str]]:
    py = sys.executable
    cli = [py, "-m", "datavet"]
    return {
        "floor": [py, floor_script, str(TRAIN)],
        "import": [py, "-c", "import datavet"],
        "audit": [*cli, "audit", str(TRAIN), "--target", "label", "--exit-zero"],
        "check": [*cli, "check", str(TRAIN), str(TEST), "--target", "label", "--exit-zero"],
    }


SRC = ROOT / "src"  # --src: another checkout's source tree (a before/after comparison)


def _env(cache: str) -> dict[str, str]:
    """The source tree first on the path, and byte code cached (in ``cache``, as after an
    install): with PYTHONDONTWRITEBYTECODE set, every run would compile datavet's modules
    again while NumPy's and pyarrow's come compiled with their wheels."""
    src = str(SRC)
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PYTHONPATH": src + (os.pathsep + path if path else "")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = cache
    return env


def measure(runs: int = 5) -> dict[str, float]:
    """Median wall seconds per command over ``runs`` interleaved rounds."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "floor.py"
        script.write_text(FLOOR)
        commands, env = _commands(str(script)), _env(str(Path(tmp) / "pycache"))
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, cmd in commands.items():
                if not os.path.isdir(Path(tmp) / "pycache" / "warm" / name):  # one untimed run
                    subprocess.run(cmd, env=env, cwd=tmp, capture_output=True)
                    os.makedirs(Path(tmp) / "pycache" / "warm" / name)
                start = time.perf_counter()
                done = subprocess.run(cmd, env=env, cwd=tmp, capture_output=True, text=True)
                times[name].append(time.perf_counter() - start)
                if done.returncode not in (0, 1):
                    raise RuntimeError(f"{name} failed ({done.returncode}): {done.stderr[-500:]}")
    return {name: statistics.median(values) for name, values in times.items()}


def targets(runs: int = 5) -> list[tuple[str, str, str, bool]]:
    """(name, measured, target, met) rows: each command's median against the floor's."""
    median = measure(runs)
    floor = median["floor"]
    rows = [("small file: floor script (pyarrow + NumPy)", f"{floor:.2f} s", "-", True)]
    labels = {
        "import": "small file: import datavet",
        "audit": "small file: datavet audit (400 rows, baselines)",
        "check": "small file: datavet check (400-row pair)",
    }
    for name, label in labels.items():
        ratio = median[name] / floor
        limit = TARGETS[name]
        rows.append(
            (
                label,
                f"{median[name]:.2f} s ({ratio:.2f}x floor)",
                f"<= {limit:.1f}x",
                ratio <= limit,
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="interleaved rounds (median)")
    parser.add_argument("--src", type=Path, help="the datavet source tree to time (default: ./src)")
    args = parser.parse_args()
    if args.src:
        global SRC
        SRC = args.src.resolve()
    rows = targets(args.runs)
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'measured':<24} {'target':<8} met")
    for name, measured, target, met in rows:
        print(f"{name:<{width}}  {measured:<24} {target:<8} {'yes' if met else 'NO'}")


if __name__ == "__main__":
    main()
