"""The formats ``council-db import --from`` reads, and the options each one uses."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from council_db.errors import CouncilDbError

LLM_COUNCIL = "llm-council"
FORMATS = (LLM_COUNCIL, "fastchat-single", "fastchat-pair", "fastchat-review")
USES_ANSWERS = ("fastchat-single", "fastchat-pair", "fastchat-review")
USES_BENCH = ("fastchat-single", "fastchat-pair")
USES_JUDGE = ("fastchat-review",)


@dataclass(frozen=True)
class FormatOptions:
    """How ``council-db import`` reads its files: ``--from`` and the options of that format."""

    format: str = LLM_COUNCIL
    answers: Path | None = None  # the answers the judge saw, for their lengths
    bench: str | None = None  # the bench whose question ids the lines give (prefixes session keys)
    judge: str | None = None  # the judge model, for review tables whose lines name only a prompt

    def key(self) -> str | None:
        """The options as an import's row keeps them (JSON; None without any): a file is
        resumed only by an import with the same (ingest/resume.py)."""
        given = {"answers": None if self.answers is None else str(self.answers.resolve()), "bench": self.bench,
                 "judge": self.judge}
        present = {name: value for name, value in given.items() if value is not None}
        return json.dumps(present, sort_keys=True) if present else None

    def check(self) -> None:
        """Refuse options the format does not use, before anything is read."""
        if self.format not in FORMATS:
            raise CouncilDbError(f"unknown format {self.format!r}: use one of {', '.join(FORMATS)}")
        for given, name, formats in ((self.answers, "--answers", USES_ANSWERS), (self.bench, "--bench", USES_BENCH),
                                     (self.judge, "--judge", USES_JUDGE)):
            if given is not None and self.format not in formats:
                raise CouncilDbError(f"{name} is for --from {' or '.join(formats)}, not {self.format}")
        if self.format == "fastchat-review" and self.answers is None:
            raise CouncilDbError("--from fastchat-review needs --answers DIR (the answer_*.jsonl files): a review "
                                 "names its two answers by id, and only the answer files say which model wrote them")


def described(key: str | None) -> str:
    """Options kept as ``FormatOptions.key`` gives them, as the command line would give them."""
    if key is None:
        return "no --answers, --bench or --judge"
    return " ".join(f"--{name} {value}" for name, value in json.loads(key).items())
