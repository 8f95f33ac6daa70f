"""council-db watch against a real webhook on 127.0.0.1: an alert when a rule starts failing,
none while nothing changes, one when it recovers; a failed delivery sent again with the same id,
a redirect never followed, the token sent as a header and never in a body, no query text, path
or URL in what leaves; exit codes 0 / 1 / 2 / 3; the state on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from pathlib import Path

import pytest

import council_db
from council_db.errors import CouncilDbError
from council_db.outlets.push_auth import TOKEN_ENV
from tests.conftest import Cli, both_backends, run_module, scalar, simulated, write_jsonl
from tests.telemetry_server import Receiver

HARSH = "openai/gpt-4o"
BEFORE = ["--until", "2025-06-02"]  # 100 sessions where HARSH is a point harsher than the others
AFTER = ["--since", "2025-08-01"]  # 100 sessions where it is not
RULE = ["--severity-max", "0.5", "--retries", "2", "--backoff", "0"]
TOKEN = "PLANTED-TOKEN-6a1f0c"
PLANTED_QUERY = "PLANTED-QUERY what did my doctor say about zebra-4471"


def _import(cli: Cli, tmp: Path) -> None:
    """HARSH a point harsher in May 2025 (the judge upgrade to alert on), no bias in August."""
    harsh, _ = simulated(sessions=100, seed=12, reviewer_offsets={HARSH: -1.0}, end=datetime(2025, 6, 1), days=30)
    clean, _ = simulated(sessions=100, seed=11, end=datetime(2025, 9, 1), days=30)
    for name, records in (("harsh", harsh), ("clean", clean)):
        result = cli("import", str(write_jsonl(tmp / f"{name}.jsonl", records)))
        assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Cli:
    """One database for the module; each test watches it under a name of its own (its own state)."""
    tmp = tmp_path_factory.mktemp("watch")
    cli = Cli(tmp / "judges.db")
    _import(cli, tmp)
    return cli


def code(result) -> int:
    """The exit code council-db's main() gives: a CouncilDbError's own (Cli runs the app in-process)."""
    return result.exception.exit_code if isinstance(result.exception, CouncilDbError) else result.exit_code


def said(result) -> str:
    """What the user reads on stderr, the error line included."""
    return result.stderr + (f"error: {result.exception}" if isinstance(result.exception, CouncilDbError) else "")


def alerts(receiver: Receiver) -> list[dict]:
    return [json.loads(body) for body in receiver.bodies]


def test_a_rule_that_starts_failing_is_sent_once_and_its_recovery_once(store):
    with Receiver() as receiver:
        first = store("watch", "--webhook", receiver.url, "--name", "upgrade", *RULE, *BEFORE)
        again = store("watch", "--webhook", receiver.url, "--name", "upgrade", *RULE, *BEFORE)
        sent_before_recovery = len(receiver.bodies)
        recovered = store("watch", "--webhook", receiver.url, "--name", "upgrade", *RULE, *AFTER)
        quiet = store("watch", "--webhook", receiver.url, "--name", "upgrade", *RULE, *AFTER)

    assert (first.exit_code, again.exit_code, recovered.exit_code, quiet.exit_code) == (1, 1, 0, 0), first.output
    assert sent_before_recovery == 1, "the same failing state is never sent again"
    failing, recovery = alerts(receiver)
    assert (failing["event"], failing["subject"], failing["status"]) == ("failing", HARSH, {"old": None, "new": "fail"})
    assert failing["rule"] == {"rule": "severity-max", "limit": 0.5, "on": "ci"}
    figure = failing["figure"]
    assert figure["ci_high"] < -0.5 and figure["ci_low"] < figure["estimate"] < figure["ci_high"]
    assert figure["n_sessions"] == failing["window"]["sessions"] == 100
    assert failing["window"]["end"].startswith("2025-05") and failing["watch"] == "upgrade"
    assert failing["database"]["name"] == "judges.db" and len(failing["database"]["fingerprint"]) == 16
    assert failing["council_db_version"] == council_db.__version__ and len(failing["alert_id"]) == 64
    assert (recovery["event"], recovery["subject"], recovery["status"]) == ("recovered", HARSH,
                                                                            {"old": "fail", "new": "pass"})
    assert recovery["figure"]["ci_low"] > -0.5 and recovery["alert_id"] != failing["alert_id"]
    assert "FAIL  severity-max  openai/gpt-4o" in first.stdout
    assert "1 alert sent to 127.0.0.1 (1 request)" in first.stderr


def test_an_answer_500_is_retried_and_the_alert_arrives_once(store):
    with Receiver(script=[500]) as receiver:
        result = store("watch", "--webhook", receiver.url, "--name", "retried", *RULE, *BEFORE)
        again = store("watch", "--webhook", receiver.url, "--name", "retried", *RULE, *BEFORE)

    assert (result.exit_code, again.exit_code) == (1, 1), result.output
    assert len(receiver.bodies) == 2 and receiver.bodies[0] == receiver.bodies[1]


def test_an_alert_never_delivered_exits_3_and_leaves_the_failing_state_unknown(store):
    with Receiver(status=503) as down:
        failed = store("watch", "--webhook", down.url, "--name", "undelivered", *RULE, *BEFORE)

    assert code(failed) == 3, failed.output
    assert "gave up after 3 attempts (HTTP 503 Service Unavailable)" in said(failed)
    assert "1 of 1 alert not delivered, left due for the next council-db watch" in said(failed)
    assert len(down.bodies) == 3
    kept = sqlite3.connect(store.db).execute("SELECT subject, status FROM watch_state WHERE watch = 'undelivered'")
    assert HARSH not in {subject for subject, _ in kept}, "only the passing outcomes (no alert due) are remembered"


def test_a_failed_delivery_to_the_same_webhook_is_sent_again_with_the_same_alert_id(store):
    with Receiver(script=[503, 503, 503]) as receiver:
        failed = store("watch", "--webhook", receiver.url, "--name", "same-id", *RULE, *BEFORE)
        resent = store("watch", "--webhook", receiver.url, "--name", "same-id", *RULE, *BEFORE)
        settled = store("watch", "--webhook", receiver.url, "--name", "same-id", *RULE, *BEFORE)

    assert (code(failed), code(resent), code(settled)) == (3, 1, 1), failed.output
    attempts = alerts(receiver)
    assert len(attempts) == 4, "three refused attempts, one accepted resend, then nothing"
    assert len({a["alert_id"] for a in attempts}) == 1


def test_a_redirect_is_not_followed_and_the_alert_stays_due(store):
    with Receiver(script=[302]) as receiver:
        moved = store("watch", "--webhook", receiver.url, "--name", "moved", *RULE, *BEFORE)
        later = store("watch", "--webhook", receiver.url, "--name", "moved", *RULE, *BEFORE)

    assert code(moved) == 3 and "refused an alert: HTTP 302 Found" in said(moved), moved.output
    assert receiver.paths == ["/v1/events", "/v1/events"], "the redirect's /moved was never asked for"
    assert later.exit_code == 1 and alerts(receiver)[0]["alert_id"] == alerts(receiver)[1]["alert_id"]


def test_the_token_goes_as_a_header_and_no_token_query_text_path_or_url_is_in_what_leaves(tmp_path, monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    monkeypatch.setenv("COUNCIL_DB_HMAC_SECRET", "a-team-secret-of-32-characters!!")
    path = tmp_path / "private-folder" / "council.db"
    path.parent.mkdir()
    with council_db.connect(str(path)) as council:
        for number in range(3):
            answers = [{"model": m, "response": f"{PLANTED_QUERY} answer {m}"} for m in "abc"]
            mapping = {f"Response {x}": {"model": m, "display_index": i} for i, (x, m) in enumerate(zip("ABC", "abc"))}
            reviews = [{"model": r, "parsed_ranking": {"ranking": list(mapping),
                                                       "scores": {k: 5 + i + j for j, k in enumerate(mapping)}}}
                       for i, r in enumerate("abc")]
            council.record_session(f"s-{number}", answers, reviews, mapping, query=PLANTED_QUERY, consent_level=4,
                                   timestamp="2025-12-17T10:30:00Z")
    cli = Cli(path)
    with Receiver(require={"Authorization": f"Bearer {TOKEN}"}) as receiver:
        url = receiver.url + "/T0SECRET/B0PATH"
        json_run = cli("watch", "--webhook", url, "--name", "private", "--min-sessions", "10")
        slack_run = cli("watch", "--webhook", url, "--name", "private-slack", "--min-sessions", "10", "--slack")

    assert (json_run.exit_code, slack_run.exit_code) == (1, 1), json_run.output
    assert all(h["authorization"] == f"Bearer {TOKEN}" for h in receiver.headers) and len(receiver.bodies) == 2
    sent = b"".join(receiver.bodies)
    for planted in (TOKEN, PLANTED_QUERY, "zebra-4471", str(tmp_path), "private-folder", "T0SECRET", "127.0.0.1"):
        assert planted.encode() not in sent, planted
    for said in (json_run.stderr, slack_run.stderr):
        assert TOKEN not in said and "T0SECRET" not in said
    slack = json.loads(receiver.bodies[1])
    assert list(slack) == ["text"] and "min-sessions window :red_circle: started failing" in slack["text"]
    assert "3 sessions &lt; 10" in slack["text"] and "council.db" in slack["text"]  # Slack's escaping of <


def test_dry_run_prints_the_due_alerts_and_sends_and_remembers_nothing(store):
    with Receiver() as receiver:
        dry = store("watch", "--webhook", receiver.url, "--name", "dry", *RULE, *BEFORE, "--dry-run")
        real = store("watch", "--webhook", receiver.url, "--name", "dry", *RULE, *BEFORE)

    assert dry.exit_code == 1 and "1 alert would go to 127.0.0.1" in dry.stderr, dry.output
    printed = [json.loads(line) for line in dry.stdout.splitlines()]
    assert [(a["event"], a["subject"]) for a in printed] == [("failing", HARSH)]
    assert len(receiver.bodies) == 1 and json.loads(receiver.bodies[0])["alert_id"] == printed[0]["alert_id"]
    assert real.exit_code == 1


def test_the_webhook_can_come_from_the_environment_and_the_url_is_never_printed(store, monkeypatch):
    """A Slack webhook's URL is its secret: $COUNCIL_DB_WEBHOOK keeps it off the command line."""
    with Receiver() as receiver:
        monkeypatch.setenv("COUNCIL_DB_WEBHOOK", receiver.url + "/T0SECRETPATH")
        result = store("watch", "--name", "from-env", *RULE, *BEFORE)

    assert result.exit_code == 1, result.output
    assert [(a["event"], a["subject"]) for a in alerts(receiver)] == [("failing", HARSH)]
    assert "T0SECRETPATH" not in result.output + result.stderr


