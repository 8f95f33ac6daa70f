"""council-db reviewers: the stored reviewers with their kind and counts, and marking them
later by name or glob, more than one only with --yes (issue 28). The real CLI on real
databases."""

from __future__ import annotations

import json

import pytest

from council_db.cli.reviewers import KINDS
from council_db.contract.fields import REVIEWER_KINDS
from tests.conftest import both_backends, record, run_module, write_jsonl

RATERS = ("expert_1", "expert_2", "gpt-4o")


@pytest.fixture
def rated(cli, tmp_path):
    """Each rater scores two answers in three sessions; gpt-4o's first score is out of scale."""
    lines = [record(session_id=f"s{n}", reviewer_id=rater, model_id=model, position=slot,
                    score_value=42.0 if (rater, n, slot) == ("gpt-4o", 0, 0) else 7.0)
             for n in range(3) for rater in RATERS for slot, model in enumerate(("model-a", "model-b"))]
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", lines))).exit_code == 0
    return cli


def listed(cli, *args: str) -> list[dict]:
    result = cli("reviewers", *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def kinds(cli) -> dict[str, str]:
    return {row["reviewer"]: row["kind"] for row in listed(cli)}


def test_the_kinds_the_command_offers_are_the_contracts():
    assert KINDS == REVIEWER_KINDS


@both_backends
def test_the_listing_gives_every_reviewer_its_kind_and_counts_and_no_candidate(rated):
    rows = listed(rated)

    assert rows == [
        {"reviewer": "expert_1", "kind": "judge", "scores": 6, "sessions": 3, "excluded": 0},
        {"reviewer": "expert_2", "kind": "judge", "scores": 6, "sessions": 3, "excluded": 0},
        {"reviewer": "gpt-4o", "kind": "judge", "scores": 5, "sessions": 3, "excluded": 1},
    ]
    assert [row["reviewer"] for row in listed(rated, "expert_*")] == ["expert_1", "expert_2"]


@both_backends
def test_more_than_one_reviewer_is_only_listed_without_yes_then_marked_with_it(rated):
    dry = rated("reviewers", "--kind", "human", "expert_*")
    assert dry.exit_code == 0
    assert "would mark 2 reviewers human: expert_1 (was judge), expert_2 (was judge)" in dry.stderr
    assert set(kinds(rated).values()) == {"judge"}, "nothing changed"

    done = rated("reviewers", "--kind", "human", "expert_*", "--yes")

    assert done.exit_code == 0 and "marked 2 reviewers human" in done.stderr
    assert kinds(rated) == {"expert_1": "human", "expert_2": "human", "gpt-4o": "judge"}
    again = rated("reviewers", "--kind", "human", "expert_*")
    assert "nothing to change: 2 reviewers are human already" in again.stderr


def test_one_reviewer_is_marked_at_once_unless_dry_run(rated):
    dry = rated("reviewers", "--kind", "gold", "expert_2", "--dry-run")
    assert "would mark 1 reviewer gold: expert_2 (was judge)" in dry.stderr and kinds(rated)["expert_2"] == "judge"

    assert rated("reviewers", "--kind", "gold", "expert_2").exit_code == 0
    assert kinds(rated)["expert_2"] == "gold"


def test_a_pattern_that_matches_no_reviewer_is_an_error_naming_it(rated):
    result = rated("reviewers", "--kind", "human", "model-*")  # candidates are no reviewers

    assert result.exit_code == 1
    assert "no stored reviewer matches model-*" in result.stderr
    assert set(kinds(rated).values()) == {"judge"}


@pytest.mark.parametrize("args, complaint", [
    (["--kind", "expert", "expert_1"], "--kind"),
    (["--kind", "human"], "name the reviewers to mark"),
    (["--yes"], "--dry-run and --yes go with --kind KIND"),
])
def test_a_wrong_use_is_a_usage_error(rated, args, complaint):
    result = rated("reviewers", *args)

    assert result.exit_code == 2 and complaint in result.output


def test_an_import_marking_the_file_it_already_read_says_it_marked_nothing(rated, tmp_path):
    result = rated("import", "--reviewer-kind", "human", str(tmp_path / "in.jsonl"))

    assert result.exit_code == 0
    assert "nothing new was read, so no reviewer was marked human" in result.stderr
    assert set(kinds(rated).values()) == {"judge"}


def test_an_import_that_changes_a_stored_kind_warns_with_the_command_that_undoes_it(rated, tmp_path):
    more = write_jsonl(tmp_path / "more.jsonl", [record(session_id="s9", reviewer_id="gpt-4o")])

    result = rated("import", "--reviewer-kind", "gold", str(more))

    assert ("warning: reviewer gpt-4o was stored as judge and is now gold, as this import says "
            "(council-db reviewers --kind judge gpt-4o marks it back)") in result.stderr
    assert kinds(rated)["gpt-4o"] == "gold"


def test_marking_in_a_database_that_does_not_exist_creates_none(tmp_path):
    missing = tmp_path / "typo.db"
    result = run_module("--db", str(missing), "reviewers", "--kind", "human", "expert_*")

    assert result.returncode == 1 and result.stderr.startswith(b"error: no database at")
    assert not missing.exists()
