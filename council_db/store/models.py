"""SQLAlchemy models: the shape of the database, as Alembic migrations build it.

Design choices that matter for size and speed (<= 1 KB per 4x4 session):
- ``scores`` is a WITHOUT ROWID table keyed by the natural key, so the key index
  *is* the table and re-importing a line is a no-op ``ON CONFLICT DO NOTHING``.
- Strings that repeat (model names, scales) live once in lookup tables.
- The per-session "envelope" of a record (timestamp, consent, schema version,
  config version, query hash, query metadata) is stored once on ``sessions``;
  the rare record whose envelope differs from its session's points at a row
  of ``record_envelopes`` so that export gives back exactly what was imported; one
  that differs only in its time keeps that time in ``scores.ts_us`` (revision 0018).
- The foreign keys of the rows an import writes (``scores``, ``session_stats``,
  ``sessions.import_id``) are SQLite's only: PostgreSQL checked them row by row, most of an
  import's time there, and keeps what they did with statement-level triggers instead
  (migration 0008).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

# The base lives apart so that models of one feature can have their own module (dimension_models);
# importing this module declares every table.
from council_db.store.check_models import CheckCount, CheckMark, CleanCheck  # noqa: F401 (re-exported)
from council_db.store.dimension_models import DimensionName, ScoreDimension  # noqa: F401 (re-exported)
from council_db.store.model_base import NAMING_CONVENTION, Base, schema_filter, sqlite_only  # noqa: F401 (re-exported)
from council_db.store.packed_models import PackedRecords, StoreOption  # noqa: F401 (re-exported)
from council_db.store.watch_models import WatchState  # noqa: F401 (re-exported)


class Model(Base):
    """An LLM, in either role: candidate (``model_id``) or reviewer (``reviewer_id``).
    ``reviewer_kind`` is the name's kind as a reviewer (revision 0012): an LLM ``judge`` by
    default, a ``human`` rater, or ``gold``. A reviewer with provenance (revision 0016) is named by
    its identity's label, ``model_of`` its model's row (contract/reviewer_identity): none per record."""

    __tablename__ = "models"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(Text, unique=True)
    reviewer_kind: Mapped[str] = mapped_column(Text, server_default="judge")
    model_of: Mapped[int | None] = mapped_column(Integer)
    prompt: Mapped[str | None] = mapped_column(Text)
    temperature: Mapped[float | None] = mapped_column(Float)
    seed: Mapped[int | None] = mapped_column(BigInteger)

    __table_args__ = (CheckConstraint("reviewer_kind IN ('judge', 'human', 'gold')", name="reviewer_kind"),)


class Scale(Base):
    """A score scale such as "1-10"; low/high let analyses normalise and spot out-of-scale values."""

    __tablename__ = "scales"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(Text, unique=True)
    low: Mapped[float] = mapped_column(Float)
    high: Mapped[float] = mapped_column(Float)


class ExclusionReason(Base):
    """Why a stored score is kept but left out of analyses."""

    __tablename__ = "exclusion_reasons"
    id: Mapped[int] = mapped_column(SmallInteger, primary_key=True, autoincrement=False)
    code: Mapped[str] = mapped_column(String(32), unique=True)
    description: Mapped[str] = mapped_column(Text)


class Import(Base):
    """Provenance of one file read: where from, which bytes, what happened to its lines."""

    __tablename__ = "imports"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    source: Mapped[str] = mapped_column(Text)
    source_kind: Mapped[str] = mapped_column(String(8))  # file | gzip | stdin
    file_identity: Mapped[str | None] = mapped_column(Text)  # device:inode
    file_size: Mapped[int | None] = mapped_column(BigInteger)
    head_sha256: Mapped[str | None] = mapped_column(String(64))
    tail_sha256: Mapped[str | None] = mapped_column(String(64))
    mode: Mapped[str] = mapped_column(String(12))  # full | incremental
    start_offset: Mapped[int] = mapped_column(BigInteger, default=0)
    end_offset: Mapped[int] = mapped_column(BigInteger, default=0)
    start_line: Mapped[int] = mapped_column(BigInteger, default=0)
    end_line: Mapped[int] = mapped_column(BigInteger, default=0)
    inserted: Mapped[int] = mapped_column(BigInteger, default=0)
    duplicates: Mapped[int] = mapped_column(BigInteger, default=0)
    rejected: Mapped[int] = mapped_column(BigInteger, default=0)
    skipped: Mapped[int] = mapped_column(BigInteger, default=0)
    status: Mapped[str] = mapped_column(String(16))  # running | complete | strict-failed | interrupted
    started_at: Mapped[datetime] = mapped_column()
    finished_at: Mapped[datetime | None] = mapped_column()
    council_db_version: Mapped[str] = mapped_column(String(32))
    format: Mapped[str] = mapped_column(String(32), server_default="llm-council")  # import --from
    options: Mapped[str | None] = mapped_column(Text)  # --answers, --bench, --judge as JSON; NULL: none
    # records it read went with a deleted import that had stored them first (see ImportOverlap):
    # its file is read again by the next import of it
    records_lost: Mapped[bool] = mapped_column(Boolean, server_default=false())


class ImportOverlap(Base):
    """Import ``import_id`` read records (or bad lines) that an import with an id in
    ``first_id``..``last_id`` had stored first (revision 0013): deleting that import takes
    them, so this one is marked ``records_lost``."""

    __tablename__ = "import_overlaps"
    import_id: Mapped[int] = mapped_column(ForeignKey("imports.id", ondelete="CASCADE"), primary_key=True)
    first_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    last_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)


class RejectedLine(Base):
    """A line that failed validation: what finds it in its file and why, never its text
    (ingest/rejected.py). Lines rejected before revision 0007 keep only their reason."""

    __tablename__ = "rejected_lines"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    import_id: Mapped[int] = mapped_column(ForeignKey("imports.id", ondelete="CASCADE"), index=True)
    line_number: Mapped[int] = mapped_column(BigInteger)
    field: Mapped[str | None] = mapped_column(Text)
    reason: Mapped[str] = mapped_column(Text)
    byte_length: Mapped[int | None] = mapped_column(BigInteger)
    error_column: Mapped[int | None] = mapped_column(BigInteger)  # the byte where JSON parsing stopped
    line_hash: Mapped[str | None] = mapped_column(String(16))  # HMAC-SHA256 keyed by local_keys
    unknown_keys: Mapped[int | None] = mapped_column(Integer)
    known_values: Mapped[str | None] = mapped_column(Text)  # JSON: record fields that are not free text


class LocalKey(Base):
    """Random keys made for this database alone (it never leaves with an export or a copy)."""

    __tablename__ = "local_keys"
    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    value: Mapped[str] = mapped_column(String(64))


class Session(Base):
    """One council session, with the envelope its records share."""

    __tablename__ = "sessions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    session_key: Mapped[str] = mapped_column(Text, unique=True)
    ts_us: Mapped[int | None] = mapped_column(BigInteger, index=True)  # UTC microseconds
    timestamp: Mapped[str] = mapped_column(Text)  # as written, for export
    consent_level: Mapped[int] = mapped_column(SmallInteger)
    schema_version: Mapped[str] = mapped_column(String(16))  # normalised "1.2.0"
    schema_version_raw: Mapped[str | None] = mapped_column(Text)  # JSON literal when it differed
    council_config_version: Mapped[str | None] = mapped_column(Text)
    query_hash: Mapped[str | None] = mapped_column(String(16))
    query_metadata: Mapped[str | None] = mapped_column(Text)  # JSON, known keys only
    category: Mapped[str | None] = mapped_column(Text)
    language: Mapped[str | None] = mapped_column(Text)
    length_bucket: Mapped[str | None] = mapped_column(Text)
    import_id: Mapped[int | None] = mapped_column(Integer)
    # The key's hash (store/key_hash, revision 0014): the report's sample is chosen by it
    key_hash: Mapped[int | None] = mapped_column(BigInteger)

    __table_args__ = (CheckConstraint("consent_level BETWEEN 1 AND 4", name="consent_level"),
                      sqlite_only("import_id", "imports.id", ondelete="SET NULL"))


class RecordEnvelope(Base):
    """An envelope that differs from its session's, for the records that carry it."""

    __tablename__ = "record_envelopes"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    digest: Mapped[str] = mapped_column(String(40), unique=True)
    ts_us: Mapped[int | None] = mapped_column(BigInteger)
    timestamp: Mapped[str] = mapped_column(Text)
    consent_level: Mapped[int] = mapped_column(SmallInteger)
    schema_version: Mapped[str] = mapped_column(String(16))
    schema_version_raw: Mapped[str | None] = mapped_column(Text)
    council_config_version: Mapped[str | None] = mapped_column(Text)
    query_hash: Mapped[str | None] = mapped_column(String(16))
    query_metadata: Mapped[str | None] = mapped_column(Text)


