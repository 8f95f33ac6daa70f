"""council-db delete (a bad import, one session) and prune (a retention window), on both
backends: a dry run above one session, one transaction, derived tables still true, and what
is left is what a store that never held the deleted sessions would hold."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from tests.conftest import both_backends, run_module, same_numbers, simulated


def write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def report(cli) -> dict:
    result = cli("bias-report", "--format", "json", "--as-of", "2030-01-01")
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    body.pop("generated_at")
    return body


def exported(cli) -> list[str]:
    result = cli("export")
    assert result.exit_code == 0, result.output
    return sorted(result.stdout.splitlines())


@pytest.fixture
def two_imports(tmp_path):
    """A good file of 30 sessions and a bad one of 10 others."""
    good, _ = simulated(sessions=30, seed=1)
    bad, _ = simulated(sessions=10, seed=2)
    return write(tmp_path / "good.jsonl", good), write(tmp_path / "bad.jsonl", bad), good, bad


@both_backends
def test_deleting_a_bad_import_leaves_what_the_good_import_alone_gives(cli, two_imports, tmp_path, db_url):
    good_file, bad_file, good, bad = two_imports
    assert cli("import", str(good_file)).exit_code == 0
    before = report(cli)
    assert cli("import", str(bad_file)).exit_code == 0

    dry = cli("delete", "--import", "2")
    assert dry.exit_code == 0 and f"would delete import 2 ({bad_file}): 10 sessions (160 records" in dry.stderr
    assert len(exported(cli)) == len(good) + len(bad)  # a dry run deletes nothing

    done = cli("delete", "--import", "2", "--yes")
    assert done.exit_code == 0 and f"deleted import 2 ({bad_file}): 10 sessions (160 records" in done.stderr
    assert len(exported(cli)) == len(good)
    assert same_numbers(report(cli), before)
    assert cli("db", "check").exit_code == 0  # session_stats holds no row of a deleted session

    again = cli("import", "--format", "json", str(bad_file))  # the import is forgotten: its file is read again
    assert json.loads(again.stdout)["inserted"] == len(bad)


@both_backends
def test_one_session_is_deleted_at_once_with_its_records(cli, two_imports):
    good_file, _, good, _ = two_imports
    cli("import", str(good_file))
    key = good[0]["session_id"]

    done = cli("delete", "--session", key[:10])  # a prefix no other id has, as the tables show

    assert done.exit_code == 0 and "deleted 1 session (16 records" in done.stderr
    assert not any(f'"{key}"' in line for line in exported(cli))
    assert len(exported(cli)) == len(good) - 16
    assert cli("db", "check").exit_code == 0


def test_an_unknown_session_is_one_line_and_exit_1(cli, two_imports, db_path):
    cli("import", str(two_imports[0]))

    result = run_module("--db", str(db_path), "delete", "--session", "no-such-session")

    assert result.returncode == 1
    assert result.stderr.decode().startswith("error: unknown session 'no-such-session': see council-db sessions")
    assert len(exported(cli)) == len(two_imports[2])


@both_backends
def test_prune_deletes_exactly_the_sessions_dated_before_the_time(cli, tmp_path):
    records, _ = simulated(sessions=40, seed=3, days=60)
    undated = [dict(r, session_id="undated-session", timestamp="") for r in records[:16]]
    cli("import", str(write(tmp_path / "all.jsonl", records + undated)))
    times = sorted({datetime.fromisoformat(r["timestamp"]) for r in records})
    cut = times[len(times) // 2]
    old = {r["session_id"] for r in records if datetime.fromisoformat(r["timestamp"]) < cut}

    dry = cli("prune", "--before", cut.isoformat())
    assert dry.exit_code == 0 and f"would delete {len(old)} sessions ({16 * len(old)} records" in dry.stderr

    done = cli("prune", "--before", cut.isoformat(), "--yes")
    assert done.exit_code == 0
    kept = {json.loads(line)["session_id"] for line in exported(cli)}
    assert kept == {r["session_id"] for r in records} - old | {"undated-session"}
    assert cli("db", "check").exit_code == 0


def test_prune_refuses_a_time_it_cannot_read(cli):
    result = cli("prune", "--before", "last tuesday")

    assert result.exit_code == 2 and "ISO-8601" in result.output


def test_delete_needs_exactly_one_selection(cli):
    assert cli("delete").exit_code == 2
    assert cli("delete", "--import", "1", "--session", "x").exit_code == 2


def test_deleting_from_a_database_that_does_not_exist_creates_none(tmp_path):
    missing = tmp_path / "typo.db"

    result = run_module("--db", str(missing), "prune", "--before", "2026-01-01", "--yes")

    assert result.returncode == 1 and "does not exist" in result.stderr.decode()
    assert not missing.exists()
