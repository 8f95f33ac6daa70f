"""council-db push authenticates: a bearer token from $COUNCIL_DB_PUSH_TOKEN or a private
file, any other header from a named environment variable; never a value on the command line
(it would stay in shell history and ps). Against a real receiver on 127.0.0.1 that wants the
header, and answers 401 echoing what it got: the token is in no message, log or table."""

from __future__ import annotations

import logging
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from council_db.errors import CouncilDbError
from council_db.ingest.importer import import_files
from council_db.outlets.push import PushSettings, pending, push
from council_db.outlets.push_auth import TOKEN_ENV, Credentials, load_credentials, plain_http_warning
from council_db.simulate import SimulationConfig, write_jsonl
from tests.conftest import run_module, scalar
from tests.telemetry_server import Receiver

TOKEN = "tok-5f1c9e7a2b-team-telemetry"
OTHER_TOKEN = "tok-0000000000-not-the-one"
FAST = PushSettings(batch_size=10, retries=2, backoff=0.001, timeout=5)


@pytest.fixture
def sessions(db_path: Path) -> Path:
    """20 sessions at consent level 3, in a SQLite file."""
    records = db_path.parent / "sim.jsonl"
    with records.open("w") as out:
        write_jsonl(SimulationConfig(sessions=20, seed=5, consent_level=3), out)
    done = run_module("--db", str(db_path), "import", str(records))
    assert done.returncode == 0, done.stderr
    return db_path


def push_cli(db_path: Path, url: str, *options: str, env: dict[str, str] | None = None):
    """council-db push in a real process with this environment added (and no inherited token)."""
    environment = {k: v for k, v in os.environ.items() if k != TOKEN_ENV} | (env or {})
    return subprocess.run([sys.executable, "-m", "council_db", "--db", str(db_path), "push", "--endpoint", url,
                           "--retries", "1", "--backoff", "0.001", *options],
                          capture_output=True, timeout=120, env=environment)


def outbox_text(db_path: Path) -> str:
    """Every row of the outbox, every column, as text."""
    with sqlite3.connect(db_path) as connection:
        return repr(connection.execute("SELECT * FROM outbox_events").fetchall())


def queued(db_path: Path) -> int:
    with sqlite3.connect(db_path) as connection:
        return connection.execute("SELECT count(*) FROM outbox_events").fetchone()[0]


def token_file(folder: Path, mode: int = 0o600, text: str = TOKEN + "\n") -> Path:
    path = folder / "push.token"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_a_bearer_token_from_the_environment_arrives_as_an_authorization_header(sessions):
    with Receiver(require={"Authorization": f"Bearer {TOKEN}"}) as receiver:
        done = push_cli(sessions, receiver.url, env={TOKEN_ENV: TOKEN})

    assert done.returncode == 0, done.stderr
    assert len(receiver.accepted) == 20
    assert {h["authorization"] for h in receiver.headers} == {f"Bearer {TOKEN}"}
    assert TOKEN.encode() not in done.stdout + done.stderr and TOKEN not in outbox_text(sessions)


def test_a_bearer_token_from_a_private_file_arrives(sessions, tmp_path):
    with Receiver(require={"Authorization": f"Bearer {TOKEN}"}) as receiver:
        done = push_cli(sessions, receiver.url, "--token-file", str(token_file(tmp_path)))

    assert done.returncode == 0, done.stderr
    assert len(receiver.accepted) == 20


def test_any_header_comes_from_the_environment_variable_named(sessions):
    with Receiver(require={"X-Api-Key": TOKEN}) as receiver:
        done = push_cli(sessions, receiver.url, "--header-env", "X-Api-Key=TEAM_TELEMETRY_KEY",
                        env={"TEAM_TELEMETRY_KEY": TOKEN})

    assert done.returncode == 0, done.stderr
    assert {h["x-api-key"] for h in receiver.headers} == {TOKEN} and "authorization" not in receiver.headers[0]


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_a_token_file_others_can_read_is_refused_in_one_line_and_nothing_is_sent(sessions, tmp_path, mode):
    path = token_file(tmp_path, mode)
    with Receiver() as receiver:
        done = push_cli(sessions, receiver.url, "--token-file", str(path))

    assert done.returncode == 1 and receiver.bodies == []
    assert done.stderr.decode() == (f"error: --token-file {path} has mode {mode:04o}: others could read or change "
                                    f"the secret; run chmod 600 {path}\n")
    assert queued(sessions) == 0


def test_a_token_file_that_is_a_symlink_is_refused(sessions, tmp_path):
    link = tmp_path / "link.token"
    link.symlink_to(token_file(tmp_path))
    with Receiver() as receiver:
        done = push_cli(sessions, receiver.url, "--token-file", str(link))

    assert done.returncode == 1 and receiver.bodies == []
    assert done.stderr.decode() == f"error: --token-file {link} is a symlink; point it at the file itself\n"


