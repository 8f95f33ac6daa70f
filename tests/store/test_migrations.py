"""The schema is owned by Alembic: migrations build it, match the models, and go down and up
again with the data intact. Every test works on real SQLite files under tmp_path."""

from __future__ import annotations

import sqlite3

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Column, Float, MetaData, text

from council_db.contract.fields import EXCLUSION_REASONS
from council_db.store import migrate
from council_db.store.models import NAMING_CONVENTION, Base
from tests.store.sqlite_files import (
    EXPECTED_TABLES,
    EXPECTED_VIEWS,
    make_council_db_at,
    revisions_oldest_first,
    schema_sql,
    sqlite_objects,
)

# ----------------------------------------------------------------- building the schema


def test_upgrade_from_empty_database_reaches_head_with_all_tables_the_view_and_seeded_reasons(
    tmp_path, engines
):
    path = tmp_path / "council.db"
    engine = engines(path)
    assert migrate.current_revision(engine) is None

    migrate.upgrade(engine, "head")

    assert migrate.current_revision(engine) == migrate.HEAD
    objects = sqlite_objects(path)
    assert objects["table"] == EXPECTED_TABLES | {"alembic_version"}
    assert objects["view"] == EXPECTED_VIEWS
    with engine.connect() as connection:
        reasons = {
            code: (id_, description)
            for id_, code, description in connection.execute(
                text("SELECT id, code, description FROM exclusion_reasons")
            )
        }
        # The views are usable, not just present.
        for view in EXPECTED_VIEWS:
            assert connection.execute(text(f"SELECT count(*) FROM {view}")).scalar() == 0
    assert reasons == EXCLUSION_REASONS


def test_head_constant_equals_the_single_alembic_head():
    scripts = migrate.scripts()
    assert scripts.get_heads() == [migrate.HEAD], "one linear history, whose head is migrate.HEAD"
    assert scripts.get_current_head() == migrate.HEAD


def test_models_and_migrations_do_not_drift(tmp_path, engines):
    engine = engines(tmp_path / "council.db")
    migrate.upgrade(engine, "head")

    with engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)

    assert differences == []


def test_drift_check_reports_a_model_column_that_no_migration_adds(tmp_path, engines):
    """Proves the no-drift test above can fail: a column only in the models is reported."""
    engine = engines(tmp_path / "council.db")
    migrate.upgrade(engine, "head")
    copy = MetaData(naming_convention=NAMING_CONVENTION)
    for table in Base.metadata.sorted_tables:
        table.to_metadata(copy)

    with engine.connect() as connection:
        context = MigrationContext.configure(connection)
        assert compare_metadata(context, copy) == [], "an unchanged copy of the models matches"
        copy.tables["scores"].append_column(Column("confidence", Float, nullable=True))
        differences = compare_metadata(context, copy)

    assert len(differences) == 1
    kind, schema, table, column = differences[0]
    assert (kind, schema, table, column.name) == ("add_column", None, "scores", "confidence")


# ------------------------------------------------------------------ up and down again


def test_downgrade_to_each_earlier_revision_and_base_then_upgrade_to_head_again(tmp_path, engines):
    revisions = revisions_oldest_first()
    assert revisions[-1] == migrate.HEAD
    # What each revision looks like when built straight from empty.
    fresh = {}
    for revision in revisions:
        reference = tmp_path / f"fresh-{revision}.db"
        make_council_db_at(reference, revision)
        fresh[revision] = schema_sql(reference)

    path = tmp_path / "council.db"
    engine = engines(path)
    migrate.upgrade(engine, "head")
    for revision in reversed(revisions[:-1]):
        migrate.downgrade(engine, revision)
        assert migrate.current_revision(engine) == revision
        assert schema_sql(path) == fresh[revision], f"downgrading to {revision} gives its schema"
    assert sqlite_objects(path)["view"] == set(), "the first revision has no view"

    migrate.downgrade(engine, "base")
    assert migrate.current_revision(engine) is None
    objects = sqlite_objects(path)
    assert objects["table"] == {"alembic_version"}, "only Alembic's bookkeeping table is left"
    assert objects["view"] == set()
    assert objects["index"] == set()

    migrate.upgrade(engine, "head")
    assert migrate.current_revision(engine) == migrate.HEAD
    assert schema_sql(path) == fresh[migrate.HEAD]
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM exclusion_reasons")).scalar() == len(
            EXCLUSION_REASONS
        )


def test_data_written_at_revision_0001_survives_upgrade_and_reads_through_score_records(
    tmp_path, opened
):
    path = tmp_path / "council.db"
    make_council_db_at(path, "0001")
    connection = sqlite3.connect(path)
    try:
        connection.executescript(
            """
            INSERT INTO models (id, name) VALUES (1, 'judge-a'), (2, 'candidate-b');
            INSERT INTO scales (id, name, low, high) VALUES (1, '1-10', 1, 10);
            INSERT INTO sessions (id, session_key, ts_us, timestamp, consent_level, schema_version,
                                  category, language)
                VALUES (1, 'session-1', 1700000000000000, '2023-11-14T22:13:20Z', 2, '1.2.0',
                        'coding', 'en');
            INSERT INTO scores (session_id, reviewer_id, model_id, position, response_length_chars,
                                score_value, scale_id, display_order, self_review, exclusion_id)
                VALUES (1, 1, 2, 0, 1234, 7.5, 1, 1, 0, NULL),
                       (1, 1, 2, 1, 99, 0, 1, 1, 0, 1);
            """
        )
        connection.commit()
    finally:
        connection.close()

    messages: list[str] = []
    database = opened(path, messages)

    assert migrate.current_revision(database.engine) == migrate.HEAD
    assert len(messages) == 1 and "upgraded" in messages[0]
    with database.engine.connect() as db:
        rows = [
            dict(row._mapping)
            for row in db.execute(text("SELECT * FROM score_records ORDER BY position"))
        ]
    assert len(rows) == 2
    first, second = rows
    assert first["session_id"] == "session-1"
    assert first["timestamp"] == "2023-11-14T22:13:20Z"
    assert first["ts_us"] == 1700000000000000
    assert (first["reviewer"], first["model"]) == ("judge-a", "candidate-b")
    assert first["score_value"] == 7.5
    assert first["score_scale"] == "1-10"
    assert first["response_length_chars"] == 1234
    assert first["excluded_because"] is None
    assert (first["category"], first["language"], first["consent_level"]) == ("coding", "en", 2)
    assert first["schema_version"] == "1.2.0"
    assert second["excluded_because"] == "unscored"
    assert (second["score_value"], second["stored_score_value"]) == (None, 0.0)
