"""Shared test helpers: real SQLite files in tmp_path (and a real PostgreSQL server for tests
that run on both backends), the real CLI, llm-council-shaped lines."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from typer.testing import CliRunner

from council_db.cli.app import app
from council_db.simulate import SimulationConfig
from council_db.simulate import write_jsonl as simulate_jsonl
from council_db.store.database import Database, create_engine_for, open_database
from tests import postgres
from tests.store.sqlite_files import url_for

SESSION = "3f2b6c1e-6d1a-4c3e-9a51-0c7f0d2b9e10"
# Tables written off a terminal are as wide as $COLUMNS when it is set (cli/output.py); a test
# that wants a width says so. pytest-xdist's workers inherit one: without this, tables the tests
# read whole would be cut to it.
os.environ.pop("COLUMNS", None)


def record(**changes: Any) -> dict[str, Any]:
    """A 1.2.0 record exactly as llm-council writes it; keyword arguments replace fields,
    and a value of ... removes the field."""
    line = {
        "schema_version": "1.2.0",
        "session_id": SESSION,
        "timestamp": "2025-12-17T10:30:00.123456+00:00",
        "consent_level": 1,
        "reviewer_id": "openai/gpt-4o",
        "model_id": "anthropic/claude-3-5-sonnet",
        "position": 0,
        "response_length_chars": 1200,
        "score_value": 8.5,
        "score_scale": "1-10",
        "council_config_version": "0.1.0",
        "query_hash": None,
        "query_metadata": {"category": "coding", "token_bucket": "short", "language": "en"},
    }
    line.update(changes)
    return {k: v for k, v in line.items() if v is not ...}


def session(session_id: str = SESSION, models: int = 4, reviewers: int = 4, **changes: Any) -> list[dict]:
    """A whole council session: every reviewer scores every candidate, one shuffle."""
    names = [f"vendor/model-{i}" for i in range(models)]
    return [
        record(**{"session_id": session_id, "reviewer_id": names[r], "model_id": names[m],
                  "position": (m + 1) % models, "response_length_chars": 800 + 100 * m,
                  "score_value": float(5 + (m + r) % 5), **changes})
        for r in range(reviewers) for m in range(models)
    ]


def write_jsonl(path: Path, lines: list[Any]) -> Path:
    """Dicts become JSON lines; strings are written as they are (for broken lines)."""
    with path.open("w", encoding="utf-8") as out:
        for line in lines:
            out.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
    return path


BACKENDS = ["sqlite", "postgresql"]
both_backends = pytest.mark.parametrize("backend", BACKENDS, indirect=True)
"""Runs a test using ``db``, ``db_url`` or ``cli`` once on SQLite and once on PostgreSQL."""


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[postgres.Cluster]:
    """One PostgreSQL server for the whole run, started on first use."""
    reason = postgres.why_unavailable()
    if reason:
        pytest.skip(reason)
    cluster = postgres.Cluster().start()
    yield cluster
    cluster.stop()


@pytest.fixture
def pg_url(pg_cluster: postgres.Cluster) -> Iterator[str]:
    """The URL of a new, empty PostgreSQL database, dropped after the test."""
    url = pg_cluster.database()
    yield url
    pg_cluster.drop(url)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    """SQLite unless a test is marked ``both_backends``."""
    return getattr(request, "param", "sqlite")


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "council.db"


@pytest.fixture
def db_url(backend: str, request: pytest.FixtureRequest, db_path: Path) -> str:
    if backend == "postgresql":
        return request.getfixturevalue("pg_url")
    return f"sqlite:///{db_path}"


@pytest.fixture
def db(db_url: str) -> Iterator[Database]:
    database = open_database(db_url, notify=lambda _: None)
    yield database
    database.engine.dispose()


class Cli:
    """Runs council-db in-process against one database (a file path or URL)."""

    def __init__(self, db: Path | str):
        self.db = str(db)
        self.runner = CliRunner()

    def __call__(self, *args: str, input: str | bytes | None = None):
        return self.runner.invoke(app, ["--db", self.db, *args], input=input)


@pytest.fixture
def cli(db_url: str) -> Cli:
    return Cli(db_url)


def run_module(*args: str, cwd: Path | None = None, input: bytes | None = None) -> subprocess.CompletedProcess:
    """council-db in a real process: exit codes and stderr exactly as a user sees them."""
    return subprocess.run([sys.executable, "-m", "council_db", *args], cwd=cwd, input=input,
                          capture_output=True, timeout=120)


def scalar(db: Database, sql: str) -> Any:
    from sqlalchemy import text

    with db.engine.connect() as connection:
        return connection.execute(text(sql)).scalar()


def same_numbers(a, b, where: str = "report") -> bool:
    """Equal structure and strings; floats equal to 1e-9 relative (the backends may sum in another order)."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        return all(same_numbers(a[k], b[k], f"{where}.{k}") for k in a)
    if isinstance(a, list):
        assert len(a) == len(b), where
        return all(same_numbers(x, y, f"{where}[{i}]") for i, (x, y) in enumerate(zip(a, b)))
    if isinstance(a, float) and isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-9, abs=1e-12), where
        return True
    assert a == b, where
    return True


