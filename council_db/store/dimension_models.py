"""A rubric's dimensions (revision 0017): several named scores of one answer by one reviewer,
beside the record's overall ``score_value``.

Each named score is a row keyed by its record and its dimension: apart from ``scores``, so data
without dimensions (llm-council's overall scores) costs no byte, and one row per dimension, so a
view or a window reads one dimension's scores with the key's own index. The names repeat on
every record and live once in ``dimension_names`` (a row then holds five small integers and the
score). Like answer_styles, a row goes when its record goes: SQLite by a foreign key ON DELETE
CASCADE, PostgreSQL by a statement trigger (the writer's tables have no per-row foreign keys
there, revision 0008)."""

from __future__ import annotations

from sqlalchemy import Float, ForeignKeyConstraint, Integer, Text
from sqlalchemy.orm import Mapped, mapped_column

from council_db.store.model_base import Base, sqlite_only

RECORD_KEY = ("session_id", "reviewer_id", "model_id", "position")


class DimensionName(Base):
    """A dimension's name ("accuracy", "relevance", ...), stored once."""

    __tablename__ = "dimension_names"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(Text, unique=True)


class ScoreDimension(Base):
    """One named score of a record, on the record's scale."""

    __tablename__ = "score_dimensions"
    session_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    reviewer_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    model_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    position: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    dimension_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    score: Mapped[float] = mapped_column(Float, nullable=False)

    __table_args__ = (
        ForeignKeyConstraint(list(RECORD_KEY), [f"scores.{column}" for column in RECORD_KEY], ondelete="CASCADE",
                             info={"dialects": ("sqlite",)}).ddl_if(dialect="sqlite"),
        sqlite_only("dimension_id", "dimension_names.id"),
        {"sqlite_with_rowid": False},
    )
