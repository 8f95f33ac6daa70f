"""council-db import --from jsonl: JSON Lines of any shape, roles found by field name or dotted
path (nested objects and list items), through the same mapping as a CSV's columns."""

from __future__ import annotations

import pytest

from council_db.errors import CouncilDbError
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from tests.conftest import both_backends, scalar, write_jsonl

MAP = (("candidate", "generator"), ("reviewer", "result.judge.model"), ("score", "result.scores.0"),
       ("session", "item"))


def line(item, generator="gpt-4o", score=7, **more) -> dict:
    return {"item": item, "generator": generator, "result": {"judge": {"model": "claude"}, "scores": [score, 1]},
            **more}


def options(mapping=MAP, **given) -> FormatOptions:
    return FormatOptions("jsonl", mapping=tuple(sorted(mapping)), **given)


@both_backends
def test_nested_fields_are_read_by_dotted_path_and_list_index(db, tmp_path):
    path = write_jsonl(tmp_path / "judged.jsonl", [line(1), line(1, "llama", 4), line("q2", score=9.5)])
    result = import_files(db, [str(path)], options=options(scale="1-10")).files[0]
    assert (result.inserted, result.rejected) == (3, 0)
    with db.reading() as reader:
        rows = sorted(tuple(row) for row in reader.rows("SELECT session_id, reviewer, model, score_value "
                                                        "FROM score_records"))
    assert rows == [("1", "claude", "gpt-4o", 7.0), ("1", "claude", "llama", 4.0), ("q2", "claude", "gpt-4o", 9.5)]


def test_a_key_holding_dots_is_read_whole_and_optional_roles_may_be_absent(db, tmp_path):
    lines = [{"id": "s1", "m": "a", "judge.model": "j", "s": 0.5, "slot": 0, "answer": "four chars"},
             {"id": "s1", "m": "b", "judge.model": "j", "s": 1, "slot": None}]
    path = write_jsonl(tmp_path / "flat.jsonl", lines)
    mapping = (("session", "id"), ("candidate", "m"), ("reviewer", "judge.model"), ("score", "s"),
               ("position", "slot"), ("answer_text", "answer"))
    result = import_files(db, [str(path)], options=options(mapping)).files[0]
    assert (result.inserted, result.no_position, result.unknown_length) == (2, 1, 1)
    assert result.warnings[0].startswith("no --scale: the scores of the first 2 rows lie in 0.5..1, so the scale "
                                         "is taken as 0-1")
    assert scalar(db, "SELECT response_length_chars FROM score_records WHERE model = 'a'") == len("four chars")


def test_a_line_without_a_required_path_is_rejected_naming_the_path(db, tmp_path):
    path = write_jsonl(tmp_path / "judged.jsonl", [line(1), {"item": 2, "generator": "x", "result": {}},
                                                   line(3, score="high"), "[1, 2]", "not json", line(4)])
    result = import_files(db, [str(path)], options=options(scale="1-10")).files[0]
    assert (result.inserted, result.rejected) == (2, 4)
    assert [(bad.line_number, bad.reason.split(";")[0]) for bad in result.rejected_lines] == [
        (2, "result.judge.model: missing"),
        (3, "result.scores.0: a text of 4 characters that is no number"),
        (4, "not a JSON object (Expected `object`, got `array`)"),
        (5, "not valid JSON (expected ident at byte 2)"),
    ]


def test_a_required_path_the_first_line_lacks_is_refused_listing_its_fields(db, tmp_path):
    path = write_jsonl(tmp_path / "judged.jsonl", [line(1)])
    with pytest.raises(CouncilDbError) as refused:
        import_files(db, [str(path)], options=options(MAP[:3] + (("session", "question_id"),)))
    assert str(refused.value).endswith("the first line has no 'question_id' for session; the first line's fields "
                                       "are: generator, item, result.judge.model, result.scores")
    assert scalar(db, "SELECT COUNT(*) FROM imports") == 0


def test_a_csv_given_as_jsonl_is_refused_with_the_csv_mapping(db, tmp_path):
    path = tmp_path / "scores.jsonl"
    path.write_text("item,generator,judge,score\n1,a,b,7\n", encoding="utf-8")
    with pytest.raises(CouncilDbError, match="CSV with the columns item, generator, judge, score: import it with "
                                             "--from csv --map session=item,candidate=generator,reviewer=judge,"
                                             "score=score"):
        import_files(db, [str(path)], options=options(scale="1-10"))


def test_a_role_s_values_read_for_a_whole_batch_are_each_line_s_own(tmp_path):
    """All rows at once, a path step at a time, where each step meets objects; a row with the
    whole dotted path as a key, a list on the way or a value missing: row by row, as before."""
    from council_db.ingest.formats.jsonl_paths import MISSING
    from council_db.ingest.formats.readers import reader
    from council_db.ingest.sources import resolve_sources

    mapping = MAP + (("category", "meta.kind.name"),)
    path = write_jsonl(tmp_path / "judged.jsonl", [line(1, meta={"kind": {"name": "math"}})])
    read = reader(options(mapping, scale="1-10"), resolve_sources([str(path)])[0])
    plain = [line(n, meta={"kind": {"name": f"k{n}"}}) for n in range(3)]
    odd = [line(3, meta={"kind": {"name": "x"}}, **{"meta.kind.name": "whole"}), line(4, meta={"kind": None}),
           line(5, meta={"kind": ["name"]}), line(6, meta="flat"), line(7)]
    for rows in (plain, plain + odd, odd[:1] + plain):
        expected = [None if (found := read._found(row, "category")) is MISSING else found for row in rows]
        assert read.column(rows, "category") == expected
        assert read.column(rows, "reviewer") == ["claude"] * len(rows)  # through a list: "result.scores.0" too
        assert read.column(rows, "score") == [row["result"]["scores"][0] for row in rows]
    assert read.column(plain + odd, "category")[3:] == ["whole", None, None, None, None]
