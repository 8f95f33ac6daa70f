"""What an import stores, as export gives it back, is pinned: per file, a digest of its exported
lines (natural keys, scores, times, envelopes), sorted, as the code before the importers' speed
work (issue 30, item 7: a grading's own time kept as a number, revision 0018) stored them. Real
FastChat files in tests/data (single, pairwise, review gradings), the simulator's llm-council
lines and an OpenAI evals run log (tests/data/openai-evals). A change of what any of them stores
fails here."""

from __future__ import annotations

import hashlib
import io
from datetime import datetime, timezone
from pathlib import Path

import pytest

from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from council_db.outlets import export
from council_db.simulate import SimulationConfig, write_jsonl
from council_db.store.database import open_database
from tests import realdata

DATA = Path(__file__).parents[1] / "data"
REVIEW = (realdata.FASTCHAT / "review" / "vicuna-13b-20230322-clean-lang"
          / "review_alpaca-13b_vicuna-13b-20230322-clean-lang.jsonl")
PAIR = DATA / "fastchat-pair" / "mt_bench" / "model_judgment" / "gpt-4_pair.jsonl"
# file -> (how it is read, the digest of its export as commit 1ccaad5 stored it, its records)
CASES = {
    "fastchat-single": (FormatOptions("fastchat-single", answers=realdata.MT_BENCH_ANSWERS),
                        "9c44da6c798488d094dc3364277ac54f8532518693c18709b8a69ab094ad08d3", 800),
    "fastchat-pair": (FormatOptions("fastchat-pair"),
                      "08dd3d69c4d5e902d315ec22c6edc7b28ee31df10c74fda2c015e0194aeda361", 54),
    "fastchat-review": (FormatOptions("fastchat-review", answers=realdata.FASTCHAT_ANSWERS),
                        "a9134722e0149e4125aa64970594758eedb90b52b72aa7bd9ef7d4f52bda069a", 160),
    "openai-evals": (FormatOptions("openai-evals"),
                     "04f7a9b9631a8553c68f3bec682f4a1b5ca3ab3eb982557694306bae49c5e393", 6),
    "llm-council": (FormatOptions(), "1d8fafe1e5e9fa7df7328d795f996c09dc703aa4f4a2c57469a4a4479acac298", 4800),
}


# the simulator ends at today's midnight: its times fixed as they were when the digest was taken
PINNED_END = datetime(2026, 11, 28, tzinfo=timezone.utc)


def source(name: str, folder: Path) -> Path:
    if name == "llm-council":  # 300 sessions of 4 judges x 4 candidates, each its own time
        path = folder / "bias_metrics.jsonl"
        with path.open("wb") as out:
            write_jsonl(SimulationConfig(sessions=300, seed=3, end=PINNED_END), out)
        return path
    return {"fastchat-single": realdata.MT_BENCH_JUDGMENTS, "fastchat-pair": PAIR, "fastchat-review": REVIEW,
            "openai-evals": DATA / "openai-evals" / "ab-gpt-4o-mini.jsonl"}[name]


def exported_digest(name: str, folder: Path) -> tuple[str, int]:
    """The digest of the file's records as export gives them back, in a fresh database, and how many."""
    db = open_database(f"sqlite:///{folder / 'council.db'}", notify=lambda _: None)
    try:
        import_files(db, [str(source(name, folder))], options=CASES[name][0])
        out = io.StringIO()
        count = export.write(db, export.ExportFilter(), out)
    finally:
        db.engine.dispose()
    lines = sorted(out.getvalue().splitlines())
    return hashlib.sha256("\n".join(lines).encode()).hexdigest(), count


@pytest.mark.parametrize("name", list(CASES))
def test_every_stored_record_exports_as_before_the_speed_work(name, tmp_path):
    _, expected, records = CASES[name]
    assert exported_digest(name, tmp_path) == (expected, records)


if __name__ == "__main__":  # the digests of the code on the path: python -m tests.ingest.test_stored_result
    import tempfile

    for case in CASES:
        with tempfile.TemporaryDirectory() as folder:
            print(case, *exported_digest(case, Path(folder)))
