"""The writer's ``models`` rows: each name's id and stored reviewer kind, for one transaction,
inserting the names not stored yet (store/writer.py)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from council_db.store.insert_statements import inserted_returning

ROWS_PER_STATEMENT = 500


class ModelRows:
    """``ids`` and ``kinds`` by name (cleared by the writer at a new transaction)."""

    def __init__(self, connection: Any, insert: Callable[[str, tuple, str, list], int],
                 select_ids: Callable[..., list[tuple]]):
        self.connection, self.insert, self.select_ids = connection, insert, select_ids
        self.ids: dict[str, int] = {}
        self.kinds: dict[str, str] = {}

    def add(self, columns: tuple[str, ...], rows: list[tuple]) -> None:
        """Insert the rows (``columns``, the name first) whose name is not stored, and cache
        every one's id and kind. SQLite (3.35 on) returns the inserted rows' ids from the INSERT
        itself, so only names stored before are read back: a judge log that names its
        candidates per question (JudgeBench's pairs) adds a model every few records."""
        inserted = None
        if self.connection.dialect.name == "sqlite":
            inserted = inserted_returning(self.connection, "models", columns, "name", rows, "name, id, reviewer_kind",
                                          ROWS_PER_STATEMENT)
        if inserted is None:
            self.insert("models", columns, "name", rows)
        for name, model_id, kind in inserted or ():
            self.ids[name], self.kinds[name] = model_id, kind
        self.cache([row[0] for row in rows if row[0] not in self.ids])

    def cache(self, names: Sequence[str]) -> None:
        """The stored names' ids and kinds."""
        if names:
            for name, model_id, kind in self.select_ids("models", "name", names, ", reviewer_kind"):
                self.ids[name], self.kinds[name] = model_id, kind
