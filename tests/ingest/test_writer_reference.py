"""record_session writes what llm-council's own writer writes, checked against records that
llm-council-core 0.53.0 produced for the same sessions (tests/data/llm_council_writer, made
by its make_reference.py): a reviewer marked abstained that still gave scores, and consent
level 4 with no query-hash key."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

import council_db
from tests.conftest import Cli, scalar

HERE = Path(__file__).parents[1] / "data" / "llm_council_writer"
INPUTS = json.loads((HERE / "sessions.json").read_text(encoding="utf-8"))
REFERENCE = json.loads((HERE / "reference.json").read_text(encoding="utf-8"))["records"]
CASES = {case["name"]: case for case in INPUTS["cases"]}


@pytest.fixture
def council(db_path, monkeypatch):
    monkeypatch.delenv("COUNCIL_DB_HMAC_SECRET", raising=False)
    monkeypatch.delenv("COUNCIL_DB_HMAC_SECRET_FILE", raising=False)
    with council_db.connect(str(db_path)) as opened:
        yield opened


def recorded(council, name: str, monkeypatch):
    case = CASES[name]
    if case["hash_secret"]:
        monkeypatch.setenv("COUNCIL_DB_HMAC_SECRET", INPUTS["secret"])
    return council.record_session(**case["session"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_records_are_the_ones_llm_councils_writer_wrote(council, db, name, monkeypatch):
    result = recorded(council, name, monkeypatch)

    assert result.records == REFERENCE[name]
    assert scalar(db, "SELECT count(*) FROM scores") == len(REFERENCE[name])


def test_a_reviewer_marked_abstained_that_gave_scores_is_recorded_and_said_so(council, monkeypatch, caplog):
    with caplog.at_level(logging.WARNING, logger="council_db"):
        result = recorded(council, "abstained_reviewer_with_a_ranking_and_scores", monkeypatch)

    assert "google/gemini" in {r["reviewer_id"] for r in result.records}
    assert any("google/gemini" in w and "abstained" in w for w in result.warnings)
    assert caplog.messages == result.warnings


def test_level_4_without_a_key_is_recorded_with_no_hash_and_a_warning_how_to_set_one(council, db_path,
                                                                                       monkeypatch):
    result = recorded(council, "consent_level_4_without_a_secret", monkeypatch)
    council.close()

    assert result.inserted == 4 and {r["query_hash"] for r in result.records} == {None}
    assert any("COUNCIL_DB_HMAC_SECRET" in w and "query_hash" in w for w in result.warnings)
    query = CASES["consent_level_4_without_a_secret"]["session"]["query"]
    stored = b"".join(p.read_bytes() for p in db_path.parent.glob("council.db*"))
    assert query.encode() not in stored and b"people who live beside it" not in stored


def test_ingest_records_a_level_4_session_without_a_key_and_warns_on_stderr(tmp_path, monkeypatch):
    monkeypatch.delenv("COUNCIL_DB_HMAC_SECRET", raising=False)
    monkeypatch.delenv("COUNCIL_DB_HMAC_SECRET_FILE", raising=False)
    path = tmp_path / "session.json"
    path.write_text(json.dumps(CASES["consent_level_4_without_a_secret"]["session"]), encoding="utf-8")

    done = Cli(tmp_path / "council.db")("ingest", str(path), "--format", "json")

    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["records"] == REFERENCE["consent_level_4_without_a_secret"]
    assert "warning: session edge-level-4-no-secret: consent level 4 without a query-hash key" in done.stderr