def test_a_401_is_reported_clearly_the_events_stay_queued_and_the_token_is_nowhere(sessions):
    with Receiver(require={"Authorization": f"Bearer {OTHER_TOKEN}"}) as receiver:
        done = push_cli(sessions, receiver.url, env={TOKEN_ENV: TOKEN})

    stderr = done.stderr.decode()
    assert done.returncode == 1 and len(receiver.bodies) == 1, "a 401 is not retried"
    assert receiver.headers[0]["authorization"] == f"Bearer {TOKEN}"
    assert stderr.count("\n") == 1 and "HTTP 401 Unauthorized" in stderr
    assert f"did not accept the credentials from ${TOKEN_ENV}" in stderr and "stay queued" in stderr
    assert "got" not in stderr, "the receiver's answer, which echoed the token, is not shown"
    assert TOKEN not in stderr + done.stdout.decode()
    assert TOKEN not in outbox_text(sessions) and "'HTTP 401 Unauthorized'" in outbox_text(sessions)
    with Receiver() as receiver:  # every event stayed queued: a later push sends them all
        assert push_cli(sessions, receiver.url).returncode == 0
    assert len(receiver.accepted) == 20


def test_a_401_without_credentials_says_how_to_give_them(sessions):
    with Receiver(require={"Authorization": f"Bearer {TOKEN}"}) as receiver:
        done = push_cli(sessions, receiver.url)

    assert done.returncode == 1
    assert f"no credentials were given: set ${TOKEN_ENV}, or give --token-file or --header-env" in done.stderr.decode()


def test_the_library_logs_no_token_even_at_debug_level(db, tmp_path, caplog):
    records = tmp_path / "sim.jsonl"
    with records.open("w") as out:
        write_jsonl(SimulationConfig(sessions=5, seed=6, consent_level=3), out)
    import_files(db, [str(records)])
    credentials = Credentials({"Authorization": f"Bearer {TOKEN}"}, "a test", (TOKEN,))
    caplog.set_level(logging.DEBUG)
    with Receiver(require={"Authorization": f"Bearer {OTHER_TOKEN}"}) as receiver:
        with pytest.raises(CouncilDbError) as refused:
            push(db, receiver.url, settings=FAST, credentials=credentials, sleep=lambda _: None)

    assert TOKEN not in str(refused.value) and TOKEN not in repr(credentials)
    assert caplog.records and TOKEN not in caplog.text
    assert len(pending(db, receiver.url)) == 5
    assert TOKEN not in str(scalar(db, "SELECT group_concat(last_error) FROM outbox_events"))


def test_a_token_is_never_taken_from_the_command_line(sessions):
    done = run_module("--db", str(sessions), "push", "--endpoint", "http://127.0.0.1:9/x", "--token", TOKEN)
    assert done.returncode == 2 and b"No such option" in done.stderr


def test_a_password_in_the_endpoint_url_is_refused_without_repeating_it(sessions):
    done = run_module("--db", str(sessions), "push", "--endpoint", f"https://team:{TOKEN}@telemetry.example/v1")

    assert done.returncode == 2 and TOKEN.encode() not in done.stderr
    assert b"a user name or password in the URL" in done.stderr and queued(sessions) == 0


@pytest.mark.parametrize(("env", "options", "problem"), [
    ({TOKEN_ENV: TOKEN}, ["--token-file", "TOKEN_FILE"], f"both ${TOKEN_ENV} and --token-file give a token"),
    ({TOKEN_ENV: TOKEN, "KEY": "x" * 20}, ["--header-env", "authorization=KEY"],
     "--header-env authorization=KEY: the token already sets Authorization"),
    ({}, ["--header-env", "X-Api-Key=UNSET_VARIABLE_FOR_TEST"], "$UNSET_VARIABLE_FOR_TEST is not set or empty"),
    ({}, ["--header-env", "X-Api-Key"], "--header-env X-Api-Key: give NAME=VARIABLE"),
    ({}, ["--header-env", "Bad Header=KEY"], "--header-env Bad Header=KEY: 'Bad Header' is not a header name"),
    ({TOKEN_ENV: TOKEN + "\nX-Injected: 1"}, [], f"${TOKEN_ENV} holds a line break or control character"),
])
def test_credentials_given_wrongly_are_one_clear_line(sessions, tmp_path, env, options, problem):
    options = [str(token_file(tmp_path)) if option == "TOKEN_FILE" else option for option in options]
    done = push_cli(sessions, "http://127.0.0.1:9/v1/events", *options, env=env)

    stderr = done.stderr.decode()
    assert done.returncode in (1, 2) and stderr.count("\n") == 1 and problem in stderr, stderr
    assert TOKEN not in stderr and queued(sessions) == 0


def test_an_empty_token_file_is_refused(tmp_path):
    with pytest.raises(CouncilDbError, match="is empty"):
        load_credentials(token_file=token_file(tmp_path, text="\n"), environ={})


def test_credentials_over_plain_http_to_another_machine_get_a_warning():
    credentials = load_credentials(environ={TOKEN_ENV: TOKEN})

    assert "plain http" in plain_http_warning("http://telemetry.example/v1", credentials)
    assert plain_http_warning("https://telemetry.example/v1", credentials) is None
    assert plain_http_warning("http://127.0.0.1:8080/v1", credentials) is None
    assert plain_http_warning("http://localhost/v1", credentials) is None
    assert plain_http_warning("http://telemetry.example/v1", load_credentials(environ={})) is None