def test_a_mistyped_webhook_url_is_refused_without_printing_its_secret_path(store, monkeypatch):
    monkeypatch.setenv("COUNCIL_DB_WEBHOOK", "hooks.slack.com/services/T0SECRETPATH")
    result = store("watch", "--name", "typo", *RULE, *BEFORE)

    assert code(result) == 2
    assert "--webhook: not an http(s) URL (it does not start with http:// or https://)" in said(result)
    assert "T0SECRETPATH" not in result.output + said(result)


@pytest.mark.parametrize("args, message", [
    (["--severity-max", "0.5"], "Missing option '--webhook'"),
    (["--webhook", "ftp://example.org/hook"], "--webhook: not an http(s) URL (its scheme is 'ftp')"),
    (["--webhook", "https://user:pw@example.org/hook"], "--webhook: a user name or password in the URL"),
    (["--webhook", "http://127.0.0.1:9/hook", "--name", " "], "--name is empty"),
    (["--webhook", "http://127.0.0.1:9/hook", "--severity-max", "-1"], "--severity-max is -1.0: give a bound above 0"),
    (["--webhook", "http://127.0.0.1:9/hook", "--since", "2030-01-01"], "no session"),
])
def test_usage_and_data_errors_exit_2_naming_the_option(store, args, message):
    result = store("watch", *args)

    assert code(result) == 2, result.output
    assert message in result.output + said(result)