class Score(Base):
    """One bias record: the score one reviewer gave one candidate answer in one session."""

    __tablename__ = "scores"
    session_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    reviewer_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    model_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    position: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    response_length_chars: Mapped[int] = mapped_column(Integer)
    score_value: Mapped[float] = mapped_column(Float)
    scale_id: Mapped[int] = mapped_column(Integer)
    display_order: Mapped[bool] = mapped_column(Boolean)  # position is the display slot (schema >= 1.2.0)
    self_review: Mapped[bool] = mapped_column(Boolean)
    exclusion_id: Mapped[int | None] = mapped_column(SmallInteger)
    envelope_id: Mapped[int | None] = mapped_column(Integer)
    # The import that stored it (revision 0013); NULL for a record stored before, which belongs
    # to its session's import. No index or foreign key: a few bytes a record, not a dozen.
    import_id: Mapped[int | None] = mapped_column(Integer)
    # The record's own time (revision 0018) where it is all that sets its envelope apart from
    # its session's; NULL: the session's. Its text is the session's form of it (timestamps.time_text).
    ts_us: Mapped[int | None] = mapped_column(BigInteger)

    __table_args__ = (
        sqlite_only("session_id", "sessions.id", ondelete="CASCADE"), sqlite_only("reviewer_id", "models.id"),
        sqlite_only("model_id", "models.id"), sqlite_only("scale_id", "scales.id"),
        sqlite_only("exclusion_id", "exclusion_reasons.id"), sqlite_only("envelope_id", "record_envelopes.id"),
        # The excluded scores only (revision 0011): with the day totals, which count the usable
        # ones, every record counted per reviewer, model and scale without reading the records.
        Index("ix_scores_excluded", "reviewer_id", "model_id", "scale_id",
              sqlite_where=text("exclusion_id IS NOT NULL"), postgresql_where=text("exclusion_id IS NOT NULL")),
        {"sqlite_with_rowid": False},
    )


