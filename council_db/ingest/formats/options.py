"""The formats ``council-db import --from`` reads, and the options each one uses."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from council_db.contract.fields import REVIEWER_KINDS, LineError
from council_db.contract.scales import score_scale
from council_db.contract.storable import unstorable
from council_db.errors import CouncilDbError
from council_db.ingest.formats.mapping import Pairs, checked_pairs

LLM_COUNCIL = "llm-council"
FORMATS = (LLM_COUNCIL, "fastchat-single", "fastchat-pair", "fastchat-review", "llmbar", "judgebench", "alpaca-eval",
           "arena-hard", "csv", "jsonl", "openai-evals", "promptfoo", "inspect")
USES_ANSWERS = ("fastchat-single", "fastchat-pair", "fastchat-review", "arena-hard")
USES_BENCH = ("fastchat-single", "fastchat-pair", "llmbar", "judgebench", "alpaca-eval", "arena-hard", "promptfoo")
USES_JUDGE = ("fastchat-review", "llmbar", "judgebench", "alpaca-eval", "arena-hard", "promptfoo")
USES_BASELINE = ("arena-hard",)
DOCUMENTS = ("llmbar", "alpaca-eval", "promptfoo", "inspect")  # a file is one JSON document, not one JSON value a line
MAPPED = ("csv", "jsonl")  # any table of scores, read through a mapping of its columns (formats/mapping.py)
RUN_LOGS = ("openai-evals",)  # JSON Lines whose first line says what the rest are: read in order, by one reader
IN_ORDER = DOCUMENTS + RUN_LOGS  # read by one reader, and read whole again when the file changed
USES_SCALE = MAPPED + ("openai-evals", "inspect")  # --scale: the scale of scores given as plain numbers
QUOTED = ("csv",)  # rows that may run over several lines inside a quoted field (ingest/quoted_rows.py)
DELIMITERS = {"comma": ",", "tab": "\t", "semicolon": ";", "pipe": "|"}
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
    mapping: Pairs = ()  # csv, jsonl: (role, column) pairs
    scale: str | None = None  # csv, jsonl: the scores' scale, else inferred from the first scores
    delimiter: str | None = None  # csv: the separator, else "," or a tab as the header shows
    baseline: str | None = None  # the model every judged one is compared with (arena-hard)

    def key(self) -> str | None:
        """The options as an import's row keeps them (JSON; None without any): a file is
        resumed only by an import with the same (ingest/resume.py)."""
        given = {"answers": None if self.answers is None else str(self.answers.resolve()), "bench": self.bench,
                 "judge": self.judge, "map": ",".join(f"{role}={column}" for role, column in self.mapping) or None,
                 "scale": self.scale, "delimiter": self.delimiter, "baseline": self.baseline}
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
        self._check_mapped()
        if self.format == "fastchat-review" and self.answers is None:
            raise CouncilDbError("--from fastchat-review needs --answers DIR (the answer_*.jsonl files): a review "
                                 "names its two answers by id, and only the answer files say which model wrote them")

    def _check_mapped(self) -> None:
        """--map and --scale are for the mapped formats, which need a mapping; --delimiter for csv."""
        if self.mapping and self.format not in MAPPED:
            raise CouncilDbError(f"--map is for --from {' or '.join(MAPPED)}, not {self.format}")
        if self.scale and self.format not in USES_SCALE:
            raise CouncilDbError(f"--scale is for --from {', '.join(USES_SCALE[:-1])} or {USES_SCALE[-1]}, not "
                                 f"{self.format}")
        if self.format in MAPPED and not self.mapping:
            raise CouncilDbError(f"--from {self.format} needs --map ROLE=COLUMN,... or --map-file FILE: which column "
                                 "holds the session, the candidate, the reviewer and the score")
        if self.delimiter is not None and self.format != "csv":
            raise CouncilDbError(f"--delimiter is for --from csv, not {self.format}")
        if self.delimiter is not None and (len(self.delimiter) != 1 or self.delimiter in '"\r\n'):
            raise CouncilDbError(f"--delimiter {self.delimiter!r} is not one character other than a quote or a line "
                                 f"break; give one, or {', '.join(DELIMITERS)}")
        if self.scale is not None:
            score_scale_or_error(self.scale)
        checked_pairs(dict(self.mapping))


def delimiter_named(text: str) -> str:
    """--delimiter as typed: one character, or its name (tab is hard to type)."""
    return DELIMITERS.get(text, text)


def score_scale_or_error(text: str) -> None:
    """CouncilDbError when --scale is not LOW-HIGH."""
    try:
        score_scale(text)
    except LineError:
        raise CouncilDbError(f"--scale {text!r} is not LOW-HIGH with LOW below HIGH; give e.g. 1-10 or 0-1") from None


def described(key: str | None) -> str:
    """Options kept as ``FormatOptions.key`` gives them, as the command line would give them."""
    if key is None:
        return "no --answers, --bench or --judge"
    return " ".join(f"--{name} {value}" for name, value in json.loads(key).items())
