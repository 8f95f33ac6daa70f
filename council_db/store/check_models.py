"""``db check``'s memory (revision 0021): the ranges changed since the last check that found the
store clean, each range's rows then, and that check (store/check_memory.py)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from council_db.store.model_base import Base


class CheckMark(Base):
    """A range changed since the last clean check: ``sessions`` or ``days`` ``number``, or ``refs``
    (a referred row went) or ``all``; ``changes`` grows with every mark."""

    __tablename__ = "check_marks"
    unit: Mapped[str] = mapped_column(String(8), primary_key=True)
    number: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    changes: Mapped[int] = mapped_column(BigInteger, server_default="1")


class CheckCount(Base):
    """A table's rows in one range when the last clean check counted them."""

    __tablename__ = "check_counts"
    table_name: Mapped[str] = mapped_column(String(32), primary_key=True)
    number: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    row_count: Mapped[int] = mapped_column(BigInteger)


class CleanCheck(Base):
    """The last check that found the store clean (one row, id 1)."""

    __tablename__ = "clean_checks"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    checked_at: Mapped[datetime] = mapped_column()  # UTC
    every_range: Mapped[bool] = mapped_column()  # it checked every range
    ranges: Mapped[int] = mapped_column(Integer)  # the ranges the store held
    checked: Mapped[int] = mapped_column(Integer)  # the ranges it checked
