"""Datasette benchmark: the record-view pages a Datasette user opens, served by a real
Datasette on 127.0.0.1 with council-db's plugin and metadata, timed from the client, on
stores of different sizes, printed with each store's size.

    python benchmarks/bench_datasette.py --db 100k.db --db 1m.db [--runs 3] [--write-docs]

Needs the datasette extra (pip install -e '.[datasette]'). Datasette runs with
`--setting suggest_facets off`, as docs/datasette.md advises for large stores: its facet
suggestions query every column of a view. Each page opens with the metadata's facets
(reviewer, model, score_scale), which the plugin counts from the day totals; Datasette gives
a facet 200 ms and leaves out one that takes longer, so each cell also says which facets the
page showed. A page's row count is Datasette's own (`select count(*)` under its 1 s limit).
Target (issue 19): the facet on reviewer of the record views under 1 s at 1,000,000 sessions.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from bench_views import store_size  # benchmarks/ is on the path when run as a script
from doc_tables import machine, markdown_table, write_table

from council_db.outlets.datasette_metadata import for_database

# (view, filter column and the example it takes, label)
PAGES = (
    ("score_records", None, "score_records, first page with its facets"),
    ("score_records", ("reviewer", "reviewer"), "score_records, one reviewer's records with its facets"),
    ("score_records", ("session_id", "session"), "score_records, one session's records with its facets"),
    ("within_session_scores", None, "within_session_scores, first page with its facets"),
    ("scores", None, "scores, first page with its facets"),
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def plugin_options(folder: Path) -> list[str]:
    """Load the plugin through --plugins-dir unless its entry point is installed."""
    if importlib.metadata.entry_points(group="datasette", name="council_db"):
        return []
    (folder / "council_db_plugin.py").write_text(
        "from council_db.outlets.datasette_plugin import (  # noqa: F401\n"
        "    canned_queries, database_actions, prepare_connection, register_facet_classes, register_routes)\n")
    return ["--plugins-dir", str(folder)]


def serve(path: Path, folder: Path) -> tuple[subprocess.Popen, str]:
    """A Datasette serving ``path`` with its metadata, and its base URL once it answers."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "datasette", "serve", str(path), "-m", str(for_database(path)),
                               *plugin_options(folder), "--setting", "suggest_facets", "off",
                               "--host", "127.0.0.1", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            httpx.get(f"{base}/-/versions.json", timeout=5)
            return server, base
        except httpx.TransportError:
            time.sleep(0.1)
    server.terminate()
    raise SystemExit("Datasette did not start")


def examples(path: Path) -> dict[str, str]:
    """A reviewer and a session key in the middle of the store, for the filtered pages."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
        (reviewer,) = connection.execute("SELECT name FROM models ORDER BY id LIMIT 1").fetchone()
        (session,) = connection.execute("SELECT session_key FROM sessions WHERE id >= (SELECT MAX(id) / 2 "
                                        "FROM sessions) ORDER BY id LIMIT 1").fetchone()
    return {"reviewer": reviewer, "session": session}


def timed_page(client: httpx.Client, path: str, params: dict[str, str], runs: int) -> str:
    """Best wall seconds of ``runs`` loads of the HTML page, and the facets its JSON shows."""
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        client.get(path, params=params).raise_for_status()
        best = min(best, time.perf_counter() - start)
    shown = client.get(f"{path}.json", params=params).json()["facet_results"]
    return f"{best:.3f} s ({', '.join(shown) or 'no facets'})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, action="append", required=True,
                        help="a council-db SQLite file at the current schema (repeat for several sizes)")
    parser.add_argument("--runs", type=int, default=3, help="loads per page: the best is kept")
    parser.add_argument("--write-docs", action="store_true",
                        help="write the table 'views-datasette' of docs/benchmarks.md")
    options = parser.parse_args()

    sizes = [store_size(path) for path in options.db]
    rows = {label: [label] for _, _, label in PAGES}
    for path in options.db:
        with tempfile.TemporaryDirectory() as folder:
            server, base = serve(path, Path(folder))
            try:
                with httpx.Client(base_url=base, timeout=600) as client:
                    values = examples(path)
                    for view, selected, label in PAGES:
                        params = {selected[0]: values[selected[1]]} if selected else {}
                        rows[label].append(timed_page(client, f"/{path.stem}/{view}", params, options.runs))
                        print(label, "|", rows[label][-1], flush=True)
            finally:
                server.terminate()
                server.wait(timeout=30)
    header = ["page", *(f"{sessions:,} sessions" for sessions, _, _ in sizes)]
    table = markdown_table(header, list(rows.values()), right=range(1, len(header)))
    stores = "; ".join(f"{s:,} sessions, {r:,} records, {mb:,.0f} MB" for s, r, mb in sizes)
    print(table, f"\n{stores}", sep="\n")
    if options.write_docs:
        write_table("views-datasette", table, f"{machine()}; {stores}; best of {options.runs}")


if __name__ == "__main__":
    main()
