"""What the day totals need to know of the rows stored before a batch, for the sessions an
import adds to batch after batch, kept in memory for the import's life.

A batch that adds to a session stored before it must know which of its record keys are
stored already, and under which keys of the day totals the session is counted already
(store/day_totals.py). Reading that back from the session's stored rows for every batch
cost what the session held: a judge log whose sessions gain records all through the file
(fastchat-single: a question's turn, model after model) read its whole import again every
batch. Here a session's stored rows are read once, the first time a batch adds to it, and
each batch's new rows are added after it: the cost of a batch is its own rows.

Held per session: every record key (session, reviewer, model, position), as a hash whose
match the database confirms (a record stored twice is rare); and exactly, of its usable
rows, the keys that count it in a table: (session, reviewer, scale), (session, model,
scale), (session, scale) and, of display slots, (session, scale, slot). The memory is
bounded by MAX_KEYS; past it, it is forgotten and sessions are read again as they come.
It holds while no other connection writes: the write lock keeps others out within a
transaction, and between two of the import's, SQLite's ``data_version`` says whether
another connection committed (PostgreSQL has no such mark: its memory lasts a transaction);
a transaction rolled back takes what it added, so the memory goes with it.
"""

from __future__ import annotations

from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from council_db.store.id_runs import id_runs
from council_db.store.key_sets import KeySet

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from council_db.contract.score_batch import ScoreColumns

MAX_KEYS = 4_000_000  # 8-32 bytes a key: a fastchat-single import of 1M records holds 2M keys, ~40 MB
READ_ROWS = 100_000  # stored rows read into numpy at a time
# The counting keys: their columns, of the rows in store order (session, reviewer, model, position, scale)
COUNTED = {"reviewer": (0, 1, 4), "model": (0, 2, 4), "scale": (0, 4), "slot": (0, 4, 3)}


class StoredKeys:
    """The stored keys of the sessions it holds (``sessions``), on one connection."""

    def __init__(self, connection: Connection):
        from council_db.store.plain_sqlite import on_commit

        self.connection = connection
        self.sqlite = connection.dialect.name == "sqlite"
        self._committed: object = None  # the last transaction committed (one rolled back leaves what it added)
        on_commit(connection, self._on_commit)
        self.forget()

    def forget(self) -> None:
        self.sessions: set[int] = set()
        self.records = KeySet(4, exact=False)
        self.counted = {name: KeySet(len(columns)) for name, columns in COUNTED.items()}
        self._transaction: object = None  # the one it last held sessions in
        self._version: int | None = None

    def hold(self, sessions: set[int]) -> None:
        """Hold these sessions, reading those not held from the database; forgetting
        everything first where another connection may have written since."""
        self._still_true()
        missing = sessions - self.sessions
        mark = "%s" if self.connection.dialect.name == "postgresql" else "?"
        for first, last in id_runs(missing):
            result = self.connection.exec_driver_sql(
                "SELECT session_id, reviewer_id, model_id, position, scale_id, CASE WHEN display_order THEN 1 ELSE 0 "
                f"END, CASE WHEN exclusion_id IS NULL THEN 1 ELSE 0 END FROM scores WHERE session_id BETWEEN {mark} "
                f"AND {mark}", (first, last))
            for part in result.partitions(READ_ROWS):  # rows flattened: numpy would look each up as an object
                rows = np.fromiter(chain.from_iterable(part), dtype=np.int64, count=7 * len(part)).reshape(-1, 7).T
                self._add(list(rows[:5]), rows[5].astype(bool), rows[6].astype(bool))
        self.sessions |= missing

    def add(self, columns: ScoreColumns, rows: np.ndarray) -> None:
        """Add the batch's ``rows`` just stored (a boolean mask) of the sessions held."""
        rows = rows & np.isin(columns.session_id, np.fromiter(self.sessions, dtype=np.int64, count=len(self.sessions)))
        if rows.any():
            keys = [column[rows] for column in (columns.session_id, columns.reviewer_id, columns.model_id,
                                                columns.position, columns.scale_id)]
            self._add(keys, columns.display_order[rows], columns.exclusion[rows] == 0)
        if sum(map(len, (self.records, *self.counted.values()))) > MAX_KEYS:
            self.forget()

    def _add(self, keys: list[np.ndarray], shown: np.ndarray, usable: np.ndarray) -> None:
        """Add rows given as their (session, reviewer, model, position, scale) columns."""
        self.records.add(keys[:4])
        for name, columns in COUNTED.items():
            kept = usable & shown if name == "slot" else usable
            self.counted[name].add([keys[column][kept] for column in columns])

    def _still_true(self) -> None:
        """Forget at a new transaction unless the last one it held sessions in was committed
        and SQLite says no other connection committed since."""
        if not self.connection.in_transaction():
            self.connection.begin()  # as its next statement would: the transaction it holds sessions in
        transaction = self.connection.get_transaction()
        if transaction is self._transaction:
            return
        committed = self._transaction is self._committed
        version = self.connection.exec_driver_sql("PRAGMA data_version").scalar_one() if self.sqlite else None
        if version is None or version != self._version or not committed:
            self.forget()
        self._transaction, self._version = transaction, version

    def _on_commit(self, connection: Connection) -> None:
        self._committed = connection.get_transaction()
