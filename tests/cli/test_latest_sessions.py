"""`council-db sessions` reads the latest sessions through the time index: at a million
sessions sorting every one of them took 2.2 s for 20 rows (benchmarks/bench_commands.py).
The order is unchanged: newest first, undated sessions last, --sessions N over both."""

from __future__ import annotations

import json
import sqlite3

from council_db.resources import read_sql
from tests.conftest import both_backends, session, write_jsonl


@both_backends
def test_the_latest_sessions_come_newest_first_and_the_undated_last_within_the_limit(cli, tmp_path):
    dated = [line for n in range(3) for line in session(f"dated-{n}", timestamp=f"2025-12-0{n + 1}T10:00:00Z")]
    undated = [line for n in range(2) for line in session(f"undated-{n}", timestamp="")]
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", dated + undated))).exit_code == 0

    every = json.loads(cli("sessions", "--json").stdout)
    four = json.loads(cli("sessions", "--sessions", "4", "--json").stdout)
    two = json.loads(cli("sessions", "--sessions", "2", "--json").stdout)

    assert [row["session_id"] for row in every] == ["dated-2", "dated-1", "dated-0", "undated-1", "undated-0"]
    assert [row["session_id"] for row in four] == ["dated-2", "dated-1", "dated-0", "undated-1"]
    assert [row["session_id"] for row in two] == ["dated-2", "dated-1"]
    assert {row["records"] for row in every} == {16}


def test_the_latest_sessions_are_read_through_the_time_index_without_sorting_every_session(cli, db_path, tmp_path):
    lines = [line for n in range(3) for line in session(f"s-{n}", timestamp=f"2025-12-0{n + 1}T10:00:00Z")]
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", lines))).exit_code == 0
    with sqlite3.connect(db_path) as connection:
        plan = [row[3] for row in connection.execute("EXPLAIN QUERY PLAN " + read_sql("sessions_latest"),
                                                     {"limit": 20})]

    assert not [step for step in plan if step.startswith("SCAN sessions")], plan
    assert any("USING INDEX ix_sessions_ts_us" in step for step in plan), plan
