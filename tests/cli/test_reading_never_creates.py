"""Reading never creates: the Python API's report() on a path with no database is refused,
leaving neither the file nor its directory behind (record_session creates it), and an import
checks its files and --answers before it opens, so creates, the database. Errors name what the
user typed: the --db path as given, the time option and its value, the filter values."""

from __future__ import annotations

import pytest

import council_db
from council_db.errors import CouncilDbError
from tests.conftest import run_module
from tests.realdata import MT_BENCH_JUDGMENTS

STAGE1 = [{"model": "a/one", "response": "x" * 10}, {"model": "b/two", "response": "y" * 30}]
STAGE2 = [{"model": "a/one", "parsed_ranking": {"ranking": ["Response B", "Response A"],
                                                "scores": {"Response A": 6, "Response B": 8}}}]


def one_line_error(result) -> str:
    text = result.stderr.decode()
    assert result.returncode == 1 and text.count("\n") == 1 and text.startswith("error: "), text
    return text


def test_the_apis_report_on_a_mistyped_path_is_refused_and_creates_nothing(tmp_path):
    mistyped = tmp_path / "typo" / "council.db"

    with council_db.connect(str(mistyped)) as db, pytest.raises(CouncilDbError, match="no database at .*typo"):
        db.report()

    assert list(tmp_path.iterdir()) == []


def test_the_apis_first_record_session_creates_the_database(tmp_path):
    path = tmp_path / "new" / "council.db"

    with council_db.connect(str(path)) as db:
        assert not path.exists()
        db.record_session("s-1", STAGE1, STAGE2, {"Response A": "a/one", "Response B": "b/two"})
        assert db.report().window.sessions == 1


@pytest.mark.parametrize("args", [
    ["import", "missing.jsonl"],
    ["import", "--from", "fastchat-single", str(MT_BENCH_JUDGMENTS), "--answers", "no-such-dir"],
])
def test_an_import_whose_file_or_answers_are_missing_creates_no_database(tmp_path, args):
    text = one_line_error(run_module("--db", "data/council.db", *args, cwd=tmp_path))

    assert "missing.jsonl: no such file" in text or "--answers no-such-dir: no such directory" in text
    assert list(tmp_path.iterdir()) == []


def test_a_missing_database_is_named_as_typed(tmp_path):
    text = one_line_error(run_module("--db", "typo.db", "stats", cwd=tmp_path))

    assert f"no database at typo.db ({tmp_path / 'typo.db'})" in text and "--db typo.db import" in text


@pytest.mark.parametrize("args, said", [
    (["bias-report", "--since", "soon"], "Invalid value for --since: 'soon' is not an ISO-8601 time"),
    (["export", "--until", "later"], "Invalid value for --until: 'later' is not an ISO-8601 time"),
    (["prune", "--before", "then"], "Invalid value for --before: 'then' is not an ISO-8601 time"),
])
def test_a_time_option_that_cannot_be_read_is_named_with_its_value(tmp_path, args, said):
    result = run_module("--db", str(tmp_path / "council.db"), *args)

    assert result.returncode == 2 and said in result.stderr.decode()


def test_a_filter_that_selects_nothing_is_named_with_its_value(tmp_path):
    path = tmp_path / "council.db"
    with council_db.connect(str(path)) as db:
        db.record_session("s-1", STAGE1, STAGE2, {"Response A": "a/one", "Response B": "b/two"})

    text = run_module("--db", str(path), "bias-report", "--reviewer", "nobody/at-all").stderr.decode()

    assert "check --reviewer nobody/at-all" in text
