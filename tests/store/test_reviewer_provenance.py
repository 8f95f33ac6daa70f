"""Judge provenance (issue 30, item 5): a reviewer is its model plus, where a line says so, its
prompt template, temperature and seed. Two prompts of one model are two reviewers everywhere,
named by one label; self-preference still matches a judge to its own answers by the model; the
three fields come back on export, through a copy, and a line without them is stored and
exported as before. Real SQLite files and the real PostgreSQL fixture."""

from __future__ import annotations

import json
import sqlite3

import pytest

from council_db.analysis.loading.window import load_sessions
from council_db.contract.reviewer_identity import Identity
from tests.conftest import Cli, both_backends, record, scalar, session, write_jsonl

ALL_SESSIONS = "SELECT id FROM sessions"
JUDGE = "vendor/model-0"  # a council member that also answers: its own answers are self-reviews


def prompted(key: str, prompt: str, **provenance) -> list[dict]:
    """A 4x4 session whose judge vendor/model-0 states its prompt (and any other provenance)."""
    lines = session(key)
    for line in lines:
        if line["reviewer_id"] == JUDGE:
            line.update(reviewer_prompt=prompt, **provenance)
    return lines


def sessions(prompt: str | None, count: int = 6) -> list[dict]:
    """``count`` sessions (enough for the report's reviewers) whose judge states ``prompt`` (None: no provenance)."""
    return [line for n in range(count) for line in (session(f"{prompt}-{n}") if prompt is None
                                                     else prompted(f"{prompt}-{n}", prompt))]


def exported(cli: Cli, *args: str) -> list[str]:
    result = cli("export", *args)
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


def names(db, sql: str) -> set:
    with db.engine.connect() as connection:
        return set(connection.exec_driver_sql(sql).scalars())


@pytest.mark.parametrize("identity, label", [
    (Identity("gpt-4"), "gpt-4"),
    (Identity("gpt-4", prompt="single-v1"), "gpt-4 · prompt single-v1"),
    (Identity("gpt-4", temperature=0.0, seed=7), "gpt-4 · T=0 · seed 7"),
    (Identity("gpt-4", "pair-v2", 0.7, -3), "gpt-4 · prompt pair-v2 · T=0.7 · seed -3"),
    (Identity("gpt-4", temperature=1e-05), "gpt-4 · T=1e-05"),
    (Identity("gpt-4", temperature=0.30000000000000004), "gpt-4 · T=0.30000000000000004"),
])
def test_the_label_is_the_model_then_each_known_part_in_a_fixed_order_with_the_temperature_exact(identity, label):
    assert identity.label == label and identity.plain == (label == "gpt-4")


@both_backends
def test_provenance_round_trips_through_export_and_a_line_without_it_stays_byte_identical(tmp_path, cli, db):
    plain = session("plain")
    given = prompted("a", "single-v1", reviewer_temperature=0.0, reviewer_seed=7) + prompted("b", "single-v2")
    later = [record(session_id="plain", reviewer_id="late/judge", model_id="vendor/model-1", position=1,
                    reviewer_prompt="single-v1", reviewer_seed=2**63 - 1)]  # added to a stored session
    assert cli("import", str(write_jsonl(tmp_path / "a.jsonl", plain + given))).exit_code == 0
    assert cli("import", str(write_jsonl(tmp_path / "b.jsonl", later))).exit_code == 0
    lines = exported(cli)
    assert sorted(map(json.loads, lines), key=json.dumps) == sorted(plain + given + later, key=json.dumps)
    assert {json.dumps(line, ensure_ascii=False) for line in plain} <= set(lines)  # byte for byte
    copy = Cli(tmp_path / "again.db")
    assert copy("import", str(write_jsonl(tmp_path / "out.jsonl", lines))).exit_code == 0
    assert exported(copy) == lines
    assert names(db, "SELECT name FROM models WHERE model_of IS NOT NULL") == {
        "vendor/model-0 · prompt single-v1 · T=0 · seed 7", "vendor/model-0 · prompt single-v2",
        f"late/judge · prompt single-v1 · seed {2**63 - 1}"}


@both_backends
def test_two_prompts_of_one_model_are_two_reviewers_and_its_own_answers_stay_self_reviews(tmp_path, cli, db):
    lines = sessions("p1") + sessions("p2") + sessions(None)
    assert cli("import", str(write_jsonl(tmp_path / "a.jsonl", lines))).exit_code == 0
    data = load_sessions(db, ALL_SESSIONS, {})
    assert {"vendor/model-0", "vendor/model-0 · prompt p1", "vendor/model-0 · prompt p2"} <= set(data.reviewers)
    own = [data.reviewers[r] for r, m, self_review in zip(data.reviewer, data.model, data.self_review)
           if data.models[m] == JUDGE and self_review]
    assert sorted(set(own)) == ["vendor/model-0", "vendor/model-0 · prompt p1", "vendor/model-0 · prompt p2"]
    assert data.judge_model("vendor/model-0 · prompt p1") == JUDGE
    assert scalar(db, "SELECT COUNT(*) FROM scores WHERE self_review") == 18 * 4  # each session's 4 judges
    report = json.loads(cli("bias-report", "--format", "json").stdout)
    identities = {r["reviewer_id"]: r.get("identity") for r in report["reviewers"]}
    assert identities["vendor/model-0 · prompt p1"] == {"model": JUDGE, "prompt": "p1", "temperature": None,
                                                         "seed": None}
    assert identities["vendor/model-0"] is None  # no key: a reviewer without provenance reads as before


