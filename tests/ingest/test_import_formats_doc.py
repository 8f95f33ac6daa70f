"""What docs/import-formats.md and the README show a user imports as shown: each format's
minimal line, and the README's "Bring any judge's scores" commands run as typed."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from council_db.ingest.formats.mapping import parsed_map
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from tests.conftest import run_module

ROOT = Path(__file__).resolve().parents[2]
MINIMAL = re.compile(r"^\| `([a-z-]+)` \| `(.+?)`(?:, with `--map (\S+)`| \(with `--answers DIR`.*\))?\s*\|$")


def minimal_lines() -> dict[str, tuple[str, str | None]]:
    """--from -> (its minimal line, the --map it is shown with), from the doc's table."""
    text = (ROOT / "docs" / "import-formats.md").read_text(encoding="utf-8")
    table = text.split("## A minimal line of each format", 1)[1].split("\n## ", 1)[0]
    return {found[1]: (found[2], found[3]) for found in map(MINIMAL.match, table.splitlines()) if found}


def test_the_table_shows_a_line_for_every_format_but_the_one_of_whole_documents():
    from council_db.ingest.formats.options import DOCUMENTS, FORMATS

    assert sorted(minimal_lines()) == sorted(set(FORMATS) - set(DOCUMENTS))


@pytest.mark.parametrize("format", sorted(minimal_lines()))
def test_each_minimal_line_imports_as_shown(db, tmp_path, format):
    line, mapping = minimal_lines()[format]
    path = tmp_path / "in.txt"
    if "` then `" in line:  # a CSV's header then its row; a run log's spec line then an event
        first, then = re.fullmatch(r"(.+)` then `(.+)", line).groups()
        path.write_text(f"{first}\n{then}\n", encoding="utf-8")
    else:
        path.write_text(line + "\n", encoding="utf-8")
    answers = None
    if format == "fastchat-review":
        answers = tmp_path / "answer"
        answers.mkdir()
        (answers / "answer_m.jsonl").write_text("".join(json.dumps(
            {"answer_id": f"a{n}", "model_id": f"m{n}", "question_id": 1, "text": "An answer."}) + "\n"
            for n in (1, 2)), encoding="utf-8")
    pairs = tuple(sorted(parsed_map([mapping]).items())) if mapping else ()
    result = import_files(db, [str(path)], options=FormatOptions(format, answers=answers, mapping=pairs)).files[0]
    assert result.rejected == 0 and result.inserted >= 1, [bad.reason for bad in result.rejected_lines]


def readme_commands() -> list[list[str]]:
    """The README's "Bring any judge's scores" commands, continued lines joined."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Bring any judge's scores", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [shlex.split(command) for command in block.replace("\\\n", " ").splitlines() if command.strip()]


def test_the_readme_example_imports_the_tiny_csv_and_shows_its_records(tmp_path):
    commands = readme_commands()
    assert [command[:1] for command in commands] == [["council-db"]] * 2
    for command in commands:  # run in a scratch folder, reading the repository's tests/data
        args = [str(ROOT / arg) if arg.startswith("tests/data/") else arg for arg in command[1:]]
        done = run_module(*args, cwd=tmp_path)
        assert done.returncode == 0, done.stderr.decode()
    assert "warning" not in done.stderr.decode()
    stats = json.loads(run_module("--db", str(tmp_path / "scores.db"), "stats", "--json").stdout)
    assert (stats["records"], stats["sessions"]) == (16, 4), stats
