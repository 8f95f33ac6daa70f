"""What is stored, and how compactly; stats and sessions in every format."""

from __future__ import annotations

import csv
import io
import json
import random
import uuid

from tests.conftest import both_backends, session, write_jsonl

REALISTIC_MODELS = ["openai/gpt-4o-2024-08-06", "anthropic/claude-3-5-sonnet-20241022",
                    "google/gemini-1.5-pro-002", "meta-llama/llama-3.1-405b-instruct"]


def realistic_sessions(count: int) -> list[dict]:
    """4x4 sessions shaped like llm-council's: uuid ids, microsecond times, metadata."""
    rng = random.Random(5)
    lines = []
    for number in range(count):
        key = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        day = f"2025-{1 + number % 12:02d}-{1 + number % 28:02d}"
        when = f"{day}T{number % 24:02d}:17:03.{rng.randrange(10**6):06d}+00:00"
        order = rng.sample(range(4), 4)
        for reviewer in REALISTIC_MODELS:
            for slot, candidate in zip(order, REALISTIC_MODELS):
                lines.append({
                    "schema_version": "1.2.0", "session_id": key, "timestamp": when, "consent_level": 1,
                    "reviewer_id": reviewer, "model_id": candidate, "position": slot,
                    "response_length_chars": rng.randrange(200, 6000),
                    "score_value": float(rng.randrange(10, 100)) / 10, "score_scale": "1-10",
                    "council_config_version": "0.1.0", "query_hash": None,
                    "query_metadata": {"category": "coding", "token_bucket": "medium", "language": "en"},
                })
    return lines


def used_bytes(db_path) -> int:
    """The file's bytes in use (pages less the free list), the WAL checkpointed into it."""
    import sqlite3

    with sqlite3.connect(db_path) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        freelist = connection.execute("PRAGMA freelist_count").fetchone()[0]
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
    return (pages - freelist) * page_size


def test_a_4x4_session_takes_at_most_1kb_including_indexes(cli, tmp_path, db_path):
    """What a session adds, indexes included; the empty schema (a page or more per table, index
    and view, whatever the data) is not the sessions'."""
    sessions = 2_000
    cli("db", "upgrade")
    schema = used_bytes(db_path)
    cli("import", str(write_jsonl(tmp_path / "in.jsonl", realistic_sessions(sessions))))
    cli("db", "path")  # every connection closed by now: the WAL is checkpointed into the file
    assert (used_bytes(db_path) - schema) / sessions <= 1024


def test_a_packed_4x4_session_takes_at_most_1450_bytes(cli, tmp_path, db_path):
    """With `db pack` the store keeps each session's 16 records a second time, 24 bytes each
    with its row and key (docs/storage.md: 1,413 bytes a session measured); a looser packed
    layout, or a part too many, fails here."""
    sessions = 2_000
    cli("db", "pack")
    schema = used_bytes(db_path)
    cli("import", str(write_jsonl(tmp_path / "in.jsonl", realistic_sessions(sessions))))
    cli("db", "path")
    assert (used_bytes(db_path) - schema) / sessions <= 1450


@both_backends
def test_stats_counts_what_is_stored(cli, tmp_path):
    lines = session("a") + session("b", schema_version="1.1.0") + session("c", score_value=0.0)
    cli("import", str(write_jsonl(tmp_path / "in.jsonl", lines)))
    stats = json.loads(cli("stats", "--format", "json").stdout)
    assert (stats["records"], stats["sessions"], stats["reviewers"], stats["models"]) == (48, 3, 4, 4)
    assert stats["schema_versions"] == {"1.1.0": 16, "1.2.0": 32}
    assert stats["position_not_display_order"] == 16
    assert stats["excluded"] == {"unscored": 16}
    assert stats["self_reviews"] == 12
    assert stats["window"] == {"start": "2025-12-17T10:30:00.123456Z", "end": "2025-12-17T10:30:00.123456Z"}


@both_backends
def test_stats_counts_each_reviewer_and_model_once_across_the_scans_id_ranges(cli, tmp_path):
    """The records are scanned in two id ranges at once (sessions a and b, then c): a model in
    both ranges is one model, a model only in the second (model-3) is still counted."""
    lines = session("a", models=2, reviewers=2) + session("b", models=3, reviewers=3) + session("c", reviewers=1)
    cli("import", str(write_jsonl(tmp_path / "in.jsonl", lines)))
    stats = json.loads(cli("stats", "--format", "json").stdout)
    assert (stats["records"], stats["sessions"], stats["reviewers"], stats["models"]) == (4 + 9 + 4, 3, 3, 4)
    assert stats["self_reviews"] == 2 + 3 + 1


@both_backends
def test_stats_and_sessions_print_as_table_json_and_csv(cli, tmp_path):
    cli("import", str(write_jsonl(tmp_path / "in.jsonl", session("a") + session("b"))))
    assert "records" in cli("stats").stdout
    table = cli("sessions", "--sessions", "1").stdout
    assert "session_id" in table and table.count("\n") >= 3
    rows = json.loads(cli("sessions", "--format", "json").stdout)
    assert [(r["records"], r["reviewers"], r["candidates"]) for r in rows] == [(16, 4, 4), (16, 4, 4)]
    parsed = list(csv.DictReader(io.StringIO(cli("sessions", "--format", "csv", "-n", "1").stdout)))
    assert len(parsed) == 1 and parsed[0]["records"] == "16"


@both_backends
def test_sessions_lists_the_latest_first(cli, tmp_path):
    lines = session("old", timestamp="2024-01-01T00:00:00Z") + session("new", timestamp="2025-01-01T00:00:00Z")
    cli("import", str(write_jsonl(tmp_path / "in.jsonl", lines)))
    rows = json.loads(cli("sessions", "--format", "json", "-n", "1").stdout)
    assert [r["session_id"] for r in rows] == ["new"]
