"""Each session's usable records packed (revision 0020): the anomaly pass over every session
reads about one row a session instead of one a record (store/packed_records.py)."""

from __future__ import annotations

from sqlalchemy import Integer, LargeBinary
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