def test_reviewer_matches_a_models_every_identity_or_one_full_label(tmp_path):
    cli = Cli(tmp_path / "council.db")
    lines = sessions("p1") + sessions("p2") + sessions(None)
    assert cli("import", str(write_jsonl(tmp_path / "a.jsonl", lines))).exit_code == 0

    def reviewers(*args: str) -> set[str]:
        result = cli("bias-report", "--format", "json", *args)
        assert result.exit_code == 0, result.output
        return {r["reviewer_id"] for r in json.loads(result.stdout)["reviewers"]}

    both = {"vendor/model-0", "vendor/model-0 · prompt p1", "vendor/model-0 · prompt p2"}
    assert reviewers("--reviewer", JUDGE, "--reviewer", "vendor/model-1") == both | {"vendor/model-1"}
    assert reviewers("--reviewer", "vendor/model-0 · prompt p2", "--reviewer", "vendor/model-1") == {
        "vendor/model-0 · prompt p2", "vendor/model-1"}
    assert len(exported(cli, "--reviewer", JUDGE)) == 18 * 4
    assert {json.loads(line).get("reviewer_prompt") for line in exported(cli, "--reviewer",
                                                                         "vendor/model-0 · prompt p1")} == {"p1"}


@both_backends
def test_a_copy_keeps_provenance_and_deleting_leaves_a_database_that_checks_clean(tmp_path, cli, db, db_url):
    laptop = Cli(tmp_path / "laptop.db")
    lines = prompted("a", "p1", reviewer_temperature=0.2) + prompted("b", "p2", consent_level=2)
    assert laptop("import", str(write_jsonl(tmp_path / "a.jsonl", lines))).exit_code == 0
    assert laptop("db", "copy", "--to", db_url, "--min-consent", "1").exit_code == 0
    assert exported(cli) == exported(laptop)
    assert cli("delete", "--session", "a", "--yes").exit_code == 0
    assert cli("db", "check").exit_code == 0
    assert [json.loads(line).get("reviewer_prompt") for line in exported(cli, "--reviewer", JUDGE)] == ["p2"] * 4


def test_the_fastchat_readers_keep_the_prompt_name_and_a_plain_judge_name_has_none(tmp_path):
    cli = Cli(tmp_path / "council.db")
    line = {"question_id": 81, "model": "vicuna-13b", "judge": ["gpt-4", "single-v1"], "user_prompt": "p",
            "judgment": "j", "score": 7, "turn": 1, "tstamp": 1.7e9}
    plain = {**line, "judge": "gpt-4", "tstamp": 1.7e9 + 1}
    result = cli("import", "--from", "fastchat-single", str(write_jsonl(tmp_path / "gpt-4_single.jsonl",
                                                                         [line, plain])))
    assert result.exit_code == 0, result.output
    assert sorted(json.loads(found).get("reviewer_prompt") or "" for found in exported(cli)) == ["", "single-v1"]


def test_db_check_finds_a_reviewer_whose_models_row_is_gone_and_repair_keeps_its_records(tmp_path):
    cli = Cli(tmp_path / "council.db")
    late = [record(session_id="s", reviewer_id="late/judge", reviewer_prompt="p1", model_id=f"m{n}", position=n)
            for n in range(2)]
    assert cli("import", str(write_jsonl(tmp_path / "a.jsonl", late))).exit_code == 0
    with sqlite3.connect(tmp_path / "council.db") as connection:  # by hand: nothing council-db does
        connection.execute("DELETE FROM models WHERE name = 'late/judge'")
    found = cli("db", "check")
    assert found.exit_code == 1 and "models.model_of (3 rows): 1 name no stored models row" in found.output
    assert cli("db", "check", "--repair").exit_code == 0
    assert cli("db", "check").exit_code == 0
    assert len(exported(cli)) == 2


def test_csv_export_names_a_reviewer_with_provenance_by_its_label_so_two_prompts_stay_two_records(tmp_path):
    cli = Cli(tmp_path / "council.db")
    lines = [record(reviewer_prompt=prompt, position=...) for prompt in ("p1", "p2")]  # one key but the prompt
    assert cli("import", str(write_jsonl(tmp_path / "a.jsonl", lines))).exit_code == 0
    rows = exported(cli, "--format", "csv")[1:]
    assert sorted(row.split(",")[4] for row in rows) == ["openai/gpt-4o · prompt p1", "openai/gpt-4o · prompt p2"]
    (tmp_path / "out.csv").write_text("\n".join(exported(cli, "--format", "csv")) + "\n", encoding="utf-8")
    again = Cli(tmp_path / "again.db")
    result = again("import", "--from", "csv", str(tmp_path / "out.csv"), "--scale", "1-10",
                   "--map", "session=session_id,candidate=model_id,reviewer=reviewer_id,score=score_value")
    assert result.exit_code == 0, result.output
    assert len(exported(again)) == 2
