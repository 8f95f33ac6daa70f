"""Recording council sessions from Python and with `council-db ingest`.

The rules below are llm-council's own writer (bias_persistence.create_bias_records_from_session,
with bias_audit.derive_label_positions), written down as behaviour:
- one record per reviewer and label it ranked (scored labels when it gave no ranking);
- position = display_index (enhanced label_to_model), else the label's letter (legacy: A=0);
- an abstaining reviewer gives none (llm-council's parser leaves its ranking and scores empty;
  one marked abstained that still scored: test_writer_reference.py); a label with no model or
  no derivable slot is dropped with a warning (never given its ranking index);
- self-reviews are kept; one model under two labels gives two records;
- response_length_chars = characters of the model's (first) stage-1 answer;
- a missing or non-numeric score is 0.0; scale "1-10"; schema "1.2.0"; config "0.1.0";
- the query is never in a record: coarse metadata, and at consent level 4 an HMAC prefix
  (no key configured: null, test_writer_reference.py; a key that is unsafe: refused).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

import council_db
from council_db.errors import CouncilDbError
from council_db.ingest.importer import import_files
from council_db.report.model import BiasReport
from tests.conftest import Cli, run_module, scalar, write_jsonl

ANSWERS = [
    {"model": "openai/gpt-4o", "response": "Short answer."},
    {"model": "anthropic/claude", "response": "A somewhat longer answer, with détails."},
    {"model": "google/gemini", "response": "x" * 300},
]
ENHANCED = {
    "Response A": {"model": "google/gemini", "display_index": 0},
    "Response B": {"model": "openai/gpt-4o", "display_index": 1},
    "Response C": {"model": "anthropic/claude", "display_index": 2},
}
LEGACY = {"Response A": "google/gemini", "Response B": "openai/gpt-4o", "Response C": "anthropic/claude"}
QUERY = "Please write a python function that reverses a linked list in place"
TIME = "2025-12-17T10:30:00+00:00"


def review(model: str, ranking: list[str], scores: dict, **extra) -> dict:
    return {"model": model, "ranking": "raw text", "parsed_ranking": {"ranking": ranking, "scores": scores, **extra}}


REVIEWS = [
    review("openai/gpt-4o", ["Response C", "Response A", "Response B"],
           {"Response A": 7, "Response B": 6.5, "Response C": 9}),
    review("anthropic/claude", ["Response A", "Response C", "Response B"],
           {"Response A": 8, "Response B": 5, "Response C": 7}),
]


def expected(reviewer: str, model: str, position: int, score: float, **changes) -> dict:
    line = {
        "schema_version": "1.2.0", "session_id": "s-1", "timestamp": TIME, "consent_level": 1,
        "reviewer_id": reviewer, "model_id": model, "position": position,
        "response_length_chars": len(next(a["response"] for a in ANSWERS if a["model"] == model)),
        "score_value": score, "score_scale": "1-10", "council_config_version": "0.1.0", "query_hash": None,
        "query_metadata": {"category": "coding", "token_bucket": "medium", "language": "en"},
    }
    return {**line, **changes}


@pytest.fixture
def council(db_path):
    with council_db.connect(str(db_path)) as opened:
        yield opened


def record(council, label_to_model=ENHANCED, reviews=REVIEWS, **options):
    options.setdefault("query", QUERY)
    options.setdefault("timestamp", TIME)
    return council.record_session("s-1", ANSWERS, reviews, label_to_model, **options)


# ------------------------------------------------------------------- llm-council's rules


def test_enhanced_labels_give_display_index_positions_in_ranking_order_with_character_lengths(council):
    result = record(council)

    assert result.records == [
        expected("openai/gpt-4o", "anthropic/claude", 2, 9.0),
        expected("openai/gpt-4o", "google/gemini", 0, 7.0),
        expected("openai/gpt-4o", "openai/gpt-4o", 1, 6.5),
        expected("anthropic/claude", "google/gemini", 0, 8.0),
        expected("anthropic/claude", "anthropic/claude", 2, 7.0),
        expected("anthropic/claude", "openai/gpt-4o", 1, 5.0),
    ]
    assert result.inserted == 6 and result.warnings == []


def test_display_index_wins_over_the_labels_letter():
    from council_db.ingest.council_records import label_positions

    mapping = {"Response A": {"model": "m1", "display_index": 3}, "Response B": {"model": "m2"}}
    assert label_positions(mapping) == {"Response A": 3, "Response B": 1}


def test_legacy_labels_take_positions_from_letter_order(council):
    assert [r["position"] for r in record(council, LEGACY).records] == [2, 0, 1, 0, 2, 1]


def test_an_abstaining_reviewer_gives_no_records(council):
    abstained = {"model": "google/gemini", "parsed_ranking": {"ranking": [], "scores": {}, "abstained": True,
                                                               "abstention_reason": "Safety refusal detected"}}
    result = record(council, reviews=[*REVIEWS, abstained])
    assert len(result.records) == 6
    assert "google/gemini" not in {r["reviewer_id"] for r in result.records}


def test_a_label_without_a_model_or_a_slot_is_dropped_with_a_warning(council, caplog):
    mapping = {**LEGACY, "Candidate 4": "meta/llama"}  # no display_index, not a letter label
    reviews = [review("openai/gpt-4o", ["Candidate 4", "Response Z", "Response A"], {"Response A": 6})]
    with caplog.at_level(logging.WARNING, logger="council_db"):
        result = record(council, mapping, reviews)

    assert [(r["model_id"], r["position"]) for r in result.records] == [("google/gemini", 0)]
    assert len(result.warnings) == 2
    assert "'Candidate 4' dropped: its display slot cannot be derived" in result.warnings[0]
    assert "'Response Z' dropped: it is not in label_to_model" in result.warnings[1]
    assert caplog.messages == result.warnings


def test_self_reviews_are_kept_and_marked(council, db):
    record(council)
    assert scalar(db, "SELECT count(*) FROM scores WHERE self_review") == 2


def test_one_model_under_two_labels_gives_two_records_with_two_positions(council, db):
    mapping = {"Response A": {"model": "google/gemini", "display_index": 0},
               "Response B": {"model": "google/gemini", "display_index": 1}}
    reviews = [review("openai/gpt-4o", ["Response B", "Response A"], {"Response A": 4, "Response B": 8})]
    result = record(council, mapping, reviews)

    assert [(r["model_id"], r["position"], r["score_value"]) for r in result.records] == [
        ("google/gemini", 1, 8.0), ("google/gemini", 0, 4.0)]
    assert scalar(db, "SELECT count(*) FROM scores") == 2


def test_without_a_ranking_the_scored_labels_are_used_and_bad_scores_become_zero(council, db):
    reviews = [review("openai/gpt-4o", [], {"Response A": "N/A", "Response B": None, "Response C": 8})]
    result = record(council, reviews=reviews)

    assert [(r["position"], r["score_value"]) for r in result.records] == [(0, 0.0), (1, 0.0), (2, 8.0)]
    assert result.excluded == 2  # 0.0 on 1-10: llm-council's "ranked but never scored", kept and excluded
    assert scalar(db, "SELECT count(*) FROM score_records WHERE excluded_because = 'unscored'") == 2


def test_a_ranked_label_without_a_score_is_recorded_as_zero(council):
    reviews = [review("openai/gpt-4o", ["Response A", "Response B"], {"Response A": 9})]
    assert [r["score_value"] for r in record(council, reviews=reviews).records] == [9.0, 0.0]


def test_query_metadata_is_llm_councils_heuristic_and_absent_without_a_query(council):
    from council_db.ingest.council_records import query_metadata

    assert query_metadata("Write a poem about the sea") == {
        "category": "creative_writing", "token_bucket": "short", "language": "en"}
    assert query_metadata("what is 2+2" + " " * 60)["category"] == "math_reasoning"
    assert query_metadata("why is the sky blue? " * 10)["token_bucket"] == "long"
    assert record(council, query=None).records[0]["query_metadata"] is None


# ----------------------------------------------------------- stored exactly like import


def test_a_recorded_session_is_stored_exactly_like_importing_llm_councils_jsonl(council, tmp_path, cli):
    result = record(council)
    imported = tmp_path / "imported.db"
    with council_db.connect(str(imported)) as other:
        import_files(other.database, [str(write_jsonl(tmp_path / "s.jsonl", result.records))])

    from_api = cli("export").stdout
    from_import = Cli(imported)("export").stdout
    assert from_api == from_import
    exported = sorted((json.loads(line) for line in from_api.splitlines()), key=json.dumps)
    assert exported == sorted(result.records, key=json.dumps)


def test_recording_a_session_again_adds_nothing(council, db):
    record(council)
    again = record(council)
    assert (again.inserted, again.duplicates) == (0, 6)
    assert scalar(db, "SELECT count(*) FROM scores") == 6


def test_recorded_sessions_have_an_imports_row_of_kind_session(council, db):
    record(council)
    assert scalar(db, "SELECT source_kind || ' ' || status || ' ' || inserted FROM imports") == "session complete 6"


def test_consent_level_0_stores_nothing(council, db):
    result = record(council, consent_level=0)
    assert (result.inserted, result.skipped) == (0, 6)
    assert scalar(db, "SELECT count(*) FROM scores") == 0


# ------------------------------------------------------------------------------ privacy

SECRET = "a-team-secret-of-32-characters!!"


def test_the_query_is_never_stored_and_level_4_keeps_only_its_hmac_prefix(council, db_path, monkeypatch):
    monkeypatch.setenv("COUNCIL_DB_HMAC_SECRET", SECRET)
    result = record(council, consent_level=4)
    council.close()

    digest = hmac.new(SECRET.encode(), QUERY[:100].encode(), hashlib.sha256).hexdigest()[:16]
    assert {r["query_hash"] for r in result.records} == {digest}
    stored = b"".join(p.read_bytes() for p in db_path.parent.glob("council.db*"))
    assert QUERY.encode() not in stored and b"linked list" not in stored
    assert digest.encode() in stored


def test_below_level_4_no_hash_is_made_and_no_secret_is_needed(council, monkeypatch):
    monkeypatch.delenv("COUNCIL_DB_HMAC_SECRET", raising=False)
    monkeypatch.delenv("COUNCIL_DB_HMAC_SECRET_FILE", raising=False)
    assert {r["query_hash"] for r in record(council, consent_level=3).records} == {None}


def test_a_secret_shorter_than_16_characters_is_refused(council, monkeypatch):
    monkeypatch.setenv("COUNCIL_DB_HMAC_SECRET", "too-short")
    with pytest.raises(CouncilDbError, match="at least 16"):
        record(council, consent_level=4)


def secret_file(tmp_path: Path, mode: int) -> Path:
    path = tmp_path / "hmac.key"
    path.write_text(SECRET + "\n")
    path.chmod(mode)
    return path


def test_a_private_secret_file_gives_the_same_hash_as_the_variable(council, tmp_path, monkeypatch):
    monkeypatch.delenv("COUNCIL_DB_HMAC_SECRET", raising=False)
    monkeypatch.setenv("COUNCIL_DB_HMAC_SECRET_FILE", str(secret_file(tmp_path, 0o600)))
    digest = hmac.new(SECRET.encode(), QUERY[:100].encode(), hashlib.sha256).hexdigest()[:16]
    assert record(council, consent_level=4).records[0]["query_hash"] == digest


@pytest.mark.parametrize("mode, problem", [(0o640, "chmod 600"), (0o604, "chmod 600")])
def test_a_group_or_world_readable_secret_file_is_refused(council, tmp_path, monkeypatch, mode, problem):
    monkeypatch.delenv("COUNCIL_DB_HMAC_SECRET", raising=False)
    monkeypatch.setenv("COUNCIL_DB_HMAC_SECRET_FILE", str(secret_file(tmp_path, mode)))
    with pytest.raises(CouncilDbError, match=problem):
        record(council, consent_level=4)


def test_a_symlinked_secret_file_is_refused(council, tmp_path, monkeypatch):
    link = tmp_path / "link.key"
    link.symlink_to(secret_file(tmp_path, 0o600))
    monkeypatch.delenv("COUNCIL_DB_HMAC_SECRET", raising=False)
    monkeypatch.setenv("COUNCIL_DB_HMAC_SECRET_FILE", str(link))
    with pytest.raises(CouncilDbError, match="symlink"):
        record(council, consent_level=4)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("change, message", [
    (dict(session_id=""), "session_id: got a string of 0 characters: string should have at least 1 character"),
    (dict(stage1_results={"model": "m"}), "stage1_results: got"),
    (dict(stage2_results=[{"model": "r", "parsed_ranking": {"ranking": [3]}}]),
     "stage2_results[0].parsed_ranking.ranking[0]: got 3"),
    (dict(label_to_model={"Response A": {"model": "m", "display_index": "first"}}),
     'label_to_model["Response A"].display_index: got a string of 5 characters'),
    (dict(consent_level=7), "consent_level: got 7"),
    (dict(timestamp="yesterday"), "timestamp: a string of 9 characters that is not an ISO-8601 time"),
    (dict(reviewer_kinds={"anthropic/claude": "expert"}),
     'reviewer_kinds["anthropic/claude"]: got a string of 6 characters; expected "judge", "human" or "gold"'),
    (dict(reviewer_kinds=["anthropic/claude"]), "reviewer_kinds: got a list"),
])
def test_bad_input_is_an_error_naming_the_field(council, change, message):
    arguments = {**dict(session_id="s-1", stage1_results=ANSWERS, stage2_results=REVIEWS, label_to_model=ENHANCED),
                 **change}
    with pytest.raises(CouncilDbError) as error:
        council.record_session(**arguments)
    assert message in str(error.value)


def test_reviewer_kinds_marks_a_human_rater_on_its_records_and_in_the_store(council):
    result = record(council, reviewer_kinds={"anthropic/claude": "human", "nobody": "gold"})

    assert {r["reviewer_id"]: r.get("reviewer_kind") for r in result.records} == {
        "openai/gpt-4o": None, "anthropic/claude": "human"}
    assert result.warnings == ["session s-1: reviewer_kinds names nobody, which gave no record in it"]
    stored = dict(council.sqlite_utils().execute("SELECT name, reviewer_kind FROM models").fetchall())
    assert stored == {"openai/gpt-4o": "judge", "anthropic/claude": "human", "google/gemini": "judge"}


def test_a_session_that_states_another_kind_for_a_stored_reviewer_changes_it_with_a_warning(council):
    record(council)
    result = council.record_session("s-2", ANSWERS, REVIEWS, ENHANCED, timestamp=TIME,
                                    reviewer_kinds={"openai/gpt-4o": "gold"})

    assert result.warnings == ["reviewer openai/gpt-4o was stored as judge and is now gold, as this session says"]


# ------------------------------------------------------------------ report and import cost


def test_report_returns_the_pydantic_bias_report_for_a_window(council, tmp_path):
    from council_db.simulate import SimulationConfig
    from council_db.simulate import write_jsonl as simulate

    path = tmp_path / "sim.jsonl"
    with path.open("w") as out:
        simulate(SimulationConfig(sessions=40, seed=3), out)
    import_files(council.database, [str(path)])

    report = council.report(sessions=25, seed=1)
    assert isinstance(report, BiasReport) and isinstance(report, council_db.BiasReport)
    assert (report.window.sessions, report.window.filters) == (25, {"sessions": 25})
    assert report.reviewers


def test_importing_council_db_loads_no_heavy_library():
    code = ("import sys, council_db; heavy = {'sqlalchemy', 'numpy', 'scipy', 'pydantic', 'httpx', 'alembic'};"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -------------------------------------------------------------------- council-db ingest


def session_file(tmp_path: Path, **changes) -> Path:
    data = dict(session_id="s-1", stage1_results=ANSWERS, stage2_results=REVIEWS, label_to_model=ENHANCED,
                query=QUERY, consent_level=1, timestamp=TIME)
    data.update(changes)
    path = tmp_path / "session.json"
    path.write_text(json.dumps({k: v for k, v in data.items() if v is not ...}))
    return path


def test_ingest_stores_the_same_records_as_the_python_api(cli, council, tmp_path):
    done = cli("ingest", str(session_file(tmp_path)), "--format", "json")
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout)
    assert summary["inserted"] == 6 and summary["records"] == record(council).records


def test_ingest_takes_reviewer_kinds_as_the_python_api_does(cli, tmp_path):
    done = cli("ingest", str(session_file(tmp_path, reviewer_kinds={"anthropic/claude": "human"})), "--json")

    assert done.exit_code == 0, done.output
    assert [r.get("reviewer_kind") for r in json.loads(done.stdout)["records"]] == [None] * 3 + ["human"] * 3


def test_ingest_reports_dropped_labels_as_warnings_on_stderr(db_path, tmp_path):
    path = session_file(tmp_path, label_to_model={"Response A": "google/gemini", "Answer 2": "openai/gpt-4o"})
    done = run_module("--db", str(db_path), "ingest", str(path))
    assert done.returncode == 0
    assert b"warning: session s-1: reviewer openai/gpt-4o's label 'Response B' dropped" in done.stderr


@pytest.mark.parametrize("contents, message", [
    ('{"session_id": "s", "stage1_results": []', "not valid JSON at line 1, column 41"),
    ("[1, 2]", "a session must be one JSON object"),
    ('{"session_id": "s", "stage1_results": [], "stage2_results": []}', "label_to_model: missing; expected"),
])
def test_ingest_refuses_a_bad_file_naming_the_problem(db_path, tmp_path, contents, message):
    path = tmp_path / "bad.json"
    path.write_text(contents)
    done = run_module("--db", str(db_path), "ingest", str(path))
    assert done.returncode == 1
    assert done.stderr.decode().startswith("error: ") and message in done.stderr.decode()
    assert b"Traceback" not in done.stderr


def test_ingest_of_a_missing_file_says_so(cli, tmp_path):
    done = cli("ingest", str(tmp_path / "nope.json"))
    assert done.exit_code == 1 and "no such file" in str(done.exception)


def test_ingest_reads_stdin(cli, tmp_path):
    done = cli("ingest", "-", input=session_file(tmp_path).read_text())
    assert done.exit_code == 0, done.output


def test_ingest_hashes_at_level_4_with_the_secret_from_the_environment(db_path, tmp_path):
    path = session_file(tmp_path, consent_level=4)
    env = {**os.environ, "COUNCIL_DB_HMAC_SECRET": SECRET}
    done = subprocess.run([sys.executable, "-m", "council_db", "--db", str(db_path), "ingest", str(path)],
                          capture_output=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    digest = hmac.new(SECRET.encode(), QUERY[:100].encode(), hashlib.sha256).hexdigest()[:16]
    from council_db.store.database import open_database

    assert scalar(open_database(f"sqlite:///{db_path}"), "SELECT query_hash FROM sessions") == digest