def same_as_pinned(report: dict, pinned: dict) -> bool:
    """A report's pinned fields equal a pinned report's (to 1e-9, as same_numbers): every field
    the pinned report has, the report has too, with its value; fields a later minor version of
    the contract added are left out, as are the time it was made and the contract's version."""
    report, pinned = dict(report), dict(pinned)
    for unpinned in ("generated_at", "report_schema_version"):
        report.pop(unpinned, None), pinned.pop(unpinned, None)
    return same_numbers(_pinned_fields(report, pinned), pinned)


def _pinned_fields(value, like):
    """``value`` cut down to the keys of ``like``, dict by dict and item by item."""
    if isinstance(like, dict) and isinstance(value, dict):
        gone = like.keys() - value.keys()
        assert not gone, f"the report lost the pinned fields {sorted(gone)}"
        return {key: _pinned_fields(value[key], like[key]) for key in like}
    if isinstance(like, list) and isinstance(value, list) and len(like) == len(value):
        return [_pinned_fields(item, pattern) for item, pattern in zip(value, like)]
    return value


def simulated(**config: Any) -> tuple[list[dict], dict]:
    """Simulated llm-council records (as dicts) and the simulator's truth."""
    out = io.StringIO()
    truth = simulate_jsonl(SimulationConfig(**config), out)
    return [json.loads(line) for line in out.getvalue().splitlines()], truth


@pytest.fixture
def engines():
    """create_engine_for, with every engine disposed (connections closed) at the end."""
    made = []

    def make(path: Path):
        engine = create_engine_for(url_for(path))
        made.append(engine)
        return engine

    yield make
    for engine in made:
        engine.dispose()


@pytest.fixture
def opened():
    """open_database, collecting the notify messages; every engine disposed at the end."""
    made = []

    def open_(path: Path, messages: list[str] | None = None):
        sink = messages if messages is not None else []
        database = open_database(url_for(path), notify=sink.append)
        made.append(database)
        return database

    yield open_
    for database in made:
        database.engine.dispose()


def browser() -> str:
    """Headless Chromium's executable, for the tests that look at the HTML report as a browser
    draws it. Without one they skip, saying why, unless $COUNCIL_DB_TEST_BROWSER is
    "required" (as in .ci/run, which installs Debian's chromium): then a missing browser fails."""
    found = shutil.which("chromium")
    if found is None:
        why = "no chromium on PATH: the HTML report's charts are drawn by headless Chromium (apt-get install chromium)"
        if os.environ.get("COUNCIL_DB_TEST_BROWSER") == "required":
            pytest.fail(why)
        pytest.skip(why)
    return found

