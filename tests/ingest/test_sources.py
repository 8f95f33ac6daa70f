"""An input that is not a regular file is either read as what it is (a FIFO, a pipe given as
/dev/fd/N by the shell's <(...)) or refused with what it is: a directory, a dangling symlink,
a symlink loop; "no such file" only when there is none."""

from __future__ import annotations

import os
import socket
import threading

import pytest

from council_db.errors import CouncilDbError
from council_db.ingest.sources import resolve_sources
from tests.conftest import scalar, session, write_jsonl


def refusal(name: str) -> str:
    with pytest.raises(CouncilDbError) as caught:
        resolve_sources([name])
    return str(caught.value)


def test_a_directory_is_refused_as_a_directory(tmp_path):
    assert refusal(str(tmp_path)) == f"{tmp_path} is a directory: give a bias_metrics.jsonl file in it"


def test_a_dangling_symlink_is_refused_naming_where_it_points(tmp_path):
    link = tmp_path / "latest.jsonl"
    link.symlink_to(tmp_path / "gone.jsonl")

    assert refusal(str(link)) == f"{link} is a symlink to {tmp_path / 'gone.jsonl'}, which does not exist"


def test_a_symlink_loop_is_refused_as_a_loop(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")

    assert refusal(str(tmp_path / "a")) == f"{tmp_path / 'a'} is a symlink loop: it never reaches a file"


def test_a_socket_is_refused_as_a_socket(tmp_path):
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(tmp_path / "s"))
        assert refusal(str(tmp_path / "s")).startswith(f"{tmp_path / 's'} is a socket")


def test_a_missing_file_is_still_no_such_file(tmp_path):
    assert refusal(str(tmp_path / "typo.jsonl")).startswith(f"{tmp_path / 'typo.jsonl'}: no such file")


def _feed(fifo, lines: bytes) -> threading.Thread:
    def write() -> None:
        with open(fifo, "wb") as out:
            out.write(lines)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return writer


def test_a_fifo_is_read_as_a_stream_like_stdin(tmp_path, cli, db):
    fifo = tmp_path / "records.fifo"
    os.mkfifo(fifo)
    writer = _feed(fifo, write_jsonl(tmp_path / "in.jsonl", session()).read_bytes())

    result = cli("import", str(fifo))
    writer.join(timeout=10)

    assert result.exit_code == 0, result.output
    assert f"{fifo} (import 1): 16 lines, 16 new records" in result.stderr
    assert scalar(db, "SELECT source_kind FROM imports") == "stream"


def test_a_pipe_named_by_its_descriptor_is_read_too(tmp_path, cli):
    read_end, write_end = os.pipe()
    writer = _feed(write_end, write_jsonl(tmp_path / "in.jsonl", session()).read_bytes())
    try:
        result = cli("import", f"/dev/fd/{read_end}")
    finally:
        writer.join(timeout=10)
        os.close(read_end)

    assert result.exit_code == 0, result.output
    assert "16 new records" in result.stderr
