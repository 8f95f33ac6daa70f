"""The lock files beside an SQLite database that running imports hold (store/import_locks.py
says why): ``.NAME.import-ID.lock``, flock'd by the import's process until it ends. Here are
their names, holding one, and which are held by another process now. Nothing here needs an
open database, so a writer waiting for the write lock (store/database.py) can ask too.
"""

from __future__ import annotations

import fcntl
import glob
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

_OURS: set[Path] = set()  # the lock files this process holds


def lock_file(db_file: Path, import_id: int) -> Path:
    return db_file.with_name(f".{db_file.name}.import-{import_id}.lock")


def lock_file_ids(db_file: Path) -> list[int]:
    """The import ids whose lock file is there, held or not."""
    prefix = f".{db_file.name}.import-"
    ids = [path.name[len(prefix):-len(".lock")] for path in db_file.parent.glob(f"{glob.escape(prefix)}*.lock")]
    return sorted(int(number) for number in ids if number.isdigit())


@contextmanager
def holding(path: Path) -> Iterator[None]:
    """Hold the lock file while the block runs; removed at the end, while still held, so no
    checker can take it first."""
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        _OURS.add(path)
        yield
    finally:
        _OURS.discard(path)
        path.unlink(missing_ok=True)
        os.close(descriptor)


def live_imports(db_file: Path) -> list[int]:
    """The imports of another process that hold their lock on this database now. Only a look:
    it removes no file (import_locks.abandoned does, under the write lock), so it may run
    outside the write lock."""
    return [number for number in lock_file_ids(db_file)
            if (path := lock_file(db_file, number)) not in _OURS and _held(path)]


def _held(path: Path) -> bool:
    """True when a process holds the lock (a shared try, released at once, tells)."""
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:  # gone: its import has ended
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(descriptor)
    return False
