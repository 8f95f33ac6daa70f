"""The formats ``council-db import --from`` reads, and the options each one uses."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from council_db.contract.fields import REVIEWER_KINDS
from council_db.contract.storable import unstorable
from council_db.errors import CouncilDbError

LLM_COUNCIL = "llm-council"
FORMATS = (LLM_COUNCIL, "fastchat-single", "fastchat-pair", "fastchat-review", "llmbar", "judgebench", "arena-hard")
USES_ANSWERS = ("fastchat-single", "fastchat-pair", "fastchat-review", "arena-hard")
USES_BENCH = ("fastchat-single", "fastchat-pair", "llmbar", "judgebench", "arena-hard")
USES_JUDGE = ("fastchat-review", "llmbar", "judgebench", "arena-hard")
USES_BASELINE = ("arena-hard",)
DOCUMENTS = ("llmbar",)  # a file is one JSON document, not one JSON value a line
JUDGE_CHARS = 500  # the reviewer's name, as a record's (contract.record.Name)
BENCH_CHARS = 100  # room for "/q<question_id>/t<turn>" in a session key of at most 500


@dataclass(frozen=True)
class FormatOptions:
    """How ``council-db import`` reads its files: ``--from`` and the options of that format."""

    format: str = LLM_COUNCIL
    answers: Path | None = None  # the answers the judge saw, for their lengths
    bench: str | None = None  # the bench whose question ids the lines give (prefixes session keys)
    judge: str | None = None  # the judge model, for review tables whose lines name only a prompt
    reviewer_kind: str | None = None  # every reviewer's kind, unless its lines state one (any format)
    baseline: str | None = None  # the model every judged one is compared with (arena-hard)

    def key(self) -> str | None:
        """The options as an import's row keeps them (JSON; None without any): a file is
        resumed only by an import with the same (ingest/resume.py)."""
        given = {"answers": None if self.answers is None else str(self.answers.resolve()), "bench": self.bench,
                 "judge": self.judge, "baseline": self.baseline}
        present = {name: value for name, value in given.items() if value is not None}
        return json.dumps(present, sort_keys=True) if present else None

    def check(self) -> None:
        """Refuse options the format does not use, or names no record can store, before anything is read."""
        if self.format not in FORMATS:
            raise CouncilDbError(f"unknown format {self.format!r}: use one of {', '.join(FORMATS)}")
        if self.reviewer_kind is not None and self.reviewer_kind not in REVIEWER_KINDS:
            raise CouncilDbError(f"unknown reviewer kind {self.reviewer_kind!r}: use one of "
                                 f"{', '.join(REVIEWER_KINDS)}")
        for given, name, formats in ((self.answers, "--answers", USES_ANSWERS), (self.bench, "--bench", USES_BENCH),
                                     (self.judge, "--judge", USES_JUDGE), (self.baseline, "--baseline", USES_BASELINE)):
            if given is not None and self.format not in formats:
                raise CouncilDbError(f"{name} is for --from {' or '.join(formats)}, not {self.format}")
        for given, name, limit in ((self.judge, "--judge", JUDGE_CHARS), (self.bench, "--bench", BENCH_CHARS),
                                   (self.baseline, "--baseline", JUDGE_CHARS)):
            if given is not None and not 0 < len(given) <= limit:
                raise CouncilDbError(f"{name} has {len(given):,} characters; give a name of 1-{limit}")
            if given is not None and unstorable(given) is not None:
                raise CouncilDbError(f"{name} {unstorable(given)}")
        if self.format == "fastchat-review" and self.answers is None:
            raise CouncilDbError("--from fastchat-review needs --answers DIR (the answer_*.jsonl files): a review "
                                 "names its two answers by id, and only the answer files say which model wrote them")


def described(key: str | None) -> str:
    """Options kept as ``FormatOptions.key`` gives them, as the command line would give them."""
    if key is None:
        return "no --answers, --bench or --judge"
    return " ".join(f"--{name} {value}" for name, value in json.loads(key).items())
