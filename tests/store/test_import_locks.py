"""A `running` import is taken for dead only once its process is gone, on both backends:
another process holds its lock (a flock'd file beside an SQLite database, an advisory lock
on PostgreSQL) until it is killed."""

from __future__ import annotations

import subprocess
import sys
import time

from sqlalchemy import insert

from council_db.ingest.importer import now_utc
from council_db.store.import_locks import abandoned
from council_db.store.models import Import
from tests.conftest import both_backends

HOLDER = (
    "import sys, time; from council_db.store.database import open_database; "
    "from council_db.store.import_locks import import_lock; "
    "db = open_database(sys.argv[1], notify=print); lock = import_lock(db, int(sys.argv[2])); lock.__enter__(); "
    "print('held', flush=True); time.sleep(300)"
)


def running_import(db) -> int:
    with db.writer() as connection:
        import_id = connection.execute(insert(Import).values(
            source="f.jsonl", source_kind="file", mode="full", status="running", started_at=now_utc(),
            council_db_version="test")).inserted_primary_key[0]
        connection.commit()
    return import_id


def dead(db, ids: list[int]) -> list[int]:
    with db.writer() as connection:
        found = abandoned(db, connection, ids)
        connection.rollback()
    return found


@both_backends
def test_a_running_import_is_abandoned_only_once_its_process_is_killed(db, db_url):
    import_id = running_import(db)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, db_url, str(import_id)], stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"held"
        assert dead(db, [import_id]) == [], "its process is alive"
    finally:
        holder.kill()
        holder.wait()
    assert dead_soon(db, import_id) == [import_id]


def dead_soon(db, import_id: int, seconds: float = 10.0) -> list[int]:
    """``dead`` once the server has noticed the killed process: PostgreSQL ends a session,
    and drops its advisory lock, only when it sees the closed connection, a moment after the
    process is gone (a race the full suite lost once this session)."""
    deadline = time.monotonic() + seconds
    while (found := dead(db, [import_id])) == [] and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def test_lock_files_left_by_imports_killed_before_their_first_commit_are_removed(db, db_path):
    left = db_path.with_name(f".{db_path.name}.import-7.lock")
    left.touch()
    assert dead(db, []) == []
    assert not left.exists()