def test_every_rule_passing_exits_0_and_sends_nothing_on_a_first_run(store):
    with Receiver() as receiver:
        result = store("watch", "--webhook", receiver.url, "--name", "clean", *RULE, *AFTER)
    assert result.exit_code == 0 and receiver.bodies == [], result.output


@both_backends
def test_the_state_is_kept_and_read_back_on_both_backends(cli, db, tmp_path):
    _import(cli, tmp_path)
    with Receiver() as receiver:
        first = cli("watch", "--webhook", receiver.url, *RULE, *BEFORE)
        again = cli("watch", "--webhook", receiver.url, *RULE, *BEFORE)
        recovered = cli("watch", "--webhook", receiver.url, *RULE, *AFTER)

    assert (first.exit_code, again.exit_code, recovered.exit_code) == (1, 1, 0), first.output
    assert [a["event"] for a in alerts(receiver)] == ["failing", "recovered"]
    assert scalar(db, "SELECT count(*) FROM watch_state WHERE status = 'pass'") == 4
    assert scalar(db, f"SELECT alert_id FROM watch_state WHERE subject = '{HARSH}'") == alerts(receiver)[1]["alert_id"]


def test_in_a_real_process_errors_are_one_line_on_stderr_with_exit_2_and_3(store):
    usage = run_module("--db", store.db, "watch", "--webhook", "ftp://example.org/hook")
    with Receiver(status=503) as down:
        undelivered = run_module("--db", store.db, "watch", "--webhook", down.url, "--name", "process", *RULE,
                                 *BEFORE)

    assert usage.returncode == 2 and usage.stderr.decode().count("\n") == 1, usage.stderr
    assert undelivered.returncode == 3 and undelivered.stderr.decode().startswith("error: 127.0.0.1: gave up")
    assert b"Traceback" not in usage.stderr + undelivered.stderr


def test_a_webhook_refusing_the_credentials_is_told_apart_from_a_missing_token(store):
    with Receiver(require={"Authorization": "Bearer other"}) as receiver:
        refused = store("watch", "--webhook", receiver.url, "--name", "refused", *RULE, *BEFORE)

    assert code(refused) == 3 and len(receiver.bodies) == 1, refused.output
    assert "refused an alert: HTTP 401 Unauthorized; no credentials were given" in said(refused)
