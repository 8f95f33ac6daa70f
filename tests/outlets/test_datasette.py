"""Real Datasette, started on 127.0.0.1 as the README says, serves every view of a filled
database with the titles and descriptions of the shipped metadata file."""

from __future__ import annotations

import html
import json
import re
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from council_db.outlets.datasette_metadata import shipped
from tests.conftest import record, run_module, write_jsonl

VIEWS = ["score_records", "session_summaries", "within_session_scores", "slot_means", "reviewer_profiles",
         "reviewer_daily", "daily_scores", "model_profiles", "dimension_records", "reviewer_identities"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_serving(client: httpx.Client, server: subprocess.Popen, log: Callable[[], str]) -> None:
    """Until the Datasette ``server`` answers ``client`` (at most 60 s); its ``log`` if it dies."""
    deadline = time.monotonic() + 60
    while True:
        try:
            if client.get("/-/versions.json").status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert server.poll() is None, log()
        assert time.monotonic() < deadline, "datasette did not start within 60 s"
        time.sleep(0.2)


@contextmanager
def datasette(folder: Path, *args: str) -> Iterator[httpx.Client]:
    """A real `datasette serve ARGS` on a free port of 127.0.0.1, and a client of it. Its output
    goes to a file, not a pipe: Datasette prints every error page's exception, and a pipe nobody
    reads fills up and stops the server."""
    port, log_path = free_port(), folder / "datasette.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen([sys.executable, "-m", "datasette", "serve", *args,
                                   "--host", "127.0.0.1", "--port", str(port)], stdout=log, stderr=subprocess.STDOUT)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
                wait_until_serving(client, server, log_path.read_text)
                yield client
        finally:
            server.terminate()
            server.wait(timeout=30)


def output(*args: str) -> str:
    result = run_module(*args)
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout.decode().strip()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A simulated, imported council.db served by `datasette serve` with `council-db db metadata`."""
    folder = tmp_path_factory.mktemp("datasette")
    db = folder / "council.db"
    output("simulate", "-o", str(folder / "sim.jsonl"), "--sessions", "40", "--days", "5",
           "--dimensions", "accuracy,clarity")  # a rubric: dimension_records has rows
    output("--db", str(db), "import", str(folder / "sim.jsonl"))
    judged = [record(session_id=f"prompted-{n}", model_id=f"m{n}", reviewer_prompt=f"single-v{n}",
                     reviewer_temperature=0.7, reviewer_seed=n) for n in range(2)]  # two identities of one model
    output("--db", str(db), "import", str(write_jsonl(folder / "prompted.jsonl", judged)))
    path, metadata = output("--db", str(db), "db", "path"), output("--db", str(db), "db", "metadata")
    with datasette(folder, path, "-m", metadata) as client:
        yield client, Path(path), Path(metadata)


def test_the_metadata_file_is_the_one_shipped_in_the_package(served):
    client, _, metadata = served

    assert metadata == shipped()
    assert client.get("/-/metadata.json").json() == json.loads(shipped().read_text())


@pytest.mark.parametrize("view", VIEWS)
def test_every_view_is_served_as_json_with_the_rows_sqlite_gives(served, view):
    client, path, _ = served
    table = json.loads(shipped().read_text())["databases"]["council"]["tables"][view]
    order = f" ORDER BY {table['sort']}" if "sort" in table else (
        f" ORDER BY {table['sort_desc']} DESC" if "sort_desc" in table else "")
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    connection.row_factory = sqlite3.Row
    try:
        expected = [dict(row) for row in connection.execute(f"SELECT * FROM {view}{order}")]
    finally:
        connection.close()

    response = client.get(f"/council/{view}.json", params={"_shape": "array", "_size": "max"})

    assert response.status_code == 200, response.text
    assert expected, f"{view} is empty: the test database should fill every view"
    served_rows = response.json()
    if len(expected) <= 1000:  # Datasette's default page size
        assert len(served_rows) == len(expected)
    if order:  # in the metadata's order; rows that tie on it may come in any order
        assert sorted(map(json.dumps, served_rows)) == sorted(map(json.dumps, expected[:len(served_rows)]))
        column = table.get("sort") or table["sort_desc"]
        assert [r[column] for r in served_rows] == [r[column] for r in expected[:len(served_rows)]]
    else:
        assert served_rows == expected[:len(served_rows)]


@pytest.mark.parametrize("view", VIEWS)
def test_every_view_page_shows_its_title_and_descriptions(served, view):
    client, _, _ = served
    table = json.loads(shipped().read_text())["databases"]["council"]["tables"][view]

    page = client.get(f"/council/{view}")

    assert page.status_code == 200
    text = html.unescape(page.text)
    assert f"<h1>{table['title']} (view)</h1>" in text
    assert table["description"] in text
    for column, description in table["columns"].items():
        assert f"<dt>{column}</dt><dd>{description}</dd>" in text


def test_a_database_with_another_name_gets_metadata_keyed_by_that_name(tmp_path, monkeypatch):
    env_cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(env_cache))
    from council_db.outlets.datasette_metadata import for_database

    metadata = for_database(tmp_path / "team-scores.db")

    assert metadata.is_relative_to(env_cache)
    content = json.loads(metadata.read_text())
    assert list(content["databases"]) == ["team-scores"]
    assert content["databases"]["team-scores"] == json.loads(shipped().read_text())["databases"]["council"]
    assert for_database(tmp_path / "team-scores.db") == metadata


def test_the_database_description_says_where_the_views_are_and_they_are_there(served):
    """Datasette lists a database's canned queries, then its tables, then its views."""
    client, _, _ = served
    description = json.loads(shipped().read_text())["databases"]["council"]["description"]

    page = client.get("/council").text

    assert re.findall(r'<h2 id="(\w+)"', page)[-1] == "views"
    assert description.startswith("Start with the views, the last list on this page:")
    assert description in html.unescape(page)
