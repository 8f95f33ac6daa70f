"""Whether this store keeps ``packed_records`` (store/packed_records.py): `council-db db pack`
turns the copy on, ``--off`` removes it.

The copy makes `anomalies --every-session` about four times faster at a million sessions
(docs/benchmarks.md) but costs ~455 bytes a 4x4 session, past the product's 1 KB a session
(docs/storage.md); so a store keeps it only once asked to, a row of ``store_options``.
Turning it on first marks the store "packing", from which moment the writer appends a part
per write (store/packed_writes.py), so no session written meanwhile is missed; then every
stored session is packed again a range of ids at a time, each range its own write transaction
(imports get in between; memory holds one range); then the store is marked "on", and only
then do the pass and `db check` read the copy. An interrupted `db pack` leaves "packing":
running it again packs every session again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from council_db.errors import CouncilDbError
from council_db.store.check_memory import mark_sessions
from council_db.store.packed_records import SESSIONS_AT_ONCE
from council_db.store.packed_writes import STATE_SQL, repack

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from council_db.store.database import Database

OPTION = "packed_records"  # its row in store_options
PACKING, ON = "packing", "on"


@dataclass
class Packed:
    """What `db pack` did: nothing when the store was packed already."""

    already: bool
    sessions: int = 0  # stored when it began
    records: int = 0  # usable records packed


def state(connection: Connection) -> str | None:
    """PACKING, ON, or None (the default: no copy kept)."""
    return connection.exec_driver_sql(STATE_SQL).scalar()


def is_on(db: Database) -> bool:
    """Whether the copy is whole (ON), so that what reads it may trust it."""
    with db.reading() as reader:
        return reader.scalar(STATE_SQL) == ON


def pack(db: Database, progress: Callable[[int, int], None] = lambda done, total: None) -> Packed:
    """Pack every stored session, SESSIONS_AT_ONCE ids a transaction, telling ``progress``
    the ids done of the ids to do; then the store is ON."""
    from sqlalchemy import text

    with db.writer() as connection, connection.begin():
        if state(connection) == ON:
            return Packed(already=True)
        _set(connection, PACKING)
        low, high, count = connection.execute(text("SELECT MIN(id), MAX(id), COUNT(*) FROM sessions")).one()
    done = Packed(already=False, sessions=count)
    for first in range(low, high + 1, SESSIONS_AT_ONCE) if low is not None else ():
        last = min(first + SESSIONS_AT_ONCE - 1, high)
        with db.writer() as connection, connection.begin():
            if _still_packing(connection):
                done.records += repack(connection, first, last)
                mark_sessions(connection, range(first, last + 1))  # db check verifies what it packed (check_memory)
        progress(last - low + 1, high - low + 1)
    with db.writer() as connection, connection.begin():
        if _still_packing(connection):
            _set(connection, ON)
    return done


def _still_packing(connection: Connection) -> bool:
    """Whether to go on: ``--off`` meanwhile stops this pack (CouncilDbError: the copy is
    gone, and stays so); another pack that finished meanwhile leaves nothing to do."""
    found = state(connection)
    if found is None:
        raise CouncilDbError("council-db db pack --off ran meanwhile: the store keeps no packed records "
                             "(run council-db db pack again to keep them)")
    return found == PACKING


def unpack(db: Database) -> bool:
    """Remove the copy and the choice, in one transaction; whether the store had them."""
    from sqlalchemy import text

    with db.writer() as connection, connection.begin():
        had = state(connection) is not None
        connection.execute(text("DELETE FROM packed_records"))
        connection.execute(text("DELETE FROM store_options WHERE name = :name"), {"name": OPTION})
    return had


def _set(connection: Connection, value: str) -> None:
    from sqlalchemy import text

    connection.execute(text("DELETE FROM store_options WHERE name = :name"), {"name": OPTION})
    connection.execute(text("INSERT INTO store_options (name, value) VALUES (:name, :value)"),
                       {"name": OPTION, "value": value})
