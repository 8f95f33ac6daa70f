"""Every record points at a stored session, models, scale (and exclusion reason and envelope):
after an import, after an import killed midway, and after deletes by hand, on both backends.

PostgreSQL has no per-row foreign keys on scores and session_stats (migration 0008: checking
them was most of an import's time); statement-level triggers cascade a session's delete and
refuse removing a row that records use, as SQLite's foreign keys do. What an edit by hand can
still break (SQLite's shell leaves foreign keys off; PostgreSQL does not check an insert),
`council-db db check` finds, and `--repair` deletes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from council_db.store import migrate
from council_db.store.database import WRITE_LOCK_KEY
from council_db.store.references import RECORD_PARTS, REFERENCES, orphans
from tests.conftest import both_backends, session, write_jsonl
from tests.reliability import council_db_argv, kill_after_first_commit, simulated_file
from tests.store.test_derived_tables import by_hand, checked


def all_orphans(db) -> dict[str, int]:
    """Rows referring to a missing row, per (table.column), counted here in plain SQL."""
    found = {}
    with db.engine.connect() as connection:
        for table, column, referred in REFERENCES:
            found[f"{table}.{column}"] = connection.execute(text(
                f"SELECT COUNT(*) FROM {table} AS c WHERE c.{column} IS NOT NULL AND NOT EXISTS "
                f"(SELECT 1 FROM {referred} AS p WHERE p.id = c.{column})")).scalar_one()
    return found


def edited(db, *statements: str) -> None:
    """Statements run through a connection of council-db's own (SQLite: foreign keys on)."""
    with db.engine.begin() as connection:
        for statement in statements:
            connection.execute(text(statement))


def counts(db, session_id: int) -> tuple[int, int]:
    with db.engine.connect() as connection:
        return tuple(connection.execute(text(f"SELECT COUNT(*) FROM {table} WHERE session_id = {session_id}"))
                     .scalar_one() for table in ("scores", "session_stats"))


@both_backends
def test_an_import_and_an_import_killed_after_its_first_commit_leave_no_record_without_its_rows(
        cli, db, db_url, tmp_path):
    lines = session("a") + session("b", score_value=0.0) + [dict(session("a")[0], timestamp="2025-12-18T00:00:00Z",
                                                                 position=7)]
    assert cli("import", "-q", str(write_jsonl(tmp_path / "small.jsonl", lines))).exit_code == 0
    source = simulated_file(tmp_path / "large.jsonl", 600, seed=4)
    target: Path | str = Path(db_url.removeprefix("sqlite:///")) if db_url.startswith("sqlite") else db_url
    assert kill_after_first_commit(council_db_argv(target, "import", "-q", str(source), commit_every=500),
                                   target).killed
    with db.engine.connect() as connection:
        assert connection.execute(text("SELECT COUNT(*) FROM scores")).scalar_one() > 2 * 16
    assert set(all_orphans(db).values()) == {0}
    assert [finding.extra for finding in orphans(db)] == [0] * (len(REFERENCES) + len(RECORD_PARTS))


@both_backends
def test_deleting_sessions_deletes_their_records_and_statistics(cli, db, tmp_path):
    assert cli("import", "-q", str(write_jsonl(tmp_path / "in.jsonl", session("a") + session("b")))).exit_code == 0
    assert counts(db, 1) == counts(db, 2) == (16, 1)
    edited(db, "DELETE FROM sessions WHERE id = 1")
    assert counts(db, 1) == (0, 0) and counts(db, 2) == (16, 1)
    assert set(all_orphans(db).values()) == {0}


@both_backends
def test_deleting_an_import_by_hand_keeps_its_sessions_and_records_and_repair_empties_their_import_id(
        cli, db, tmp_path):
    assert cli("import", "-q", str(write_jsonl(tmp_path / "in.jsonl", session("a")))).exit_code == 0
    edited(db, "DELETE FROM imports")
    with db.engine.connect() as connection:
        assert connection.execute(text("SELECT COUNT(*), COUNT(import_id) FROM sessions")).one() == (1, 0)
    # scores.import_id has no foreign key (a few bytes a record, not an index): db check finds it
    assert counts(db, 1) == (16, 1) and all_orphans(db) == {**dict.fromkeys(all_orphans(db), 0), "scores.import_id": 16}
    assert checked(cli, "--repair")[0] == 0
    assert set(all_orphans(db).values()) == {0} and counts(db, 1) == (16, 1)


