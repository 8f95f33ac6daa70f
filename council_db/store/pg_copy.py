"""PostgreSQL: many fixed-width rows in by binary COPY into a staging table, then one
``INSERT ... SELECT ... ON CONFLICT DO NOTHING`` into the real table.

COPY has no ON CONFLICT, so it cannot write ``scores`` itself without losing idempotence;
through a staging table the rows keep the natural-key rule of every other insert. The
COPY data is built by numpy as one block of bytes (PostgreSQL's binary format is a
16-bit field count, then per field a 32-bit length and the value, big-endian), so no
Python code runs per row or per value: measured, the driver's own conversion of the
column arrays was a third of the importer's time. Binary COPY needs a length of -1 for
NULL, which would make rows differ in width, so a nullable column travels as a marker it
never otherwise holds (0 for an id, NaN for a float) that the INSERT turns into NULL.

The staging table is temporary and ``ON COMMIT DROP``: made in the transaction that
uses it, so emptying it between batches is an in-place truncation, and nothing of it
outlives a commit, a rollback or a killed process. Making it needs the ``TEMPORARY``
privilege on the database, which PostgreSQL grants to every role unless a DBA revoked it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:
    from sqlalchemy import Connection

_HEADER = b"PGCOPY\n\xff\r\n\x00" + (0).to_bytes(4, "big") + (0).to_bytes(4, "big")
_TRAILER = (-1).to_bytes(2, "big", signed=True)
# A column type as SQLAlchemy compiles it for PostgreSQL -> its binary wire format in numpy
WIRE = {"SMALLINT": ">i2", "INTEGER": ">i4", "BIGINT": ">i8", "FLOAT": ">f8", "BOOLEAN": "?"}
# What a nullable column sends for NULL (PostgreSQL, unlike IEEE, finds NaN = NaN)
NULL_MARKER = {"SMALLINT": "0", "INTEGER": "0", "BIGINT": "0", "FLOAT": "'NaN'"}


@dataclass(frozen=True)
class StagedTable:
    """How one table is written: its columns with their PostgreSQL types, its natural key,
    and its nullable columns (sent as NULL_MARKER of their type)."""

    table: str
    columns: tuple[tuple[str, str], ...]  # (name, PostgreSQL type)
    conflict: str
    nullable: frozenset[str] = frozenset()

    @classmethod
    def of(cls, table: str, names: Sequence[str], conflict: str, nullable: Sequence[str] = ()) -> StagedTable:
        """The table's columns typed as the models declare them."""
        from sqlalchemy.dialects import postgresql

        from council_db.store.models import Base

        dialect, model = postgresql.dialect(), Base.metadata.tables[table]
        columns = tuple((name, model.c[name].type.compile(dialect=dialect)) for name in names)
        return cls(table, columns, conflict, frozenset(nullable))

    @property
    def stage(self) -> str:
        return f"{self.table}_stage"

    def create_sql(self) -> str:
        columns = ", ".join(f"{name} {kind}" for name, kind in self.columns)
        return f"CREATE TEMPORARY TABLE {self.stage} ({columns}) ON COMMIT DROP"

    def insert_sql(self) -> str:
        names = [name for name, _ in self.columns]
        values = [f"NULLIF({name}, {NULL_MARKER[kind]})" if name in self.nullable else name
                  for name, kind in self.columns]
        return (f"INSERT INTO {self.table} ({', '.join(names)}) SELECT {', '.join(values)} FROM {self.stage} "
                f"ON CONFLICT ({self.conflict}) DO NOTHING")


def binary_copy_data(kinds: Sequence[str], columns: Sequence[np.ndarray]) -> bytes:
    """The rows of equal-length columns (PostgreSQL types ``kinds``) in COPY's binary format."""
    wire = [np.dtype(WIRE[kind]) for kind in kinds]
    layout = [("fields", ">i2")]
    for number, dtype in enumerate(wire):
        layout += [(f"length{number}", ">i4"), (f"value{number}", dtype)]
    rows = np.empty(len(columns[0]), dtype=layout)
    rows["fields"] = len(wire)
    for number, (dtype, column) in enumerate(zip(wire, columns)):
        rows[f"length{number}"] = dtype.itemsize
        rows[f"value{number}"] = column
    return _HEADER + rows.tobytes() + _TRAILER


class StagedWriter:
    """Writes rows through each table's staging table, made once per transaction."""

    def __init__(self, connection: Connection):
        self.connection = connection
        self._made: set[str] = set()
        self._transaction: object = None

    def insert(self, target: StagedTable, columns: Sequence[np.ndarray]) -> int:
        """Insert the rows, skipping those whose key is already stored; how many were new."""
        self._stage(target)
        data = binary_copy_data([kind for _, kind in target.columns], columns)
        with self.connection.connection.driver_connection.cursor() as cursor, \
                cursor.copy(f"COPY {target.stage} FROM STDIN (FORMAT BINARY)") as copy:
            copy.write(data)
        return self.connection.exec_driver_sql(target.insert_sql()).rowcount

    def _stage(self, target: StagedTable) -> None:
        """An empty staging table: made if this transaction has none yet, else emptied."""
        if not self.connection.in_transaction():
            self.connection.begin()  # so the transaction the table lives in is known now
        transaction = self.connection.get_transaction()
        if transaction is not self._transaction:  # the last one's staging tables went with it
            self._made.clear()
            self._transaction = transaction
        if target.stage in self._made:
            self.connection.exec_driver_sql(f"TRUNCATE {target.stage}")
            return
        self.connection.exec_driver_sql(target.create_sql())
        self._made.add(target.stage)
