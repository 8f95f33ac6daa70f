"""View benchmark: what Datasette asks of each view, timed with the sqlite3 module on stores
of different sizes, printed with each store's size.

    python benchmarks/bench_views.py --db 100k.db --db 1m.db [--runs 3] [--write-docs]

For a view, Datasette runs its first page (`SELECT * FROM view LIMIT 101`) and its row count
(`SELECT count(*) FROM view`) under a 1 s limit (`sql_time_limit_ms`; a count that times out
is left off the page), each facet a user asks for under 200 ms (`facet_time_limit_ms`), in
the SQL below, and a filter on a column (here one session's records). council-db's Datasette
plugin counts the facets on reviewer, model and scale of the record views from the day totals
instead (outlets/facet_counts.py): its query is timed beside Datasette's. Target (issue 19):
every first page well under 1 s at 1,000,000 sessions, and the reviewer facets under 1 s.
Stores are opened read-only; the time is the best of --runs, with its CPU time (the steadier
figure on a shared machine).
"""

from __future__ import annotations

import argparse
import sqlite3
import time
from pathlib import Path

from doc_tables import machine, markdown_table, write_table  # benchmarks/ is on the path when run as a script

from council_db.outlets.facet_counts import COUNTED

VIEWS = ("score_records", "within_session_scores", "session_summaries", "slot_means", "reviewer_profiles",
         "model_profiles", "reviewer_daily", "daily_scores")
FACET = ("select [{column}] as value, count(*) as count from (select * from [{view}]) "
         "where [{column}] is not null group by [{column}] order by count desc, value limit 31")
FACETS = (("score_records", "reviewer"), ("within_session_scores", "reviewer"), ("session_summaries", "category"))


def queries() -> dict[str, tuple[str, dict]]:
    """Label -> SQL and parameters, in the order they are printed (:session is a session key in
    the middle)."""
    found = {f"{view}: first page": f"SELECT * FROM [{view}] LIMIT 101" for view in VIEWS}
    for view, column in FACETS:
        found[f"{view}: facet on {column}"] = FACET.format(view=view, column=column)
        if view in COUNTED:
            found[f"{view}: facet on {column}, counted by the plugin"] = COUNTED[view].counts(column, {}, 31)
    found.update({f"{view}: row count": f"SELECT count(*) FROM [{view}]" for view in VIEWS})
    found.update({f"{view}: one session's rows": f"SELECT * FROM [{view}] WHERE session_id = :session LIMIT 101"
                  for view in ("score_records", "within_session_scores", "session_summaries")})
    return {label: sql if isinstance(sql, tuple) else (sql, {}) for label, sql in found.items()}


def timed(connection: sqlite3.Connection, sql: str, params: dict, runs: int) -> tuple[float, float]:
    """Best wall seconds of ``runs`` runs, and the CPU seconds of that run."""
    (session,) = connection.execute("SELECT session_key FROM sessions WHERE id >= (SELECT MAX(id) / 2 FROM sessions) "
                                    "ORDER BY id LIMIT 1").fetchone()
    best = (float("inf"), 0.0)
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        connection.execute(sql, {"session": session} if ":session" in sql else params).fetchall()
        best = min(best, (time.perf_counter() - wall, time.process_time() - cpu))
    return best


def store_size(path: Path) -> tuple[int, int, float]:
    """Sessions, records, and megabytes of the file."""
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    sessions, records = (connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                         for table in ("sessions", "scores"))
    connection.close()
    return sessions, records, path.stat().st_size / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, action="append", required=True,
                        help="a council-db SQLite file at the current schema (repeat for several sizes)")
    parser.add_argument("--runs", type=int, default=3, help="runs per query: the best is kept")
    parser.add_argument("--write-docs", action="store_true",
                        help="write the table 'views-sqlite' of docs/benchmarks.md")
    options = parser.parse_args()

    sizes = [store_size(path) for path in options.db]
    header = ["query", *(f"{sessions:,} sessions" for sessions, _, _ in sizes)]
    rows = []
    connections = [sqlite3.connect(f"file:{path}?mode=ro", uri=True) for path in options.db]
    for label, (sql, params) in queries().items():
        cells = []
        for connection in connections:
            wall, cpu = timed(connection, sql, params, options.runs)
            cells.append(f"{wall:.3f} s ({cpu:.3f} s CPU)")
        rows.append([label, *cells])
        print(" | ".join(rows[-1]), flush=True)
    for connection in connections:
        connection.close()
    table = markdown_table(header, rows, right=range(1, len(header)))
    stores = "; ".join(f"{s:,} sessions, {r:,} records, {mb:,.0f} MB" for s, r, mb in sizes)
    print(table, f"\n{stores}", sep="\n")
    if options.write_docs:
        write_table("views-sqlite", table, f"{machine()}; {stores}; best of {options.runs}")


if __name__ == "__main__":
    main()
