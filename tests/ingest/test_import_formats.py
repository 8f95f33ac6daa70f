"""What every format shares: --from and its options on the command line, one import path
(worker processes, resuming a grown file, provenance), and a file read in the wrong format
first still read whole in the right one."""

from __future__ import annotations

import json

import pytest

from council_db.cli import importing
from council_db.ingest import pipeline
from council_db.ingest.formats.options import FORMATS, FormatOptions
from council_db.ingest.formats.readers import reader
from council_db.ingest.importer import import_files
from council_db.ingest.sources import resolve_sources
from tests import realdata
from tests.conftest import Cli, session, write_jsonl

SINGLE = realdata.MT_BENCH / "model_judgment" / "gpt-4_single.jsonl"
ANSWERS = realdata.MT_BENCH / "model_answer"


def test_import_help_lists_every_format_and_its_options(tmp_path):
    shown = Cli(tmp_path / "council.db")("import", "--help").output
    assert list(importing.FORMATS) == list(FORMATS) and FORMATS[0] == "llm-council"
    assert all(name in shown for name in FORMATS)
    assert all(option in shown for option in ("--from", "--answers", "--bench", "--judge", "--baseline"))


@pytest.mark.parametrize("args, says", [
    (("--answers", "."), "--answers is for --from fastchat-single or fastchat-pair or fastchat-review or arena-hard, "
                         "not llm"),
    (("--from", "fastchat-pair", "--baseline", "gpt-4"), "--baseline is for --from arena-hard, not fastchat-pair"),
    (("--from", "fastchat-single", "--judge", "gpt-4"), "--judge is for --from fastchat-review"),
    (("--from", "fastchat-review", "--bench", "mt_bench", "--answers", "."), "--bench is for --from fastchat-single"),
    (("--from", "nothing"), "'nothing' is not one of"),
])
def test_an_option_the_format_does_not_use_is_a_usage_error_before_anything_is_read(tmp_path, args, says):
    cli = Cli(tmp_path / "council.db")
    result = cli("import", str(SINGLE), *args)
    assert result.exit_code == 2 and says in " ".join(result.output.split()), result.output
    assert not (tmp_path / "council.db").exists()


def test_a_file_read_first_in_the_wrong_format_is_read_whole_in_the_right_one(tmp_path):
    """A file that plainly is another format is refused up front (tests/ingest/test_sniff.py);
    one whose first line says nothing is read, and its import in the wrong format is no
    resume point for the right one."""
    unclear = tmp_path / "unclear.jsonl"
    unclear.write_text("{}\n" + "".join(SINGLE.read_text(encoding="utf-8").splitlines(keepends=True)[:50]))
    cli = Cli(tmp_path / "council.db")
    wrong = cli("import", str(unclear), "--format", "json")
    assert (wrong.exit_code, json.loads(wrong.stdout)["rejected"]) == (3, 51)
    assert "session_id: missing" in wrong.stderr
    right = json.loads(cli("import", "--from", "fastchat-single", str(unclear), "--format", "json").stdout)
    read = right["files"][0]
    assert (right["inserted"], right["rejected"], read["mode"], read["format"]) == (50, 1, "full", "fastchat-single")
    formats = json.loads(cli("sql", "SELECT format FROM imports ORDER BY id", "--format", "json").stdout)
    assert [row["format"] for row in formats] == ["llm-council", "fastchat-single"]


def test_llm_council_files_import_as_before_by_default(tmp_path):
    cli = Cli(tmp_path / "council.db")
    summary = json.loads(cli("import", str(write_jsonl(tmp_path / "in.jsonl", session())), "--format", "json").stdout)
    assert (summary["inserted"], summary["files"][0]["format"], summary["unknown_length"]) == (16, "llm-council", 0)


def test_worker_processes_read_a_judge_log_as_this_process_does(tmp_path, monkeypatch):
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(pipeline, "SEGMENT_BYTES", 200_000)
    source = resolve_sources([str(SINGLE)])[0]
    parse = reader(FormatOptions("fastchat-single", answers=ANSWERS), source)
    alone = list(pipeline.chunks(source, 0, 1, parse))
    parts = pipeline.segments(source, 0, source.size)
    together = list(pipeline.chunks_in_workers(source, parts, 1, 2, parse))
    assert len(parts) > 5

    def rows(chunks):
        batches = [chunk.normalised.rows for chunk in chunks]
        return [(batch.session_keys[i], int(length), float(score)) for batch in batches
                for i, length, score in zip(batch.session, batch.length, batch.score)]

    assert rows(together) == rows(alone) and len(rows(alone)) == 800
    assert together[-1].last_line == alone[-1].last_line == 800


def test_the_python_api_takes_the_format_too(tmp_path, db):
    summary = import_files(db, [str(SINGLE)], options=FormatOptions("fastchat-single", answers=ANSWERS))
    assert (summary.total("inserted"), summary.total("unknown_length")) == (800, 157)
