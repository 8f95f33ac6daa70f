"""Each session's usable records packed (revision 0020): the anomaly pass over every session
reads about one row a session instead of one a record (store/packed_records.py), on a store
that chose to keep them (``store_options``, store/packing.py)."""

from __future__ import annotations

from sqlalchemy import Integer, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from council_db.store.model_base import Base, sqlite_only


class PackedRecords(Base):
    """One part of one session's usable records on one scale, as packed_records.LAYOUT bytes."""

    __tablename__ = "packed_records"
    session_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    scale_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    part: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)  # 0, 1, ...: one per write
    data: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)

    __table_args__ = (sqlite_only("session_id", "sessions.id", ondelete="CASCADE"),
                      sqlite_only("scale_id", "scales.id"), {"sqlite_with_rowid": False})


class StoreOption(Base):
    """A choice made for this store (revision 0020): ``packed_records`` -> "packing" or "on"
    while `council-db db pack` keeps that copy (store/packing.py); no row: the default."""

    __tablename__ = "store_options"
    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    value: Mapped[str] = mapped_column(String(32))
