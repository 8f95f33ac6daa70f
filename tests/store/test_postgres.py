"""PostgreSQL as a team server: the migrations build the same schema, first opens and
importers running at once create, lose and double nothing, and URLs and failures read well.

Runs on the real server tests/postgres.py starts (skipped, with the reason, without one).
"""

from __future__ import annotations

import json
import subprocess
import sys

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text

from council_db.contract.fields import EXCLUSION_REASONS
from council_db.store import migrate
from council_db.store.database import create_engine_for
from council_db.store.models import Base, schema_filter
from tests.conftest import run_module, scalar, session, write_jsonl
from tests.store.sqlite_files import EXPECTED_TABLES, EXPECTED_VIEWS, revisions_oldest_first


def schema_of(engine) -> dict[str, object]:
    """Tables with their columns, indexes and constraints, and views with their definitions."""
    found = inspect(engine)
    tables = {}
    for name in found.get_table_names():
        tables[name] = (
            [(c["name"], str(c["type"]), c["nullable"]) for c in found.get_columns(name)],
            sorted(i["name"] for i in found.get_indexes(name)),
            sorted(str(f["name"]) for f in found.get_foreign_keys(name)),
            sorted(str(u["name"]) for u in found.get_unique_constraints(name)),
        )
    views = {name: found.get_view_definition(name) for name in found.get_view_names()}
    return {"tables": tables, "views": views}


def test_migrations_build_every_table_and_view_on_postgresql_and_match_the_models(pg_url):
    engine = create_engine_for(pg_url)
    try:
        migrate.upgrade(engine, "head")
        with engine.connect() as connection:
            assert set(inspect(connection).get_table_names()) == EXPECTED_TABLES | {"alembic_version"}
            assert set(inspect(connection).get_view_names()) == EXPECTED_VIEWS
            for view in EXPECTED_VIEWS:
                assert connection.execute(text(f"SELECT count(*) FROM {view}")).scalar() == 0
            context = MigrationContext.configure(connection, opts={"include_object": schema_filter("postgresql")})
            assert compare_metadata(context, Base.metadata) == []
            assert connection.execute(text("SELECT count(*) FROM exclusion_reasons")).scalar() == len(
                EXCLUSION_REASONS)
    finally:
        engine.dispose()


def test_downgrading_to_each_revision_and_base_on_postgresql_then_upgrading_gives_the_same_schema(pg_url):
    engine = create_engine_for(pg_url)
    try:
        revisions = revisions_oldest_first()
        built = {}
        for revision in revisions:
            migrate.upgrade(engine, revision)
            built[revision] = schema_of(engine)
        for revision in reversed(revisions[:-1]):
            migrate.downgrade(engine, revision)
            assert schema_of(engine) == built[revision], f"downgrading to {revision} gives its schema"
        migrate.downgrade(engine, "base")
        assert schema_of(engine) == {"tables": {"alembic_version": schema_of(engine)["tables"]["alembic_version"]},
                                     "views": {}}
        migrate.upgrade(engine, "head")
        assert schema_of(engine) == built[migrate.HEAD]
    finally:
        engine.dispose()


def test_processes_opening_a_new_postgresql_database_at_once_create_the_schema_once(pg_cluster):
    script = ("import sys; from council_db.store.database import open_database; "
              "open_database(sys.argv[1], notify=lambda m: print(m))")
    url = pg_cluster.database()
    processes = [subprocess.Popen([sys.executable, "-c", script, url], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE) for _ in range(6)]
    outputs = [process.communicate(timeout=120) for process in processes]
    pg_cluster.drop(url)
    assert all(process.returncode == 0 for process in processes), [err for _, err in outputs]
    assert sum(out.count(b"created") for out, _ in outputs) == 1


