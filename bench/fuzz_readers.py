"""The fuzzer's former entry point, kept for old command lines: runs ``bench/fuzz.py``.

python bench/fuzz_readers.py --iterations 2000      # same as: python bench/fuzz.py -n 2000
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.argv[0] = str(Path(__file__).with_name("fuzz.py"))
    runpy.run_path(sys.argv[0], run_name="__main__")