class AnswerStyle(Base):
    """The style of the answer a record scored, where its line gave any (revision 0015):
    tokens and markdown counts, NULL unknown. Apart from ``scores`` and keyed by the record,
    so data without style (llm-council's) costs no byte; it goes when its record goes."""

    __tablename__ = "answer_styles"
    session_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    reviewer_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    model_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    position: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    response_tokens: Mapped[int | None] = mapped_column(Integer)
    markdown_headers: Mapped[int | None] = mapped_column(Integer)
    markdown_lists: Mapped[int | None] = mapped_column(Integer)
    markdown_bold: Mapped[int | None] = mapped_column(Integer)

    __table_args__ = (ForeignKeyConstraint(
        ["session_id", "reviewer_id", "model_id", "position"],
        ["scores.session_id", "scores.reviewer_id", "scores.model_id", "scores.position"],
        ondelete="CASCADE", info={"dialects": ("sqlite",)}).ddl_if(dialect="sqlite"), {"sqlite_with_rowid": False})


class SessionStats(Base):
    """Per-session sufficient statistics of one session's scores on one scale, written in
    the importer's transaction (sql/session_stats.sql), so that a report over a million
    sessions sums a million short rows instead of reading sixteen million records."""

    __tablename__ = "session_stats"
    session_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    scale_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    records: Mapped[int] = mapped_column(Integer)
    usable: Mapped[int] = mapped_column(Integer)
    unscored: Mapped[int] = mapped_column(Integer)
    out_of_scale: Mapped[int] = mapped_column(Integer)
    known_lengths: Mapped[int] = mapped_column(Integer, server_default="0")  # usable, with a known answer length
    score_sum: Mapped[float] = mapped_column(Float)  # this and the length sums: over the known_lengths scores
    score_sq_sum: Mapped[float] = mapped_column(Float)
    length_sum: Mapped[float] = mapped_column(Float)
    length_sq_sum: Mapped[float] = mapped_column(Float)
    length_score_sum: Mapped[float] = mapped_column(Float)
    answers: Mapped[int] = mapped_column(Integer)
    answer_sxx: Mapped[float] = mapped_column(Float)
    answer_syy: Mapped[float] = mapped_column(Float)
    answer_sxy: Mapped[float] = mapped_column(Float)
    answer_z: Mapped[float | None] = mapped_column(Float)  # Fisher z of the answer-level r, when usable

    __table_args__ = (sqlite_only("session_id", "sessions.id", ondelete="CASCADE"),
                      sqlite_only("scale_id", "scales.id"), {"sqlite_with_rowid": False})
def _key() -> Mapped[int]:
    return mapped_column(Integer, primary_key=True, autoincrement=False)