@both_backends
@pytest.mark.parametrize("statement", [
    "DELETE FROM models WHERE id = 1", "DELETE FROM scales", "UPDATE models SET id = 1000 WHERE id = 2",
    "UPDATE sessions SET id = 1000 WHERE id = 1", "UPDATE scales SET id = 1000",
    "DELETE FROM exclusion_reasons WHERE id = 1", "DELETE FROM record_envelopes", "UPDATE imports SET id = 1000"])
def test_removing_or_renumbering_a_row_that_records_use_is_refused(cli, db, tmp_path, statement):
    lines = session("a", score_value=0.0) + [dict(session("a")[0], timestamp="2025-12-18T00:00:00Z", position=7)]
    assert cli("import", "-q", str(write_jsonl(tmp_path / "in.jsonl", lines))).exit_code == 0
    with pytest.raises(DBAPIError, match="(?i)foreign key|refer"):  # SQLite's message, or the triggers'
        edited(db, statement)
    assert set(all_orphans(db).values()) == {0} and counts(db, 1) == (17, 1)


@both_backends
def test_a_row_that_no_record_uses_can_still_be_removed(cli, db, tmp_path):
    assert cli("import", "-q", str(write_jsonl(tmp_path / "in.jsonl", session("a")))).exit_code == 0
    edited(db, "INSERT INTO models (id, name) VALUES (500, 'unused')", "DELETE FROM models WHERE id = 500",
           "INSERT INTO models (id, name) VALUES (501, 'renamed')", "UPDATE models SET name = 'new' WHERE id = 501")


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
@pytest.mark.parametrize("table", ["models", "scales", "sessions"])
def test_emptying_a_referred_table_by_truncate_is_refused_on_postgresql(cli, db, tmp_path, table):
    assert cli("import", "-q", str(write_jsonl(tmp_path / "in.jsonl", session("a")))).exit_code == 0
    with pytest.raises(DBAPIError, match="(?i)refer"):
        edited(db, f"TRUNCATE {table} CASCADE")
    edited(db, "TRUNCATE scores, session_stats, sessions, models, scales CASCADE")  # all at once is fine


@both_backends
def test_db_check_finds_records_pointing_at_missing_rows_and_repair_deletes_them(cli, db, db_url, tmp_path):
    lines = session("a") + session("b") + session("c")
    assert cli("import", "-q", str(write_jsonl(tmp_path / "in.jsonl", lines))).exit_code == 0
    # as sqlite3's shell (foreign keys off) or psql (no per-row check of scores) would let a user
    by_hand(db_url, "UPDATE scores SET session_id = 999 WHERE session_id = 2",
            "UPDATE scores SET reviewer_id = reviewer_id + 700 WHERE session_id = 3 AND position = 0",
            "UPDATE sessions SET import_id = 99 WHERE id = 1")
    status, found = checked(cli)
    assert status == 1
    rows = {row["table"]: row for row in json.loads(cli("db", "check", "--format", "json").stdout)}
    assert rows["scores.session_id"]["extra"] == 16 and "session_id=999" in rows["scores.session_id"]["examples"]
    assert rows["scores.reviewer_id"]["extra"] == sum(1 for line in session("c") if line["position"] == 0)
    assert rows["sessions.import_id"]["extra"] == 1
    assert all(row["extra"] == 0 for name, row in rows.items()
               if name not in ("scores.session_id", "scores.reviewer_id", "sessions.import_id", "session_stats"))

    assert checked(cli, "--repair")[0] == 0
    assert set(all_orphans(db).values()) == {0}
    assert checked(cli)[0] == 0
    assert counts(db, 1) == (16, 1) and counts(db, 2) == (0, 0)
    with db.engine.connect() as connection:  # the session whose import was gone is kept, without one
        assert connection.execute(text("SELECT import_id FROM sessions WHERE id = 1")).scalar_one() is None


def test_the_triggers_take_the_lock_that_council_db_writers_take():
    """An edit by hand must wait for a running import (migration 0008 writes the key out)."""
    assert migrate.scripts().get_revision("0008").module.WRITE_LOCK_KEY == WRITE_LOCK_KEY
