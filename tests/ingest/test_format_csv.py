"""council-db import --from csv: any table of scores through a column mapping. The fixture
(tests/data/csv/judge_scores.csv) is written by Python's csv module as spreadsheets and pandas
write CSV: CRLF line ends, a quoted field holding a comma, a doubled quote and a line break."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from council_db.errors import CouncilDbError
from council_db.ingest import pipeline
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from tests.conftest import both_backends, run_module, scalar

FIXTURE = Path(__file__).parents[1] / "data" / "csv" / "judge_scores.csv"
MAP = (("candidate", "model"), ("reviewer", "judge"), ("score", "rating"), ("session", "question_id"))
FULL_MAP = MAP + (("answer_text", "answer"), ("category", "category"), ("position", "shown_as"),
                  ("time", "graded_at"))
QID_MAP = MAP[:3] + (("session", "qid"),)  # for the tables written here
RECORDS_SQL = ("SELECT session_id, reviewer, model, position, position_is_display_order, response_length_chars, "
               "score_value, score_scale, category FROM score_records ORDER BY session_id, reviewer, model")


def options(mapping=MAP, **given) -> FormatOptions:
    return FormatOptions("csv", mapping=tuple(sorted(mapping)), **given)


def fixture_rows() -> list[dict]:
    with FIXTURE.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def stored(db) -> list[tuple]:
    with db.reading() as reader:
        return [tuple(row) for row in reader.rows(RECORDS_SQL)]


def write(path, text: str, encoding: str = "utf-8"):
    path.write_bytes(text.encode(encoding))
    return path


@both_backends
def test_each_row_becomes_a_record_with_every_mapped_role(db):
    result = import_files(db, [str(FIXTURE)], options=options(FULL_MAP, scale="1-10")).files[0]
    expected = sorted((row["question_id"], row["judge"], row["model"], int(row["shown_as"]), 1, len(row["answer"]),
                       float(row["rating"]), "1-10", row["category"]) for row in fixture_rows())
    assert [tuple(map(_plain, row)) for row in stored(db)] == expected
    assert (result.inserted, result.rejected, result.no_position, result.unknown_length) == (16, 0, 0, 0)
    assert result.warnings == []
    assert scalar(db, "SELECT MIN(timestamp) FROM score_records") == "2025-03-01T10:00:00Z"


def _plain(value):
    """A backend's boolean or integer as Python compares it with the fixture's."""
    return int(value) if isinstance(value, bool) else value


def test_a_row_whose_quoted_answer_holds_a_line_break_is_one_row_numbered_by_its_first_line(db):
    assert b"\r\n" in FIXTURE.read_bytes()  # as the csv module writes rows
    broken = next(row for row in fixture_rows() if "\n" in row["answer"] and '"' in row["answer"])
    import_files(db, [str(FIXTURE)], options=options(FULL_MAP, scale="1-10"))
    assert scalar(db, f"SELECT response_length_chars FROM score_records WHERE session_id = '{broken['question_id']}' "
                      f"AND model = '{broken['model']}' LIMIT 1") == len(broken["answer"])


def test_rows_kept_whole_when_batches_and_worker_segments_cut_inside_a_quoted_field(db_path, tmp_path, monkeypatch):
    """Rows of three lines each, in a file cut into segments of a few hundred bytes for the
    worker processes and in batches of 7 lines: every cut falls inside some row's quoted
    field, and every row is still stored whole with its own line number."""
    from council_db.ingest import lines as line_reading
    from council_db.store.database import open_database

    body = "".join(f'q{n},m{n % 3},j{n % 2},{n % 10 + 1},"line one\nline ""two""\nline three {n}"\n'
                   for n in range(400))
    path = write(tmp_path / "multi.csv", "session,model,judge,score,why\n" + body + "q400,m0,j0,oops,x\n")
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(pipeline, "SEGMENT_BYTES", 300)
    monkeypatch.setattr(line_reading, "BATCH_LINES", 7)
    db = open_database(f"sqlite:///{db_path}", notify=lambda _: None)
    mapping = (("candidate", "model"), ("reviewer", "judge"), ("score", "score"), ("session", "session"),
               ("answer_text", "why"))
    result = import_files(db, [str(path)], options=options(mapping, scale="1-10")).files[0]
    assert (result.inserted, result.rejected) == (400, 1)
    assert [bad.line_number for bad in result.rejected_lines] == [2 + 3 * 400]
    assert scalar(db, "SELECT COUNT(DISTINCT response_length_chars) FROM score_records") == 3  # 1-, 2- and 3-digit n
    shortest = len('line one\nline "two"\nline three 0')
    assert scalar(db, "SELECT MIN(response_length_chars) FROM score_records") == shortest
    db.engine.dispose()


@both_backends
def test_a_bad_row_is_rejected_naming_its_line_and_column_and_the_good_rows_are_kept(db, tmp_path):
    path = write(tmp_path / "scores.csv", "qid,model,judge,rating,slot\n"
                                          "q1,a,j,7,0\n"
                                          "q1,b,j,seven,1\n"
                                          "q2,a,j,6\n"
                                          "q2,b,j,5,-1\n"
                                          ",a,j,5,0\n"
                                          "q3,a,j,nan,0\n"
                                          "q3,b,j,8,1\n")
    mapping = MAP[:3] + (("position", "slot"), ("session", "qid"))
    result = import_files(db, [str(path)], options=options(mapping, scale="1-10")).files[0]
    assert (result.inserted, result.rejected) == (2, 5)
    assert [(bad.line_number, bad.field, bad.reason.split(";")[0]) for bad in result.rejected_lines] == [
        (3, "rating", "rating: a text of 5 characters that is no number"),
        (4, None, "4 fields where the header has 5"),
        (5, "slot", "slot: -1 is not a whole number from 0 to 2,147,483,647"),
        (6, "qid", "qid: empty"),
        (7, "rating", "rating: not a finite number"),
    ]
    with db.reading() as reader:
        kept = reader.rows("SELECT line_number, field, reason, known_values, unknown_keys FROM rejected_lines "
                           "ORDER BY line_number")
    assert [row[0] for row in kept] == [3, 4, 5, 6, 7]
    assert all(row[3] is None and row[4] is None for row in kept)  # nothing of a row's text is kept
    assert not any("seven" in row[2] for row in kept)


def test_a_mapping_without_a_required_role_is_refused_showing_the_columns_and_nothing_is_made(tmp_path):
    done = run_module("--db", str(tmp_path / "council.db"), "import", "--from", "csv", str(FIXTURE),
                      "--map", "session=question_id,candidate=model,reviewer=judge")
    error = done.stderr.decode().strip()
    assert done.returncode == 1 and "Traceback" not in error and len(error.splitlines()) == 1
    assert error == (f"error: {FIXTURE}: the mapping gives no score (needed: session, candidate, reviewer, score); "
                     "the header's columns are: question_id, model, judge, rating, shown_as, answer, graded_at, "
                     "category: add them, e.g. --map session=question_id,candidate=model,reviewer=judge,score=rating")
    assert not (tmp_path / "council.db").exists()


def test_a_mapped_column_the_header_lacks_is_refused_naming_it(db, tmp_path):
    with pytest.raises(CouncilDbError, match=r"no column 'score' for score; the header's columns are: question_id, "
                                             r"model, judge, rating"):
        import_files(db, [str(FIXTURE)], options=options(MAP[:2] + (("score", "score"), MAP[3])))
    assert scalar(db, "SELECT COUNT(*) FROM imports") == 0


def test_without_scale_it_is_inferred_from_the_first_scores_with_a_warning_saying_how_to_set_it(db):
    result = import_files(db, [str(FIXTURE)], options=options()).files[0]
    assert result.warnings == ["no --scale: the scores of the first 16 rows lie in 5..9, so the scale is taken as "
                               "1-10 (a score outside it is kept but left out of analyses); give --scale LOW-HIGH to "
                               "set it"]
    assert scalar(db, "SELECT DISTINCT score_scale FROM score_records") == "1-10"


@pytest.mark.parametrize(("scores", "scale"), [((0, 1, 0.5), "0-1"), ((1, 4, 5), "1-5"), ((0, 7), "0-7"),
                                               ((2, 9), "1-10"), ((0, 55), "0-100"), ((-3, 3), "-3-3")])
def test_the_inferred_scale_is_the_smallest_usual_one_holding_the_scores(scores, scale):
    from council_db.ingest.formats.table_rows import inferred_scale

    assert inferred_scale(min(scores), max(scores)) == scale


def test_without_position_time_or_length_the_records_say_so(db, tmp_path):
    result = import_files(db, [str(FIXTURE)], options=options(scale="1-10")).files[0]
    assert (result.inserted, result.no_position, result.unknown_length) == (16, 16, 16)
    assert scalar(db, "SELECT COUNT(*) FROM score_records WHERE position_is_display_order") == 0
    assert scalar(db, "SELECT COUNT(*) FROM sessions WHERE ts_us IS NOT NULL") == 0


def test_tabs_are_sniffed_and_a_byte_order_mark_is_skipped(db, tmp_path):
    path = tmp_path / "scores.tsv"
    path.write_bytes(b"\xef\xbb\xbfqid\tmodel\tjudge\trating\r\nq1\ta, b\tj\t7\r\nq1\tc\tj\t6\r\n")
    result = import_files(db, [str(path)], options=options(QID_MAP, scale="1-10")).files[0]
    assert (result.inserted, result.rejected) == (2, 0)
    assert scalar(db, "SELECT COUNT(*) FROM score_records WHERE model = 'a, b'") == 1


@pytest.mark.parametrize("tail", ["q2,b,j,1", 'q2,b,j,7,"an explanation\nstill being'])
def test_a_last_row_that_may_still_be_written_is_held_until_the_file_grows(db, tmp_path, tail):
    """A row cut short ("1" of a "10" being written, or a quoted field not yet closed) would
    read as a good row: without its newline it is held, and read whole once it has one."""
    path = tmp_path / "scores.csv"
    path.write_text("qid,model,judge,rating,why\nq1,a,j,7,x\n" + tail, encoding="utf-8")
    first = import_files(db, [str(path)], options=options(QID_MAP, scale="1-10")).files[0]
    with path.open("a", encoding="utf-8") as out:
        out.write('0,short\n' if tail.endswith("1") else ' written"\n')
    again = import_files(db, [str(path)], options=options(QID_MAP, scale="1-10")).files[0]
    assert (first.inserted, first.held_bytes, again.inserted, again.rejected) == (1, len(tail), 1, 0)
    expected = 10.0 if tail.endswith("1") else 7.0
    assert scalar(db, "SELECT score_value FROM score_records WHERE session_id = 'q2'") == expected


def test_delimiter_semicolon_and_epoch_seconds(db, tmp_path):
    path = write(tmp_path / "scores.csv", "qid;model;judge;rating;at\nq1;a;j;7;1740823200\nq1;b;j;6;1740823200.5\n")
    mapping = QID_MAP + (("time", "at"),)
    import_files(db, [str(path)], options=options(mapping, scale="1-10", delimiter=";"))
    assert scalar(db, "SELECT COUNT(*) FROM score_records") == 2
    assert scalar(db, "SELECT MIN(timestamp) FROM score_records").startswith("2025-03-01T10:00:00")


def test_a_grown_file_is_read_from_where_the_last_import_stopped(db, tmp_path):
    path = write(tmp_path / "scores.csv", "qid,model,judge,rating\nq1,a,j,7\nq1,b,j,6\n")
    first = import_files(db, [str(path)], options=options(QID_MAP, scale="1-10")).files[0]
    with path.open("a", encoding="utf-8") as out:
        out.write("q2,a,j,5\n")
    again = import_files(db, [str(path)], options=options(QID_MAP, scale="1-10")).files[0]
    assert (first.inserted, again.mode, again.lines, again.inserted) == (2, "incremental", 1, 1)


def test_the_reviewer_kind_comes_from_its_column(db, tmp_path):
    path = write(tmp_path / "scores.csv", "qid,model,who,kind,rating\nq1,a,j,judge,7\nq1,a,alice,human,6\n"
                                          "q1,a,key,oracle,1\n")
    mapping = (("candidate", "model"), ("reviewer", "who"), ("reviewer_kind", "kind"), ("score", "rating"),
               ("session", "qid"))
    result = import_files(db, [str(path)], options=options(mapping, scale="1-10")).files[0]
    assert (result.inserted, result.rejected_lines[0].field) == (2, "kind")
    assert scalar(db, "SELECT DISTINCT reviewer_kind FROM score_records WHERE reviewer = 'alice'") == "human"


def test_the_command_prints_the_warning_and_the_summary_and_json(tmp_path):
    done = run_module("--db", str(tmp_path / "council.db"), "import", "--from", "csv", str(FIXTURE), "--map",
                      "session=question_id,candidate=model", "--map", "reviewer=judge,score=rating", "--json")
    assert done.returncode == 0, done.stderr.decode()
    assert "warning: " in done.stderr.decode() and "give --scale LOW-HIGH" in done.stderr.decode()
    summary = json.loads(done.stdout)
    assert (summary["inserted"], summary["files"][0]["warnings"][0][:12]) == (16, "no --scale: ")


def test_a_mapping_file_gives_the_roles_and_the_command_line_wins(tmp_path):
    mapping = tmp_path / "mapping.toml"
    mapping.write_text('session = "question_id"\ncandidate = "model"\nreviewer = "judge"\nscore = "shown_as"\n'
                       'scale = "0-1"\n', encoding="utf-8")
    done = run_module("--db", str(tmp_path / "council.db"), "import", "--from", "csv", str(FIXTURE),
                      "--map-file", str(mapping), "--map", "score=rating", "--scale", "1-10", "--json")
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout)["inserted"] == 16 and "warning" not in done.stderr.decode()


@pytest.mark.parametrize(("args", "says"), [
    (["--map", "session=qid,judge=x"], "--map: unknown role 'judge'; the roles are session, candidate"),
    (["--map", "session"], "--map: 'session' is not ROLE=COLUMN"),
    (["--map", "session=a,session=b"], "--map: session is mapped twice ('a' and 'b'); keep one"),
    (["--map", "length=a,answer_text=b"], "give length (a number of characters) or answer_text"),
    (["--map", "session=a", "--scale", "10-1"], "--scale '10-1' is not LOW-HIGH"),
    ([], "--from csv needs --map ROLE=COLUMN,... or --map-file FILE"),
])
def test_a_mapping_that_cannot_be_right_is_a_usage_error(tmp_path, args, says):
    done = run_module("--db", str(tmp_path / "council.db"), "import", "--from", "csv", str(FIXTURE), *args)
    assert done.returncode == 2 and says in done.stderr.decode().replace("\n", " ")
    assert not (tmp_path / "council.db").exists()


def test_map_is_refused_for_a_format_that_has_its_own_fields(tmp_path):
    done = run_module("--db", str(tmp_path / "council.db"), "import", "--from", "judgebench", str(FIXTURE),
                      "--map", "session=a")
    assert done.returncode == 2 and "--map is for --from csv or jsonl, not judgebench" in done.stderr.decode()


def test_json_given_as_csv_is_refused_naming_jsonl(db, tmp_path):
    path = write(tmp_path / "scores.csv", '{"qid": "q1"}\n')
    with pytest.raises(CouncilDbError, match="JSON, not CSV: --from jsonl reads JSON Lines"):
        import_files(db, [str(path)], options=options(QID_MAP, scale="1-10"))


def test_stdin_is_read_with_its_header_peeked(tmp_path):
    done = run_module("--db", str(tmp_path / "council.db"), "import", "-", "--from", "csv", "--map",
                      ",".join(f"{role}={column}" for role, column in MAP), "--scale", "1-10", "--json",
                      input=FIXTURE.read_bytes())
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout)["inserted"] == 16



def test_rows_read_one_by_one_beside_a_bad_row_are_stored_as_rows_read_at_once(tmp_path):
    """A batch is read a column at a time, or a row at a time when one of its rows is bad:
    both readings store the same records."""
    from council_db.store.database import open_database

    with_bad_row = tmp_path / "with_bad_row.csv"
    with_bad_row.write_bytes(FIXTURE.read_bytes() + b"q9,gpt-4o,gpt-4-judge,none,0,x,2025-03-09T10:00:00Z,math\r\n")
    found = []
    for number, path in enumerate((FIXTURE, with_bad_row)):
        db = open_database(f"sqlite:///{tmp_path / f'{number}.db'}", notify=lambda _: None)
        result = import_files(db, [str(path)], options=options(FULL_MAP, scale="1-10")).files[0]
        found.append((stored(db), result.inserted))
        db.engine.dispose()
    assert found[0] == found[1] and found[0][1] == 16


def test_files_joined_with_cat_skip_each_header_and_byte_order_mark(db, tmp_path):
    part = "\ufeffqid,model,judge,rating\r\nq1,a,j,7\r\n"
    path = write(tmp_path / "joined.csv", part + part.replace("q1", "q2"))
    result = import_files(db, [str(path)], options=options(QID_MAP, scale="1-10")).files[0]
    assert (result.inserted, result.rejected) == (2, 0)


def test_a_field_longer_than_the_csv_module_reads_is_rejected_saying_what_to_do(db, tmp_path):
    path = write(tmp_path / "long.csv", f'qid,model,judge,rating,why\nq1,a,j,7,"{"x" * 200_000}"\nq1,b,j,6,short\n')
    result = import_files(db, [str(path)], options=options(QID_MAP, scale="1-10")).files[0]
    assert (result.inserted, result.rejected) == (1, 1)
    assert result.rejected_lines[0].reason.startswith("a field of more than 131,072 characters")


def _reader(path, mapping=MAP, **given):
    from council_db.ingest.formats.readers import reader
    from council_db.ingest.sources import resolve_sources

    return reader(options(mapping, **given), resolve_sources([str(path)])[0])


def test_blank_lines_byte_order_marks_and_repeated_headers_are_told_apart_in_a_batch_read_at_once(tmp_path):
    from council_db.ingest.lines import LineBatch

    path = write(tmp_path / "t.csv", "qid,model,judge,rating\nq0,m,j,5\n")
    lines = [b"qid,model,judge,rating", b"", b" ", b"\t\r", b"q1,m,j,5", b"\xef\xbb\xbfq2,m,j,6", b" q3,m,j,7",
             b"qid,model,judge,rating\r", b"q4,m,j,8\r"]
    found = _reader(path, QID_MAP, scale="1-10").row_lines(LineBatch(10, lines, 0))
    assert found == [(14, b"q1,m,j,5", b"q1,m,j,5"), (15, lines[5], b"q2,m,j,6"), (16, b" q3,m,j,7", b" q3,m,j,7"),
                     (18, b"q4,m,j,8\r", b"q4,m,j,8\r")]
    plain = [b"q1,m,j,5", b"", b"q4,m,j,8\r", b"qid,model,judge,ratings"]  # only empty lines to leave out
    assert _reader(path, QID_MAP, scale="1-10").row_lines(LineBatch(1, plain, 0)) == [
        (number, line, line) for number, line in zip((1, 3, 4), plain[:1] + plain[2:])]


def test_a_batch_read_at_once_gives_the_records_a_row_at_a_time_gives():
    import msgspec

    from council_db.ingest.lines import LineBatch, Parsed
    from council_db.ingest.quoted_rows import whole_rows

    reader = _reader(FIXTURE, FULL_MAP, scale="1-10")
    lines = FIXTURE.read_bytes().split(b"\n")
    batch = next(whole_rows(iter([LineBatch(1, lines, 0)])))
    at_once = reader(batch)
    one_by_one = Parsed()
    for number, raw, text in reader.row_lines(batch):
        reader._read(number, raw, text, one_by_one)
    assert len(at_once.records) == 16 and not at_once.rejected and not one_by_one.rejected
    assert [(n, msgspec.structs.asdict(r)) for n, r in at_once.records] == [
        (n, msgspec.structs.asdict(r)) for n, r in one_by_one.records]
