"""The report is a function of the records, not of the store: above the sample size, the
sample is chosen by a hash of each session's key, and records come in an order the data
fixes, so stores holding the same records (imported in another order, after ids were used
up, on another backend) give byte-identical JSON for everything the sample decides. The
whole-window length correlations are SQL sums over every session, added in the order the
store keeps them: they agree to the last few bits of a double."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from council_db.store.key_hash import key_hash
from tests.conftest import Cli, same_numbers, simulated, write_jsonl

SESSIONS = 120
SAMPLE = 40  # far below the window: the sample decides most of the report


@pytest.fixture(scope="module")
def records() -> list[dict]:
    """Sessions stamped in batches of 4 (tied times, as judge runs write them) with planted
    biases, so that every section of the report has numbers to differ in."""
    found, _ = simulated(sessions=SESSIONS, seed=27, days=60, batch_size=4, reviewer_offsets={"openai/gpt-4o": 0.5},
                         position_effects=[0.3], self_preference=0.4, verbosity=0.2)
    return found


def in_session_order(records: list[dict], order: list[str]) -> list[dict]:
    """The records, their sessions in ``order``, each session's lines reversed."""
    by_session: dict[str, list[dict]] = {}
    for line in records:
        by_session.setdefault(line["session_id"], []).append(line)
    return [line for key in order for line in reversed(by_session[key])]


WHOLE_WINDOW = ("headline", "naive_pooled_r", "fixed_effect_r", "random_effects_r", "heterogeneity")


def report_json(cli: Cli, *files: Path) -> tuple[str, dict]:
    """The report's JSON less the time it was made, and apart its whole-window sums."""
    for path in files:
        assert cli("import", "-q", str(path)).exit_code == 0
    result = cli("bias-report", "--format", "json", "--sample-sessions", str(SAMPLE), "--as-of", "2100-01-01")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["window"]["sample"]["of"] == SESSIONS
    del report["generated_at"]
    sums = {name: report["length"].pop(name) for name in WHOLE_WINDOW}
    return json.dumps(report, indent=1), sums


def test_stores_with_the_same_records_in_another_order_give_byte_identical_reports(records, tmp_path, pg_url):
    keys = list(dict.fromkeys(line["session_id"] for line in records))
    forward = write_jsonl(tmp_path / "forward.jsonl", records)
    backward = write_jsonl(tmp_path / "backward.jsonl", in_session_order(records, keys[::-1]))
    # another store first held other sessions, then lost them: its ids start far from 1
    half = len(keys) // 2
    first = write_jsonl(tmp_path / "first.jsonl", in_session_order(records, keys[half:]))
    then = write_jsonl(tmp_path / "then.jsonl", in_session_order(records, keys[:half]))
    (a, a_sums), (b, b_sums), (pg, pg_sums) = (report_json(Cli(f"sqlite:///{tmp_path / 'a.db'}"), forward),
                                               report_json(Cli(f"sqlite:///{tmp_path / 'b.db'}"), backward),
                                               report_json(Cli(pg_url), first, then))
    assert b == a
    assert pg == a
    assert same_numbers(b_sums, a_sums) and same_numbers(pg_sums, a_sums)


def test_the_sample_is_the_sessions_whose_key_hash_is_below_the_share(records, tmp_path):
    cli = Cli(f"sqlite:///{tmp_path / 'a.db'}")
    assert cli("import", "-q", str(write_jsonl(tmp_path / "in.jsonl", records))).exit_code == 0
    report = json.loads(cli("bias-report", "--format", "json", "--sample-sessions", str(SAMPLE)).stdout)
    keys = set(line["session_id"] for line in records)
    expected = {key for key in keys if key_hash(key) < int(SAMPLE / SESSIONS * 2 ** 32)}
    assert report["window"]["sample"]["sessions"] == len(expected)
    assert "hash" in report["window"]["sample"]["method"]


def test_the_key_hash_is_the_first_32_bits_of_the_keys_md5():
    assert key_hash("") == 0xD41D8CD9  # md5("") = d41d8cd98f00b204e9800998ecf8427e
    assert key_hash("é") == int.from_bytes(hashlib.md5("é".encode()).digest()[:4], "big")


def stored_hashes(url: str) -> dict[str, int | None]:
    from sqlalchemy import create_engine, text

    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as connection:
            return dict(connection.execute(text("SELECT session_key, key_hash FROM sessions")).all())
    finally:
        engine.dispose()


def test_every_session_stores_its_key_hash_on_either_backend(records, tmp_path, db_url):
    """The report reads the stored hash (hashing a million keys per report cost a second)."""
    cli = Cli(db_url)
    assert cli("import", "-q", str(write_jsonl(tmp_path / "in.jsonl", records))).exit_code == 0
    stored = stored_hashes(db_url)
    assert len(stored) == SESSIONS and stored == {key: key_hash(key) for key in stored}


def test_a_session_written_without_its_hash_by_another_tool_is_sampled_by_its_key(records, tmp_path):
    import sqlite3

    path = tmp_path / "a.db"
    cli = Cli(f"sqlite:///{path}")
    assert cli("import", "-q", str(write_jsonl(tmp_path / "in.jsonl", records))).exit_code == 0
    before, _ = report_json(cli)
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE sessions SET key_hash = NULL WHERE id % 2 = 0")
    after, _ = report_json(cli)
    assert after == before
