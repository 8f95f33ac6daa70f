"""What the section "Against the reference" costs `council-db bias-report` on a store where a
share of the sessions is human-rated (issue 28: at most 10% of the report).

    python benchmarks/bench_reference_report.py [--sessions 100000] [--reference-share 0.1]
                                                [--runs 3] [--db FILE]

Simulates the default council (four models judging each other, four answers a session) with
five humans, three of them rating a share --reference-share of the sessions, and imports it into
a SQLite file (--db keeps it for the next run; it is reused when it exists). Then, median of
--runs: the whole report as `bias-report` makes it (`report_for_window`: load the window, every
analysis, the section) and, on the same loaded window, the section alone
(`reference_section.attach`: the reference summary and its contract). Above 5,000 sessions the
report reads a sample of 5,000 (the section too), so its cost does not grow with the store.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import time
from pathlib import Path

from council_db.analysis.loading.window import Window, load_for_report
from council_db.ingest.importer import import_files
from council_db.report import reference_section
from council_db.report.builder import build
from council_db.report.for_window import report_for_window
from council_db.simulate import SimulationConfig, write_jsonl
from council_db.store.database import open_database

HUMANS = ["h1", "h2", "h3", "h4", "h5"]


def store(path: Path, sessions: int, share: float) -> None:
    """The simulated store at ``path`` (made once)."""
    if path.exists():
        return
    lines = path.with_suffix(".jsonl")
    config = SimulationConfig(sessions=sessions, seed=1, humans=HUMANS, humans_per_session=3, reference_share=share,
                              answer_sd=1.0)
    with lines.open("w", encoding="utf-8") as out:
        write_jsonl(config, out)
    started = time.perf_counter()
    import_files(open_database(f"sqlite:///{path}", notify=lambda _: None), [str(lines)])
    print(f"imported in {time.perf_counter() - started:.0f} s")
    lines.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--reference-share", type=float, default=0.1)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--db", type=Path, default=None)
    args = parser.parse_args()
    print(f"Python {platform.python_version()} on {platform.machine()}")
    with tempfile.TemporaryDirectory() as scratch:
        path = args.db or Path(scratch) / "council.db"
        store(path, args.sessions, args.reference_share)
        db = open_database(f"sqlite:///{path}", notify=lambda _: None)
        with db.reading() as reader:
            sessions, records = reader.scalar("SELECT COUNT(*) FROM sessions"), reader.scalar("SELECT COUNT(*) FROM scores")
            rated = reader.scalar("SELECT COUNT(DISTINCT s.session_id) FROM scores AS s JOIN models AS m "
                                  "ON m.id = s.reviewer_id WHERE m.reviewer_kind = 'human'")
        print(f"Store: {sessions:,} sessions, {records:,} records, {rated:,} sessions rated by humans "
              f"({rated / sessions:.1%}), {path.stat().st_size / 1e6:.0f} MB")
        whole, section = [], []
        for _ in range(args.runs):
            started = time.perf_counter()
            report_for_window(db, Window(), {})
            whole.append(time.perf_counter() - started)
            loaded = load_for_report(db, Window())
            report = build(loaded.data, totals=loaded.totals, window_sessions=loaded.window_sessions)
            started = time.perf_counter()
            reference_section.attach(report, loaded.with_reference)
            section.append(time.perf_counter() - started)
        sample = loaded.with_reference
        print(f"Report sample: {loaded.data.n_sessions:,} sessions ({sample.n_records:,} records with the humans'); "
              f"median of {args.runs}")
        print(f"  bias-report (report_for_window)   {statistics.median(whole):.3f} s")
        print(f"  the section 'Against the reference' {statistics.median(section):.3f} s "
              f"({statistics.median(section) / statistics.median(whole):.1%} of the report; target <= 10%)")


if __name__ == "__main__":
    main()
