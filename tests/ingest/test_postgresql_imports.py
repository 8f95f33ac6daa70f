"""Imports into PostgreSQL: the planner's statistics follow the imported rows, and an import
killed after its first commit is found dead (its advisory lock gone) and resumed after it.

Real server (tests/postgres.py), real council-db processes killed with SIGKILL.
"""

from __future__ import annotations

from collections import Counter

import pytest

from tests.conftest import scalar
from tests.ingest.test_crash_safety import with_bad_lines
from tests.reliability import council_db_argv, file_records, kill_after_first_commit, run_and_kill, simulated_file

pytestmark = pytest.mark.usefixtures("pg_cluster")


def planner_rows(db, table: str) -> tuple[float, object]:
    """(reltuples, last_analyze): what the planner believes the table holds, and when an
    ANALYZE (not autovacuum) last looked."""
    return (scalar(db, f"SELECT reltuples FROM pg_class WHERE relname = '{table}'"),
            scalar(db, f"SELECT last_analyze FROM pg_stat_user_tables WHERE relname = '{table}'"))


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_an_import_into_postgresql_leaves_the_planner_the_rows_it_imported(cli, db, tmp_path):
    source = simulated_file(tmp_path / "bias_metrics.jsonl", 50, seed=3)
    assert cli("import", "--quiet", str(source)).exit_code == 0
    for table in ("scores", "sessions", "session_stats"):
        reltuples, analyzed = planner_rows(db, table)
        assert analyzed is not None, table
        assert reltuples == scalar(db, f"SELECT count(*) FROM {table}") > 0, table


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_an_import_into_postgresql_killed_after_its_first_commit_is_analyzed_then_resumed(db, db_url, tmp_path):
    source = simulated_file(tmp_path / "bias_metrics.jsonl", 600, seed=8)
    expected = file_records(source)
    bad_numbers = with_bad_lines(source, every=700)
    argv = council_db_argv(db_url, "import", "--quiet", str(source), commit_every=500)

    assert kill_after_first_commit(argv, db_url).killed
    reltuples, analyzed = planner_rows(db, "scores")
    assert analyzed is not None and reltuples == scalar(db, "SELECT count(*) FROM scores") > 0

    final = run_and_kill(argv, after=120)
    assert final.returncode == 3, final.stderr.decode()
    assert scalar(db, "SELECT string_agg(status, ',' ORDER BY id) FROM imports") == "interrupted,complete"
    numbers = scalar(db, "SELECT array_agg(line_number) FROM rejected_lines")
    assert Counter(numbers) == Counter(bad_numbers), "every bad line is kept exactly once"
    assert scalar(db, "SELECT sum(inserted) FROM imports") == len(expected) == scalar(db, "SELECT count(*) FROM scores")
