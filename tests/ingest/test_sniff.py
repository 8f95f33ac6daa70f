"""A file of another format is refused with one line saying what it looks like and how to
import it, before anything is stored (issue 27, item 2): a JSON array (AlpacaEval's files), a
CSV, an image, random bytes, or a judge log read without its --from used to give thousands of
per-line rejections, all stored, and exit 3 although nothing was imported. A file the first
bytes say nothing about stops once 100 lines are rejected before any record."""

from __future__ import annotations

import codecs
import gzip
import json
import random
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from council_db.errors import CouncilDbError
from council_db.ingest import pipeline
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from council_db.ingest.sniff import ALL_BAD_LINES, verdict
from tests import realdata
from tests.conftest import both_backends, record, run_module, scalar, session, write_jsonl

SINGLE = realdata.MT_BENCH / "model_judgment" / "gpt-4_single.jsonl"
PAIR = realdata.REALDATA.parent / "fastchat-pair" / "mt_bench" / "model_judgment" / "gpt-4_pair.jsonl"
ALPACA_EVAL = (realdata.REALDATA.parent / "alpaca-eval" / "FuseChat-Llama-3.2-3B-Instruct"
               / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json")
ARENA_HARD = Path(__file__).parents[1] / "data" / "arena-hard" / "arena-hard-v2.0"
ALPACA = [{"instruction": "Say hi.", "output": "Hi!", "generator": "gpt-4", "annotator": "alpaca_eval_gpt4",
           "preference": 1.0}] * 3  # AlpacaEval writes its annotations as a pretty-printed JSON array
COUNCIL = "".join(json.dumps(line) + "\n" for line in session())
PROMPTFOO = realdata.REALDATA.parent / "promptfoo" / "sample-export.json"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 40

CASES = {
    "a pretty-printed JSON array": (json.dumps(ALPACA, indent=2).encode(), "llm-council",
                                    "a JSON array, not JSON Lines: jq -c '.[]' FILE | council-db import -"),
    "a JSON array on one line": (json.dumps(session()).encode(), "fastchat-pair",
                                 "a JSON array, not JSON Lines: jq -c '.[]' FILE | council-db import - --from "
                                 "fastchat-pair"),
    "a pretty-printed JSON object": (json.dumps(record(), indent=2).encode(), "llm-council",
                                     "pretty-printed JSON, not JSON Lines: jq -c . FILE | council-db import -"),
    "a CSV": (b"session_id,reviewer_id,model_id,score_value\ns1,a,b,7\ns1,b,a,6\n", "llm-council",
              "CSV with the columns session_id, reviewer_id, model_id, score_value: import it with --from csv --map "
              "session=session_id,candidate=model_id,reviewer=reviewer_id,score=score_value"),
    "a CSV with a quoted comma": (b'qid,model,judge,rating,why\nq1,a,gpt-4,7,"short, clear"\n', "fastchat-single",
                                  "CSV with the columns qid, model, judge, rating, why: import it with --from csv "
                                  "--map session=qid,candidate=model,reviewer=judge,score=rating"),
    "tab-separated text with unusual names": (b"item\tsystem A\tgrader\tpoints\n1\tx\ty\t3\n", "jsonl",
                                              "tab-separated text with the columns item, system A, grader, points: "
                                              "import it with --from csv --map session=item,candidate=COLUMN,"
                                              "reviewer=grader,score=COLUMN"),
    "a PNG": (PNG, "llm-council", "not text (a PNG image)"),
    "a Parquet file": (b"PAR1\x15\x04\x15\x10" + bytes(range(256)) * 4, "csv",
                       "not text (a Parquet file): convert it to CSV and import that with --from csv "
                       "(docs/import-formats.md has a duckdb and a pandas one-liner)"),
    "random bytes": (random.Random(27).randbytes(300_000), "llm-council", "not text (bytes that are not UTF-8"),
    "UTF-16": (codecs.BOM_UTF16_LE + COUNCIL.encode("utf-16-le"), "llm-council",
               "UTF-16 text, not UTF-8: iconv -f UTF-16 -t UTF-8 FILE | council-db import -"),
    "FastChat single grading without --from": (SINGLE.read_bytes(), "llm-council",
                                               "FastChat single-answer judgments: add --from fastchat-single"),
    "FastChat pairwise judgments as single": (PAIR.read_bytes(), "fastchat-single",
                                              "FastChat pairwise judgments: add --from fastchat-pair"),
    "llm-council records as a review table": (COUNCIL.encode(), "fastchat-review",
                                              "llm-council bias records: leave out --from"),
    "AlpacaEval annotations without --from": (ALPACA_EVAL.read_bytes(), "llm-council",
                                              "AlpacaEval annotations (annotations.json): add --from alpaca-eval"),
    "llm-council records as AlpacaEval annotations": (COUNCIL.encode(), "alpaca-eval",
                                                      "llm-council bias records: leave out --from"),
    "arena-hard judgments without --from": (
        (ARENA_HARD / "model_judgment" / "gpt-4.1" / "qwen3-32b.jsonl").read_bytes(), "llm-council",
        "arena-hard-auto judgments: add --from arena-hard"),
    "arena-hard answers as judgments": (
        (ARENA_HARD / "model_answer" / "qwen3-32b.jsonl").read_bytes(), "arena-hard",
        "arena-hard-auto model answers (model_answer/*.jsonl): give their folder as --answers DIR when importing "
        "the judgments (--from arena-hard)"),
    "FastChat model answers as judgments": (
        (realdata.MT_BENCH_ANSWERS / "mistral-orpo.jsonl").read_bytes(), "fastchat-single",
        "FastChat model answers (model_answer/*.jsonl): give their folder as --answers DIR"),
    "a promptfoo results file without --from": (PROMPTFOO.read_bytes(), "llm-council",
                                                "a promptfoo results file: add --from promptfoo"),
    "a promptfoo results file as AlpacaEval annotations": (PROMPTFOO.read_bytes(), "alpaca-eval",
                                                           "a promptfoo results file: add --from promptfoo"),
    "a promptfoo results file as CSV": (PROMPTFOO.read_bytes(), "csv",
                                        "a promptfoo results file: add --from promptfoo"),
    "a promptfoo results file on one line as arena-hard": (
        json.dumps(json.loads(PROMPTFOO.read_bytes())).encode(), "arena-hard",
        "a promptfoo results file: add --from promptfoo"),
    "a promptfoo results file as LLMBar results, outside LLMBar's layout": (
        PROMPTFOO.read_bytes(), "llmbar", "a promptfoo results file: add --from promptfoo"),
    "llm-council records as promptfoo results": (COUNCIL.encode(), "promptfoo",
                                                 "llm-council bias records: leave out --from"),
    "AlpacaEval annotations as promptfoo results": (
        ALPACA_EVAL.read_bytes(), "promptfoo", "AlpacaEval annotations (annotations.json): add --from alpaca-eval"),
    "a JSON list as promptfoo results": (json.dumps(ALPACA, indent=2).encode(), "promptfoo",
                                         "line 1: not a JSON object: is this promptfoo's results.json?"),
}


def options(format: str, tmp_path) -> FormatOptions:
    return FormatOptions(format, answers=tmp_path if format == "fastchat-review" else None)


@both_backends
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_file_of_another_format_is_refused_saying_what_it_looks_like_and_nothing_is_stored(db, tmp_path, case):
    data, format, says = CASES[case]
    for path in (tmp_path / "in.jsonl", tmp_path / "in.jsonl.gz"):
        path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
        with pytest.raises(CouncilDbError) as refused:
            import_files(db, [str(path)], options=options(format, tmp_path))
        assert str(refused.value).startswith(f"{path}: {says.replace('FILE', str(path))}")
        assert str(refused.value).endswith("; nothing was imported")
    assert scalar(db, "SELECT COUNT(*) FROM imports") == scalar(db, "SELECT COUNT(*) FROM rejected_lines") == 0


def test_the_command_says_it_in_one_line_and_exits_1_even_for_stdin_creating_no_database(tmp_path):
    """stdin is looked at without being consumed (its buffer is peeked), before the database
    is opened: a file of another format creates nothing."""
    done = run_module("--db", str(tmp_path / "council.db"), "import", "-",
                      input=json.dumps(ALPACA, indent=2).encode())
    lines = done.stderr.decode().strip().splitlines()
    assert done.returncode == 1 and "Traceback" not in done.stderr.decode()
    assert lines[-1] == ("error: -: a JSON array, not JSON Lines: jq -c '.[]' | council-db import -; "
                         "nothing was imported")
    assert not (tmp_path / "council.db").exists()


@both_backends
def test_a_file_whose_first_100_lines_are_all_rejected_stops_there_and_stores_nothing(db, tmp_path):
    path = write_jsonl(tmp_path / "other.jsonl", [{"prompt": f"q{n}", "completion": "a"} for n in range(5_000)])
    with pytest.raises(CouncilDbError) as stopped:
        import_files(db, [str(path)])
    assert "lines were rejected before any line gave a record (line 1: session_id: missing" in str(stopped.value)
    assert scalar(db, "SELECT COUNT(*) FROM imports") == scalar(db, "SELECT COUNT(*) FROM rejected_lines") == 0


def test_it_stops_on_the_worker_process_path_too(db, tmp_path, monkeypatch):
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(pipeline, "SEGMENT_BYTES", 3_000)
    path = write_jsonl(tmp_path / "other.jsonl", ["not json"] * 2_000)
    with pytest.raises(CouncilDbError, match="lines were rejected before any line gave a record"):
        import_files(db, [str(path)])
    assert scalar(db, "SELECT COUNT(*) FROM imports") == 0


def test_bad_lines_before_a_record_are_kept_as_before_below_the_limit(db, tmp_path):
    path = write_jsonl(tmp_path / "in.jsonl", [{"prompt": "q"}] * (ALL_BAD_LINES - 1) + session())
    result = import_files(db, [str(path)]).files[0]
    assert (result.rejected, result.inserted) == (ALL_BAD_LINES - 1, 16)
    assert scalar(db, "SELECT COUNT(*) FROM rejected_lines") == ALL_BAD_LINES - 1


def test_a_file_of_the_format_with_a_broken_first_line_is_read_line_by_line(db, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"\x00\xff garbled by a crash\n" + COUNCIL.encode())
    result = import_files(db, [str(path)]).files[0]
    assert (result.rejected, result.inserted) == (1, 16)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=600), st.sampled_from(["llm-council", "fastchat-single", "fastchat-pair"]))
@example(b"\x01\r\x01", "llm-council")  # a lone carriage return: the csv module raised
def test_the_sniffer_says_something_or_nothing_about_any_bytes_and_never_raises(data, format):
    found = verdict(data, format, " FILE")
    assert found is None or (found and "\n" not in found)
