"""pydantic validates only what msgspec refuses (ingest/fast_decode.py), so an import whose
every line msgspec takes builds none of pydantic's validators: they are built on the first
refusal (a fresh process counts them; building them was ~0.05 s of every import's start)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import record, write_jsonl

COUNTED_IMPORT = """
import sys
import pydantic
built = []
init = pydantic.TypeAdapter.__init__
def counted(self, *args, **kwargs):
    built.append(1)
    init(self, *args, **kwargs)
pydantic.TypeAdapter.__init__ = counted
from council_db.cli.app import main
sys.argv = ["council-db", *sys.argv[1:]]
try:
    main()
except SystemExit as end:
    print(end.code or 0)
print(len(built))
"""


def adapters_built(db_path, *arguments: str) -> tuple[int, int]:
    """The import's exit code and the validators it built."""
    done = subprocess.run([sys.executable, "-c", COUNTED_IMPORT, "--db", f"sqlite:///{db_path}", "import", "-q",
                           *arguments], capture_output=True, text=True, check=True)
    code, built = done.stdout.split()[-2:]
    return int(code), int(built)


def test_an_import_of_good_lines_builds_no_pydantic_validator_and_a_bad_line_builds_it(tmp_path):
    single = tmp_path / "gpt-4_single.jsonl"
    single.write_text("".join(json.dumps({"question_id": 81 + n, "model": "m", "judge": ["gpt-4", "single-v1"],
                                          "score": 5, "turn": 1, "tstamp": 1.7e9 + n}) + "\n" for n in range(20)))
    council = write_jsonl(tmp_path / "council.jsonl", [record(session_id=f"s{n}") for n in range(20)])
    bad = write_jsonl(tmp_path / "bad.jsonl", [record(session_id="s"), record(session_id="t", score_value="high")])

    assert adapters_built(tmp_path / "a.db", "--from", "fastchat-single", str(single)) == (0, 0)
    assert adapters_built(tmp_path / "b.db", str(council)) == (0, 0)
    _, built = adapters_built(tmp_path / "c.db", str(bad))
    assert built >= 1, "a refused line is explained by pydantic"
