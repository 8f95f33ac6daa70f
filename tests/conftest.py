"""Shared test helpers: real SQLite files in tmp_path, the real CLI, llm-council-shaped lines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from council_db.cli import app
from council_db.database import Database, open_database

SESSION = "3f2b6c1e-6d1a-4c3e-9a51-0c7f0d2b9e10"


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


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "council.db"


@pytest.fixture
def db(db_path: Path) -> Database:
    return open_database(f"sqlite:///{db_path}", notify=lambda _: None)


class Cli:
    """Runs council-db in-process against one database file."""

    def __init__(self, db_path: Path):
        self.db_path = db_path
        self.runner = CliRunner()

    def __call__(self, *args: str, input: str | bytes | None = None):
        return self.runner.invoke(app, ["--db", str(self.db_path), *args], input=input)


@pytest.fixture
def cli(db_path: Path) -> Cli:
    return Cli(db_path)


def run_module(*args: str, cwd: Path | None = None, input: bytes | None = None) -> subprocess.CompletedProcess:
    """council-db in a real process: exit codes and stderr exactly as a user sees them."""
    return subprocess.run([sys.executable, "-m", "council_db", *args], cwd=cwd, input=input,
                          capture_output=True, timeout=120)


def scalar(db: Database, sql: str) -> Any:
    from sqlalchemy import text

    with db.engine.connect() as connection:
        return connection.execute(text(sql)).scalar()
