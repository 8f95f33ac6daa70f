"""The reading side of the judge-log line formats' import, in this process: what each of the
two reading worker processes spends a record (reader and normaliser, no writer), as CPU
microseconds, which on a machine shared with other work is steadier than wall time.

    python benchmarks/bench_judge_reading.py [--records 200000] [--formats fastchat-single ...]
                                             [--repeats 3] [--profile 25]

The files are bench_importers.py's (a real line of each format, its keys varied). Each run
reads the whole file a batch at a time as ingest/pipeline.py's workers do and normalises it;
the least CPU of ``--repeats`` runs is printed. ``--profile N`` prints cProfile's N costliest
functions of one run instead (by their own time).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import tempfile
import time
from pathlib import Path

from bench_importers import FORMATS, VICUNA  # benchmarks/ is on the path when run as a script

from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.formats.readers import reader
from council_db.ingest.lines import read_batches
from council_db.ingest.normalise import Normaliser
from council_db.ingest.sources import resolve_sources

ANSWERS = {"fastchat-review": VICUNA / "answer"}
JUDGE_FORMATS = ["fastchat-single", "fastchat-pair", "fastchat-review", "judgebench", "arena-hard"]


def read_all(name: str, path: Path) -> tuple[int, int]:
    """Records and rejected lines of ``path`` read and normalised as an import's worker does."""
    source = resolve_sources([str(path)])[0]
    normaliser = Normaliser(reader(FormatOptions(name, answers=ANSWERS.get(name)), source))
    records = rejected = 0
    with path.open("rb") as stream:
        for batch in read_batches(stream):
            normalised = normaliser.normalise(batch)
            records += len(normalised.rows)
            rejected += len(normalised.rejected)
    return records, rejected


def cpu_us(name: str, path: Path) -> tuple[float, int]:
    """CPU microseconds a record of one read, and the records."""
    start = time.process_time()
    records, rejected = read_all(name, path)
    if rejected:
        raise SystemExit(f"{name}: {rejected} lines rejected in a generated file")
    return (time.process_time() - start) / records * 1e6, records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--formats", nargs="+", choices=JUDGE_FORMATS, default=JUDGE_FORMATS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", type=int, default=0, help="print cProfile's N costliest functions instead")
    args = parser.parse_args()
    print(f"{args.records:,} records a format; load {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as folder:
        for name in args.formats:
            made = Path(folder) / name
            made.mkdir()
            path = FORMATS[name].write(made, args.records)
            if args.profile:
                profile = cProfile.Profile()
                profile.runcall(read_all, name, path)
                pstats.Stats(profile).sort_stats("tottime").print_stats(args.profile)
                continue
            runs = [cpu_us(name, path) for _ in range(args.repeats)]
            print(f"{name}: {runs[0][1]:,} records ({path.stat().st_size / 1e6:,.0f} MB), "
                  f"{min(us for us, _ in runs):.1f} us CPU a record (runs: {', '.join(f'{us:.1f}' for us, _ in runs)})",
                  flush=True)


if __name__ == "__main__":
    main()
