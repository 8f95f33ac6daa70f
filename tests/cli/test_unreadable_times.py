"""A stored time that cannot be read never breaks a command.

The import refuses times outside years 0001-9999 (tests/ingest/test_time_range.py), but a
database may already hold one: written by an older version, or by hand with sqlite3,
Datasette or psql. Every command that reads stored times still runs on the rest of the
data; window reports leave those sessions out and say how many records that was.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.conftest import Cli, both_backends, simulated, write_jsonl

FAR_FUTURE_US = 253_402_350_399_000_000  # 9999-12-31T23:59:59-14:00: year 10000 in UTC
YEAR_ZERO_US = -62_135_647_200_000_000  # 0001-01-01T00:00:00+14:00: year 0 in UTC
PLANTED = {"far-future": (FAR_FUTURE_US, "9999-12-31T23:59:59-14:00"),
           "year-zero": (YEAR_ZERO_US, "0001-01-01T00:00:00+14:00"),
           "garbage": ("not a time", "not a time")}  # SQLite keeps text in an integer column


def _plant(cli: Cli, backend: str, planted: dict) -> None:
    from sqlalchemy import create_engine, text

    url = cli.db if "://" in cli.db else f"sqlite:///{cli.db}"
    if backend == "sqlite":  # as a user would, with the sqlite3 module
        with sqlite3.connect(url.removeprefix("sqlite:///")) as connection:
            for key, (ts_us, written) in planted.items():
                connection.execute("UPDATE sessions SET ts_us = ?, timestamp = ? WHERE session_key = ?",
                                   (ts_us, written, key))
            connection.execute("UPDATE imports SET started_at = 'not a time', finished_at = '10000-01-01'")
        return
    engine = create_engine(url)
    with engine.begin() as connection:
        for key, (ts_us, written) in planted.items():
            connection.execute(text("UPDATE sessions SET ts_us = :ts, timestamp = :written WHERE session_key = :key"),
                               {"ts": ts_us, "written": written, "key": key})
        connection.execute(text("UPDATE imports SET started_at = '10000-01-01', finished_at = '10000-01-01'"))
    engine.dispose()


@pytest.fixture
def damaged(cli, backend, tmp_path):
    """30 simulated sessions, three of whose stored times cannot be read (two on PostgreSQL,
    whose bigint column cannot hold text), and import times that cannot be read either."""
    records, _ = simulated(sessions=30, seed=11, consent_level=2)
    keys = sorted({r["session_id"] for r in records})
    planted = {key: value for key, value in zip(keys, PLANTED.values())}
    if backend == "postgresql":
        planted = dict(list(planted.items())[:2])
    assert cli("import", "-q", str(write_jsonl(tmp_path / "in.jsonl", records))).exit_code == 0
    _plant(cli, backend, planted)
    per_session = len(records) // len(keys)
    return cli, keys, planted, per_session * len(planted)


def _runs(cli: Cli, *args: str):
    done = cli(*args)
    assert done.exit_code == 0, (args, done.output, done.exception)
    assert done.exception is None or isinstance(done.exception, SystemExit), (args, repr(done.exception))
    return done


@both_backends
def test_every_command_runs_on_a_database_holding_unreadable_times(damaged):
    cli, keys, planted, left_out = damaged
    bad, good = next(iter(planted)), keys[-1]
    note = f"{left_out} records have a stored time that cannot be read"
    report = json.loads(_runs(cli, "bias-report", "--format", "json").stdout)
    assert report["window"]["sessions"] == 30 - len(planted)
    assert report["excluded"]["unreadable_timestamp"] == left_out
    assert any(note in warning for warning in report["warnings"])
    assert note in _runs(cli, "bias-report").stdout
    assert _runs(cli, "bias-report", "--since", "2000-01-01", "--as-of", "2100-01-01", "--format", "json")
    stats = json.loads(_runs(cli, "stats", "--format", "json").stdout)
    assert stats["sessions_with_unreadable_timestamp"] == len(planted)
    assert stats["window"]["end"] < "9999" and stats["window"]["start"] > "0001"
    board = json.loads(_runs(cli, "leaderboard", "--format", "json").stdout)
    assert board["excluded"]["unreadable_timestamp"] == left_out and board["window"]["sessions"] == 30 - len(planted)
    assert note in _runs(cli, "trends").stderr
    assert note in _runs(cli, "anomalies").stderr
    for session in (good, bad):
        _runs(cli, "audit", session)
        audited = json.loads(_runs(cli, "audit", session, "--format", "json").stdout)
        assert (audited["timestamp"] is None) == (session == bad)
        assert json.loads(_runs(cli, "scores", "--session", session, "--format", "json").stdout)["candidates"]
    listed = json.loads(_runs(cli, "sessions", "-n", "100", "--format", "json").stdout)
    assert {row["session_id"] for row in listed} == set(keys)
    exported = _runs(cli, "export").stdout.splitlines()
    assert len(exported) == 30 * left_out // len(planted)  # every record, with its time as written
    assert _runs(cli, "export", "--since", "2000-01-01").stdout.count(bad) == 0
    events = _runs(cli, "push", "--endpoint", "http://127.0.0.1:9/", "--dry-run").stdout.splitlines()
    assert sorted(json.loads(event)["session_id"] for event in events) == sorted(set(keys) - set(planted))
