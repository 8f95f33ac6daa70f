"""council-db push against a real HTTP receiver on 127.0.0.1 that fails on purpose.

What is guaranteed: at-least-once delivery with content-derived event ids, so a receiver
that keeps ids stores every eligible event exactly once; a batch the receiver answered 2xx
is never sent again; nothing below consent level 2 and no raw text ever leaves.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import council_db
from council_db.analysis.loading.window import load_sessions
from council_db.analysis.sessions.session_audit import audit_data
from council_db.errors import CouncilDbError
from council_db.ingest.importer import import_files
from council_db.outlets.push import PushSettings, pending, push
from council_db.outlets.push_events import build_events
from council_db.simulate import SimulationConfig, write_jsonl
from tests import conftest
from tests.conftest import both_backends, run_module, scalar
from tests.telemetry_server import Receiver

FAST = PushSettings(batch_size=3, retries=30, backoff=0.001, timeout=5)
PLANTED_QUERY = "PLANTED-QUERY please write python code for my secret project zebra-4471"
PLANTED_ANSWER = "PLANTED-ANSWER the zebra-4471 project code is"


def simulated(db, tmp_path: Path, sessions: int, consent: int, seed: int) -> None:
    path = tmp_path / f"sim-{seed}.jsonl"
    with path.open("w") as out:
        write_jsonl(SimulationConfig(sessions=sessions, seed=seed, consent_level=consent), out)
    import_files(db, [str(path)])


@pytest.fixture
def mixed(db, tmp_path):
    """60 sessions that may be sent (consent 3) and 20 that may not (consent 1)."""
    simulated(db, tmp_path, 60, 3, seed=1)
    simulated(db, tmp_path, 20, 1, seed=2)
    return db


def eligible_ids(db) -> set[str]:
    return {event.event_id for event in build_events(db).events}


def no_sleep(_seconds: float) -> None:
    pass


def test_every_eligible_event_arrives_exactly_once_through_a_flaky_server(mixed):
    expected = eligible_ids(mixed)
    assert len(expected) == 60
    with Receiver(failure_rate=0.45, seed=7) as receiver:
        result = push(mixed, receiver.url, settings=FAST, sleep=no_sleep)

    assert set(receiver.accepted) == expected
    assert {e["consent_level"] for e in receiver.accepted.values()} == {3}
    assert all(receiver.fates[fate] for fate in ("ok", "error_500", "drop_before", "drop_after")), receiver.fates
    # An event reaches storage again only when the server stored it but dropped the answer.
    assert all(receiver.deliveries[i] == 1 + receiver.after_drop[i] for i in expected)
    assert (result.sent, result.pending, result.below_consent) == (60, 0, 20)
    assert scalar(mixed, "SELECT count(*) FROM outbox_events WHERE sent_at IS NULL") == 0


def test_a_second_push_sends_nothing_already_accepted(mixed):
    with Receiver() as receiver:
        push(mixed, receiver.url, settings=FAST, sleep=no_sleep)
        again = push(mixed, receiver.url, settings=FAST, sleep=no_sleep)
    assert (again.queued, again.sent, again.requests) == (0, 0, 0)
    assert set(receiver.deliveries.values()) == {1}


def test_a_push_that_gives_up_keeps_its_events_queued_for_the_next_push(mixed):
    with Receiver(status=503) as receiver:
        with pytest.raises(CouncilDbError, match="gave up after 3 attempts .*HTTP 503.*60 stay queued"):
            push(mixed, receiver.url, settings=PushSettings(batch_size=50, retries=2), sleep=no_sleep)
        assert len(pending(mixed, receiver.url)) == 60 and receiver.accepted == {}
        assert scalar(mixed, "SELECT max(attempts) || ' ' || max(last_error) FROM outbox_events").startswith(
            "3 HTTP 503")

        receiver.status = None  # the service is back
        result = push(mixed, receiver.url, settings=FAST, sleep=no_sleep)
    assert (result.queued, result.sent, result.pending) == (0, 60, 0)
    assert set(receiver.accepted) == eligible_ids(mixed)


def test_an_answer_that_retrying_cannot_change_stops_at_once(mixed):
    with Receiver(status=400) as receiver:
        with pytest.raises(CouncilDbError, match="refused the events: HTTP 400"):
            push(mixed, receiver.url, settings=FAST, sleep=no_sleep)
    assert len(receiver.bodies) == 1
    assert len(pending(mixed, receiver.url)) == 60


def test_retries_wait_with_exponential_backoff(mixed):
    waits: list[float] = []
    with Receiver(status=500) as receiver:
        with pytest.raises(CouncilDbError):
            push(mixed, receiver.url, settings=PushSettings(batch_size=100, retries=4, backoff=0.1),
                 sleep=waits.append)
    assert len(waits) == 4
    for wait, base in zip(waits, [0.1, 0.2, 0.4, 0.8]):
        assert base <= wait <= base * 1.25


def test_a_killed_push_resumes_and_the_receiver_stores_each_event_once(mixed, db_path):
    expected = eligible_ids(mixed)
    command = [sys.executable, "-m", "council_db", "--db", str(db_path), "push", "--batch-size", "1",
               "--backoff", "0.01"]
    with Receiver(delay=0.03) as receiver:
        process = subprocess.Popen([*command, "--endpoint", receiver.url], stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while len(receiver.accepted) < 10 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        stored_before = len(receiver.accepted)
        assert 10 <= stored_before < len(expected), "killed mid-way"
        assert 0 < len(pending(mixed, receiver.url)) < len(expected)

        done = subprocess.run([*command, "--endpoint", receiver.url], capture_output=True, timeout=120)
        assert done.returncode == 0, done.stderr

    assert set(receiver.accepted) == expected
    assert scalar(mixed, "SELECT count(*) FROM outbox_events WHERE sent_at IS NULL") == 0
    resent = [i for i in expected if receiver.deliveries[i] > 1]
    assert len(resent) <= 1, "only the batch in flight when the push died can arrive twice"


def record(council, session_id: str, consent: int, query: str = PLANTED_QUERY) -> None:
    answers = [{"model": m, "response": f"{PLANTED_ANSWER} {m} " * (i + 1)} for i, m in enumerate("abc")]
    mapping = {f"Response {x}": {"model": m, "display_index": i} for i, (x, m) in enumerate(zip("ABC", "abc"))}
    reviews = [{"model": r, "parsed_ranking": {"ranking": list(mapping),
                                               "scores": {k: 5 + i + j for j, k in enumerate(mapping)}}}
               for i, r in enumerate("abc")]
    council.record_session(session_id, answers, reviews, mapping, query=query, consent_level=consent,
                           timestamp="2025-12-17T10:30:00Z")


@pytest.fixture
def consent_levels(db_path, monkeypatch):
    monkeypatch.setenv("COUNCIL_DB_HMAC_SECRET", "a-team-secret-of-32-characters!!")
    with council_db.connect(str(db_path)) as council:
        for level in (1, 2, 3, 4):
            record(council, f"level-{level}", level)
        yield council.database


def test_only_sessions_at_consent_2_or_more_are_sent_with_the_fields_their_level_allows(consent_levels):
    with Receiver() as receiver:
        push(consent_levels, receiver.url, settings=FAST, sleep=no_sleep)
    events = {e["session_id"]: e for e in receiver.accepted.values()}

    assert set(events) == {"level-2", "level-3", "level-4"}
    assert "query_metadata" not in events["level-2"] and "bias_indicators" not in events["level-2"]
    assert events["level-3"]["query_metadata"] == {"category": "coding", "language": "en", "length_bucket": "medium"}
    assert set(events["level-3"]["bias_indicators"]) == {"length_correlation", "position_variance",
                                                         "reviewer_agreement", "flags"}
    assert "query_hash" not in events["level-3"]
    assert len(events["level-4"]["query_hash"]) == 16
    assert all(e["rankings"] and e["schema_version"] == "1.0" for e in events.values())


def test_no_query_or_answer_text_is_ever_sent(consent_levels):
    with Receiver(failure_rate=0.3, seed=3) as receiver:
        push(consent_levels, receiver.url, settings=PushSettings(batch_size=1, retries=30, backoff=0.001),
             sleep=no_sleep)
    sent = b"".join(receiver.bodies)
    assert len(receiver.accepted) == 3 and sent
    for planted in (PLANTED_QUERY, PLANTED_QUERY[:40], "zebra-4471", "PLANTED"):
        assert planted.encode() not in sent


def test_event_indicators_are_the_audits_per_session_indicators(mixed):
    event = json.loads(build_events(mixed).events[0].payload)
    session = load_sessions(mixed, "SELECT id FROM sessions WHERE session_key = :key", {"key": event["session_id"]})
    audit = audit_data(session)
    indicators = event["bias_indicators"]
    assert indicators["length_correlation"]["r"] == pytest.approx(audit.length.r, abs=1e-6)
    assert indicators["position_variance"] == pytest.approx(audit.position.variance_of_slot_means, abs=1e-6)
    assert -1 <= indicators["reviewer_agreement"] <= 1
    ranking = event["rankings"][0]["ranking"]
    assert [r["score"] for r in ranking] == sorted((r["score"] for r in ranking), reverse=True)


def test_event_ids_follow_the_content_so_a_changed_session_is_a_new_event(consent_levels):
    before = {json.loads(e.payload)["session_id"]: e.event_id for e in build_events(consent_levels).events}
    assert before == {json.loads(e.payload)["session_id"]: e.event_id for e in build_events(consent_levels).events}
    with council_db.connect(consent_levels.url) as council:
        council.record_session("level-3", [{"model": "d", "response": "late"}],
                               [{"model": "d", "parsed_ranking": {"ranking": ["Response D"],
                                                                  "scores": {"Response D": 9}}}],
                               {"Response D": {"model": "d", "display_index": 3}}, consent_level=3,
                               timestamp="2025-12-17T10:30:00Z")
    after = {json.loads(e.payload)["session_id"]: e.event_id for e in build_events(consent_levels).events}
    assert after["level-3"] != before["level-3"] and after["level-2"] == before["level-2"]


def test_dry_run_prints_what_would_go_and_sends_and_queues_nothing(mixed, cli):
    with Receiver() as receiver:
        done = cli("push", "--endpoint", receiver.url, "--dry-run")
    assert done.exit_code == 0, done.output
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert {line["event_id"] for line in lines} == eligible_ids(mixed)
    assert receiver.bodies == []
    assert scalar(mixed, "SELECT count(*) FROM outbox_events") == 0


def test_cli_push_reports_what_it_sent_and_what_stayed_home(mixed, cli):
    with Receiver() as receiver:
        done = cli("push", "--endpoint", receiver.url)
    assert done.exit_code == 0, done.output
    assert "60 events sent" in done.stderr
    assert "320 records below consent level 2 never leave this machine (20 whole sessions)" in done.stderr


@pytest.mark.parametrize("endpoint", ["ftp://example.org/x", "not a url", "http://"])
def test_an_endpoint_that_is_not_an_http_url_is_a_usage_error(db_path, endpoint):
    done = run_module("--db", str(db_path), "push", "--endpoint", endpoint)
    assert done.returncode == 2 and b"not an http(s) URL" in done.stderr


def mixed_consent_session(session_id: str, levels: list[int]) -> list[dict]:
    """A 16-record session whose records carry the given consent levels, in file order."""
    lines = conftest.session(session_id)
    for line, level in zip(lines, levels):
        line["consent_level"] = level
    return lines


@both_backends
def test_each_record_is_sent_only_at_its_own_consent_level(db, tmp_path):
    """The session's first record does not speak for the others: a record at consent 1
    stays home even when its session's first record allows sending, and the event's level
    and fields are those every record it carries allows."""
    path = conftest.write_jsonl(tmp_path / "mixed.jsonl", [
        *mixed_consent_session("first-3-rest-1", [3] + [1] * 15),
        *mixed_consent_session("first-1-rest-3", [1] + [3] * 15),
        *mixed_consent_session("half-2-half-3", [3] * 8 + [2] * 8),
    ])
    import_files(db, [str(path)])
    with Receiver() as receiver:
        result = push(db, receiver.url, settings=FAST, sleep=no_sleep)
    events = {e["session_id"]: e for e in receiver.accepted.values()}

    def scores(event: dict) -> int:
        return sum(len(r["ranking"]) for r in event["rankings"])

    assert {key: scores(event) for key, event in events.items()} == {
        "first-3-rest-1": 1, "first-1-rest-3": 15, "half-2-half-3": 16}
    assert {key: event["consent_level"] for key, event in events.items()} == {
        "first-3-rest-1": 3, "first-1-rest-3": 3, "half-2-half-3": 2}
    assert "bias_indicators" in events["first-1-rest-3"]
    assert "query_metadata" not in events["first-1-rest-3"], "the metadata is the consent-1 record's envelope"
    assert "bias_indicators" not in events["half-2-half-3"] and "query_metadata" not in events["half-2-half-3"]
    assert result.records_held_back == 16


def test_a_reviewer_scoring_its_answers_twice_is_no_reviewer_agreement_in_an_event():
    from council_db.analysis.loading.score_data import from_rows
    from council_db.outlets.push_events import _indicators

    rows = [("one", None, "judge", f"m{m}", m, 100 * (m + 1), float(score))
            for m, score in enumerate([3, 7, 5, 9]) for _ in range(2)]  # each answer scored twice, identically
    indicators = _indicators(from_rows(rows))
    assert indicators["reviewer_agreement"] is None and "agreement_undefined" in indicators["flags"]