class ReviewerDayTotals(Base):
    """A reviewer's usable scores on one scale on one UTC day. This and the other day totals
    below are kept by the importer in its transaction (store/day_totals.py), so that the
    views over them (reviewer_profiles, reviewer_daily, ...) sum a few thousand rows instead
    of reading every record. ``day`` is the session's UTC date as a day number (1 is
    0001-01-01, Python's ``date.toordinal()``), 0 for a session without a time; ``sessions``
    counts the sessions with at least one of the row's scores."""

    __tablename__ = "reviewer_day_totals"
    day: Mapped[int] = _key()
    reviewer_id: Mapped[int] = _key()
    scale_id: Mapped[int] = _key()
    sessions: Mapped[int] = mapped_column(Integer)
    records: Mapped[int] = mapped_column(Integer)
    self_reviews: Mapped[int] = mapped_column(Integer)
    score_sum: Mapped[float] = mapped_column(Float)
    score_sq_sum: Mapped[float] = mapped_column(Float)
    self_score_sum: Mapped[float] = mapped_column(Float)
    min_score: Mapped[float] = mapped_column(Float)
    max_score: Mapped[float] = mapped_column(Float)

    __table_args__ = {"sqlite_with_rowid": False}


class ModelDayTotals(Base):
    """A candidate model's usable scores on one scale on one UTC day (see ReviewerDayTotals)."""

    __tablename__ = "model_day_totals"
    day: Mapped[int] = _key()
    model_id: Mapped[int] = _key()
    scale_id: Mapped[int] = _key()
    sessions: Mapped[int] = mapped_column(Integer)
    records: Mapped[int] = mapped_column(Integer)
    self_reviews: Mapped[int] = mapped_column(Integer)
    known_lengths: Mapped[int] = mapped_column(Integer)  # of its records: those whose answer length is known
    score_sum: Mapped[float] = mapped_column(Float)
    score_sq_sum: Mapped[float] = mapped_column(Float)
    self_score_sum: Mapped[float] = mapped_column(Float)
    length_sum: Mapped[float] = mapped_column(Float)  # over the known_lengths records

    __table_args__ = {"sqlite_with_rowid": False}


class PairDayTotals(Base):
    """Usable scores one reviewer gave one candidate on one scale on one UTC day: which
    reviewers scored a model (see ReviewerDayTotals)."""

    __tablename__ = "pair_day_totals"
    day: Mapped[int] = _key()
    reviewer_id: Mapped[int] = _key()
    model_id: Mapped[int] = _key()
    scale_id: Mapped[int] = _key()
    records: Mapped[int] = mapped_column(Integer)

    __table_args__ = {"sqlite_with_rowid": False}


class DayTotals(Base):
    """All usable scores on one scale on one UTC day (see ReviewerDayTotals)."""

    __tablename__ = "day_totals"
    day: Mapped[int] = _key()
    scale_id: Mapped[int] = _key()
    sessions: Mapped[int] = mapped_column(Integer)
    records: Mapped[int] = mapped_column(Integer)
    known_lengths: Mapped[int] = mapped_column(Integer)  # of its records: those whose answer length is known
    score_sum: Mapped[float] = mapped_column(Float)
    length_sum: Mapped[float] = mapped_column(Float)  # over the known_lengths records

    __table_args__ = {"sqlite_with_rowid": False}


class SlotDayTotals(Base):
    """Usable scores given in one display slot (position, schema >= 1.2.0) on one scale on one
    UTC day (see ReviewerDayTotals)."""

    __tablename__ = "slot_day_totals"
    day: Mapped[int] = _key()
    scale_id: Mapped[int] = _key()
    slot: Mapped[int] = _key()
    sessions: Mapped[int] = mapped_column(Integer)
    records: Mapped[int] = mapped_column(Integer)
    score_sum: Mapped[float] = mapped_column(Float)
    score_sq_sum: Mapped[float] = mapped_column(Float)

    __table_args__ = {"sqlite_with_rowid": False}


class OutboxEvent(Base):
    """A session summary waiting for (or already given to) a telemetry endpoint. Rows are
    written before anything is sent and marked sent after the endpoint accepted them, so a
    failed or killed push resumes where it stopped; ``event_id`` is a hash of the content,
    so a resent event is recognisable to the receiver."""

    __tablename__ = "outbox_events"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    endpoint: Mapped[str] = mapped_column(Text)
    event_id: Mapped[str] = mapped_column(String(64))
    session_id: Mapped[int] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"), index=True)
    payload: Mapped[str] = mapped_column(Text)  # the event as sent, JSON
    created_at: Mapped[datetime] = mapped_column()
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    sent_at: Mapped[datetime | None] = mapped_column()

    __table_args__ = (UniqueConstraint("endpoint", "event_id"),)
