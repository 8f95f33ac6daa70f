"""Bad input, the long run: the fuzzing properties of tests/ingest/test_fuzz.py and
test_fast_decode.py with many examples.

    python benchmarks/fuzz_long.py [--examples 5000]

Runs pytest on those files with COUNCIL_DB_FUZZ_EXAMPLES set, and prints how many
inputs hypothesis tried per property and the outcome.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=5_000, help="examples per property (CI uses 120)")
    args = parser.parse_args()
    env = {**os.environ, "COUNCIL_DB_FUZZ_EXAMPLES": str(args.examples)}
    start = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/ingest/test_fuzz.py",
                          "tests/ingest/test_fast_decode.py", "-k", "not malformed", "--hypothesis-show-statistics"],
                         cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.monotonic() - start
    for name, block in re.findall(r"tests/ingest/test_\w+\.py::(\w+):\n(.*?)(?=\ntests/|\Z)", run.stdout, re.S):
        counts = re.findall(r"(\d+) passing, (\d+) failing, and (\d+) invalid", block)
        tried = [sum(int(n) for n in found) for found in counts]
        failing = sum(int(found[1]) for found in counts)
        print(f"{name}: {sum(tried):,} inputs tried, {failing} failing")
    print(run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr)
    print(f"{elapsed:.0f} s, {args.examples} examples asked per property")
    sys.exit(run.returncode)


if __name__ == "__main__":
    main()