def test_importers_running_at_once_against_one_server_lose_and_double_nothing(pg_url, tmp_path):
    # Four files; neighbours share half their sessions, and each lists them in another order.
    keys = [f"s{n:03d}" for n in range(160)]
    files = []
    for number in range(4):
        mine = keys[number * 30:number * 30 + 60]
        ordered = mine if number % 2 else list(reversed(mine))
        lines = [line for key in ordered for line in session(key)]
        files.append(write_jsonl(tmp_path / f"laptop{number}.jsonl", lines))
    expected_sessions = len({key for number in range(4) for key in keys[number * 30:number * 30 + 60]})
    processes = [subprocess.Popen([sys.executable, "-m", "council_db", "--db", pg_url, "import", "-q",
                                   "--format", "json", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for path in files]
    outputs = [process.communicate(timeout=300) for process in processes]
    assert all(process.returncode == 0 for process in processes), [err for _, err in outputs]
    summaries = [json.loads(out) for out, _ in outputs]
    engine = create_engine_for(pg_url)
    try:
        from council_db.store.database import Database

        db = Database(pg_url, engine)
        assert scalar(db, "SELECT count(*) FROM sessions") == expected_sessions
        assert scalar(db, "SELECT count(*) FROM scores") == expected_sessions * 16
        assert sum(s["inserted"] for s in summaries) == expected_sessions * 16
        assert sum(s["duplicates"] for s in summaries) == 4 * 60 * 16 - expected_sessions * 16
        assert scalar(db, "SELECT count(*) FROM models") == 4
    finally:
        engine.dispose()


def test_a_postgresql_url_without_a_driver_name_uses_psycopg(pg_url, tmp_path):
    plain = pg_url.replace("postgresql+psycopg://", "postgresql://")
    path = write_jsonl(tmp_path / "in.jsonl", session())
    result = run_module("--db", plain, "import", "-q", "--format", "json", str(path))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["inserted"] == 16


def test_an_unreachable_server_is_a_one_line_error_not_a_traceback(pg_cluster):
    url = pg_cluster.url("council").replace(f":{pg_cluster.port}/", ":1/")
    result = run_module("--db", url, "stats")
    assert result.returncode == 1
    assert result.stderr.decode().startswith("error: database error:") and b"Traceback" not in result.stderr


def test_without_the_postgres_extra_a_postgresql_url_names_the_package_to_install():
    script = ("import sys; sys.modules['psycopg'] = None; sys.argv = ['council-db', '--db', "
              "'postgresql://me@127.0.0.1:1/council', 'stats']; from council_db.cli.app import main; main()")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr == "error: PostgreSQL needs the psycopg driver: pip install 'council-db[postgres]'\n"


def test_a_postgresql_database_holding_other_tables_is_refused_and_left_untouched(pg_url):
    engine = create_engine_for(pg_url)
    try:
        with engine.begin() as connection:
            connection.execute(text("CREATE TABLE recipes (id integer PRIMARY KEY, name text)"))
        result = run_module("--db", pg_url, "stats")
        assert result.returncode == 1 and b"not a council-db database" in result.stderr
        assert set(inspect(engine).get_table_names()) == {"recipes"}
    finally:
        engine.dispose()


def test_a_filled_postgresql_database_goes_down_to_0007_with_its_foreign_keys_and_up_again(pg_url, tmp_path):
    path = write_jsonl(tmp_path / "in.jsonl", session("a") + session("b", score_value=0.0))
    assert run_module("--db", pg_url, "import", "-q", str(path)).returncode == 0
    engine = create_engine_for(pg_url)
    tables = ("scores", "session_stats", "sessions")
    try:
        def rows() -> dict[str, list]:
            """Every row, without the columns 0009, 0013, 0014 and 0018 add (session_stats.known_lengths,
            scores.import_id, sessions.key_hash, scores.ts_us)."""
            later = {("session_stats", "known_lengths"), ("scores", "import_id"), ("sessions", "key_hash"),
                     ("scores", "ts_us")}
            with engine.connect() as connection:
                return {t: sorted(tuple(v for k, v in row._mapping.items() if (t, k) not in later)
                                  for row in connection.execute(text(f"SELECT * FROM {t}"))) for t in tables}

        def triggers() -> int:
            with engine.connect() as connection:
                return connection.execute(text(
                    "SELECT count(*) FROM pg_trigger WHERE tgname LIKE '%\\_deleted' OR tgname LIKE '%\\_truncated' "
                    "OR tgname LIKE '%\\_id\\_fixed'")).scalar()

        before = rows()
        def foreign_keys() -> list[int]:
            return [len(inspect(engine).get_foreign_keys(table)) for table in tables]

        before = rows()
        assert triggers() == 18 and foreign_keys() == [0, 0, 0]
        migrate.downgrade(engine, "0007")
        assert rows() == before and triggers() == 0 and foreign_keys() == [6, 2, 1]
        migrate.upgrade(engine, "head")
        assert rows() == before and triggers() == 18 and foreign_keys() == [0, 0, 0]
    finally:
        engine.dispose()
