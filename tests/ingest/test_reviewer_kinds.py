"""Reviewer kinds at import (issue 28): a reviewer is an LLM judge unless a line's own
reviewer_kind or ``import --reviewer-kind`` says it is a human rater or a gold label; the kind
is stored once per reviewer, a stated kind wins over the stored one with a warning, and a line
with an unknown kind is rejected naming the field, its neighbours kept. Real imports into
real databases, on SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest

from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from tests.conftest import both_backends, record, write_jsonl
from tests.realdata import FASTCHAT_ANSWERS, fastchat_tables

HUMAN, JUDGE = "expert_1", "openai/gpt-4o"


def rated(session: str, reviewer: str, **changes) -> list[dict]:
    """One reviewer's two scores in a session."""
    return [record(session_id=session, reviewer_id=reviewer, model_id=model, position=slot, **changes)
            for slot, model in enumerate(("model-a", "model-b"))]


def kinds(db) -> dict[str, str]:
    with db.reading() as reader:
        return dict(reader.rows("SELECT name, reviewer_kind FROM models"))


def imported(db, tmp_path, lines, name="in.jsonl", **options):
    path = write_jsonl(tmp_path / name, lines)
    return import_files(db, [str(path)], options=FormatOptions(**options))


@both_backends
def test_a_reviewer_is_a_judge_unless_its_lines_say_human_or_gold(db, tmp_path):
    imported(db, tmp_path, rated("s1", JUDGE) + rated("s1", HUMAN, reviewer_kind="human")
             + rated("s1", "gold", reviewer_kind="gold"))

    assert kinds(db) == {JUDGE: "judge", HUMAN: "human", "gold": "gold", "model-a": "judge", "model-b": "judge"}


@both_backends
def test_reviewer_kind_marks_every_reviewer_of_the_files_and_a_lines_own_kind_wins(db, tmp_path):
    lines = rated("s1", HUMAN) + rated("s1", "expert_2") + rated("s1", "gold", reviewer_kind="gold")

    summary = imported(db, tmp_path, lines, reviewer_kind="human")

    assert kinds(db) == {HUMAN: "human", "expert_2": "human", "gold": "gold", "model-a": "judge",
                         "model-b": "judge"}, "candidates are no reviewers: they keep the default"
    assert summary.files[0].remarked == [], "new reviewers are stored with their kind: nothing changed"


@both_backends
def test_a_later_import_that_states_another_kind_wins_and_says_what_it_changed(db, tmp_path):
    imported(db, tmp_path, rated("s1", HUMAN) + rated("s1", JUDGE))  # the flag forgotten: both judges
    summary = imported(db, tmp_path, rated("s2", HUMAN), name="more.jsonl", reviewer_kind="human")

    assert kinds(db)[HUMAN] == "human" and kinds(db)[JUDGE] == "judge"
    assert summary.files[0].remarked == [{"reviewer": HUMAN, "was": "judge", "now": "human"}]
    assert summary.as_json()["files"][0]["remarked"] == [{"reviewer": HUMAN, "was": "judge", "now": "human"}]


@both_backends
def test_lines_without_a_kind_leave_a_stored_kind_as_it_is(db, tmp_path):
    imported(db, tmp_path, rated("s1", HUMAN, reviewer_kind="human"))
    summary = imported(db, tmp_path, rated("s2", HUMAN), name="more.jsonl")

    assert kinds(db)[HUMAN] == "human"
    assert summary.files[0].remarked == []


def test_the_last_statement_in_a_file_wins(db, tmp_path):
    summary = imported(db, tmp_path, rated("s1", HUMAN, reviewer_kind="judge") + rated("s2", HUMAN,
                                                                                       reviewer_kind="human"))

    assert kinds(db)[HUMAN] == "human"
    assert summary.files[0].remarked == []


def test_a_strict_import_that_fails_changes_no_kind(db, tmp_path):
    imported(db, tmp_path, rated("s1", HUMAN))
    summary = imported(db, tmp_path, rated("s2", HUMAN) + ["{broken"], name="bad.jsonl", reviewer_kind="human")
    assert kinds(db)[HUMAN] == "human"  # not strict: the good lines are kept, and so is the kind

    imported(db, tmp_path, rated("s3", "expert_2"), name="first.jsonl")
    failed = import_files(db, [str(write_jsonl(tmp_path / "strict.jsonl", rated("s4", "expert_2") + ["{broken"]))],
                          strict=True, options=FormatOptions(reviewer_kind="gold"))

    assert failed.files[0].status == "strict-failed" and failed.files[0].remarked == []
    assert kinds(db)["expert_2"] == "judge"
    assert summary.files[0].rejected == 1


@pytest.mark.parametrize("value", ["expert", "Human", 1, True, ["human"]])
def test_an_unknown_kind_is_rejected_naming_the_field_and_the_kinds_and_the_other_lines_are_kept(db, tmp_path,
                                                                                                   value):
    lines = rated("s1", JUDGE) + [record(session_id="s1", reviewer_id=HUMAN, reviewer_kind=value)]

    summary = imported(db, tmp_path, lines)

    (bad,) = summary.files[0].rejected_lines
    assert (bad.line_number, bad.field) == (3, "reviewer_kind")
    assert bad.reason.startswith("reviewer_kind: got ") and '"judge", "human" or "gold"' in bad.reason
    assert summary.files[0].inserted == 2 and HUMAN not in kinds(db)
    assert "expert" not in bad.reason, "a string is shown by its length only, as it may hold anything"


def test_a_rejected_lines_known_values_keep_a_valid_kind(db, tmp_path):
    line = record(reviewer_id=HUMAN, reviewer_kind="human", score_value="x")

    summary = imported(db, tmp_path, [line])

    (bad,) = summary.files[0].rejected_lines
    assert json.loads(bad.known_values)["reviewer_kind"] == "human" and bad.unknown_keys == 0


def test_every_format_takes_the_reviewer_kind(db):
    """FastChat's review tables name no judge in their lines: the flag marks the one the import names."""
    tables = [str(path) for path in fastchat_tables("gpt-3.5-turbo_review_vicuna-13b-20230322-new-hp-fp16")]

    import_files(db, tables, options=FormatOptions("fastchat-review", answers=FASTCHAT_ANSWERS, reviewer_kind="human"))

    assert kinds(db)["gpt-3.5-turbo"] == "human"


def test_an_unknown_reviewer_kind_option_is_refused_before_anything_is_read():
    from council_db.errors import CouncilDbError

    with pytest.raises(CouncilDbError, match="unknown reviewer kind 'expert': use one of judge, human, gold"):
        FormatOptions(reviewer_kind="expert").check()
