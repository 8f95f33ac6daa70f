"""promptfoo's results.json read as its lines come, one result held at a time.

The file is one JSON object (``promptfoo export eval <evalId> -o results.json``, or ``promptfoo
eval -o results.json``): ``{"evalId", "results": {"version": 3, "timestamp", "prompts", "results":
[EvaluateResult, ...], "stats"}, "config", "shareableUrl", "metadata"}``, written by
JSON.stringify in that order. ``ResultsDocument`` reads the few lines before the results list
(evalId, results.version and results.timestamp: the header) token by token, then hands the list
to json_list, which gives each result as it ends; what follows the list is not read. The config
comes after the results, so its ``defaultTest`` (the default grader) is read from the file's end
by ``config_from_end``.
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from council_db.contract.fields import LineError
from council_db.ingest.formats.json_list import _TOKEN, Found, ListElements

WHAT = "promptfoo's results.json"
VERSION = 3  # EvaluateSummaryV3 (promptfoo src/types/index.ts)
REEXPORT = "export it again with a current promptfoo: promptfoo export eval <evalId> -o results.json"
TAIL_BYTES = 1024 * 1024  # the first look at the file's end for its config
CONFIG_BYTES = 64 * 1024 * 1024  # the most of the file's end searched for it
_CONFIG = re.compile(r'"config"\s*:\s*\{')


@dataclass
class Header:
    """What results.json says before its results: which eval, which output version, when."""

    eval_id: str | None = None
    version: Any = None
    version_line: int | None = None  # the line that gives it, where a wrong version is told
    timestamp: str | None = None


class ResultsDocument:
    """Fed results.json's lines in order; gives each element of ``results.results`` as it
    ends (json_list.Found), and a LineError where the document is not promptfoo's version 3."""

    def __init__(self) -> None:
        self.header = Header()
        self.kinds: list[bytes] = []  # the containers open around the current token: b"{" or b"["
        self.keys: list[str | None] = []  # the key each open container is the value of
        self.key: str | None = None  # the innermost object's current key
        self.expect_key = False
        self.elements: ListElements | None = None  # once results.results has started
        self.broken = False
        self.line = 0  # the line being read

    @property
    def started(self) -> bool:
        """Whether the results list has been reached (the header is then complete)."""
        return self.elements is not None

    def feed(self, number: int, line: bytes) -> Iterator[Found]:
        """The results that end on this line, and the problems it shows."""
        if self.elements is not None:
            yield from self.elements.feed(number, line)
            return
        if self.broken:
            return
        self.line = number
        for token in _TOKEN.finditer(line):
            problem = self._token(token.group())
            if problem is not None:
                self.broken = True
                told = self.header.version_line if problem.field == "results.version" else None
                yield told or number, problem
                return
            if self.elements is not None:
                yield from self.elements.feed(number, line[token.start():])
                return

    def feed_lines(self, first: int, lines: list[bytes]) -> Iterator[Found]:
        """feed() over a batch of lines numbered from ``first``; the results list's lines in bulk."""
        for index, line in enumerate(lines):
            if self.elements is not None:
                yield from self.elements.feed_lines(first + index, lines[index:])
                return
            yield from self.feed(first + index, line)

    def end(self) -> Iterator[Found]:
        """What is wrong when the input ends: no results list, or one left open."""
        if self.elements is not None:
            yield from self.elements.end()
        elif not self.broken:
            yield 1, LineError("results", f"no results.results list: is this {WHAT}? (an object with evalId, "
                                          "results: {version: 3, results: [...]}, config)")

    def _token(self, text: bytes) -> LineError | None:
        """One token before the results list: the structure followed, the header's values kept."""
        if not self.kinds and text != b"{":
            return LineError(None, f"not a JSON object: is this {WHAT}? ({REEXPORT})")
        if text in (b"{", b"["):
            return self._open(text)
        if text in (b"}", b"]"):
            self.kinds.pop()
            self.keys.pop()
            self.expect_key = False
            if not self.kinds:
                return LineError("results", f"the document ends without a results.results list; {WHAT} of "
                                            f"version {VERSION} has one ({REEXPORT})")
            return None
        if text == b",":
            self.expect_key = self.kinds[-1] == b"{"
            return None
        value = text.lstrip(b":")
        try:
            if self.expect_key and text.startswith(b'"'):
                self.key, self.expect_key = json.loads(text), False
            elif value:
                self._value(json.loads(value))
        except ValueError:  # bytes that are no JSON value (nor UTF-8); never quoted
            return LineError(None, f"not valid JSON before the results list; {WHAT} is one JSON object")
        return None

    def _open(self, bracket: bytes) -> LineError | None:
        """A container opens: the results list starts here, or it is one more level to follow."""
        where = (tuple(self.keys), self.key)
        if where == ((None,), "results") and bracket == b"[":
            return LineError("results", f"is a list, as promptfoo's output before version {VERSION} has it; this "
                                        f"reads results.version {VERSION} ({REEXPORT})")
        if where == ((None, "results"), "results") and bracket == b"[":
            if self.header.version != VERSION:
                return self._version_problem()
            self.elements = ListElements(WHAT, nested=True)
            return None
        self.keys.append(self.key if self.kinds and self.kinds[-1] == b"{" else None)
        self.kinds.append(bracket)
        self.key, self.expect_key = None, bracket == b"{"
        return None

    def _value(self, value: Any) -> None:
        """A scalar: kept when it is one of the header's."""
        where = (tuple(self.keys), self.key)
        if where == ((None,), "evalId") and isinstance(value, str):
            self.header.eval_id = value
        elif where == ((None, "results"), "version"):
            self.header.version, self.header.version_line = value, self.line
        elif where == ((None, "results"), "timestamp") and isinstance(value, str):
            self.header.timestamp = value

    def _version_problem(self) -> LineError:
        version = self.header.version
        if version is None:
            return LineError("results.version", f"missing; this reads {WHAT} of version {VERSION} ({REEXPORT})")
        shown = json.dumps(version) if isinstance(version, (int, float)) else f"a {type(version).__name__}"
        return LineError("results.version", f"is {shown}; this reads version {VERSION} ({REEXPORT})")


def opening_problem(sample: bytes, cut: bool) -> tuple[int, LineError] | None:
    """The first problem the start of a file shows before its results list, if any (``cut``:
    the sample may end inside a line, which is not judged)."""
    document = ResultsDocument()
    for number, line in _whole_lines(sample, cut):
        for found in document.feed(number, line):
            if isinstance(found[1], LineError) and not document.started:
                return found  # type: ignore[return-value]
        if document.started:
            return None
    return None


def looks_like_results(sample: bytes, cut: bool) -> bool:
    """Whether the start of a file is promptfoo's results.json, of any output version: an
    object whose ``results`` object has a ``version``."""
    document = ResultsDocument()
    for number, line in _whole_lines(sample, cut):
        list(document.feed(number, line))
        if document.header.version is not None:
            return True
        if document.broken or document.started:
            return False
    return False


def _whole_lines(sample: bytes, cut: bool) -> Iterator[tuple[int, bytes]]:
    """The sample's lines by number, without the last when the sample may cut it."""
    lines = sample.split(b"\n")
    return enumerate(lines[:-1] if cut else lines, start=1)


def config_from_end(path: Path, gzipped: bool) -> dict[str, Any] | None:
    """The document's top-level ``config`` object, found in its last CONFIG_BYTES; None when it
    has none there. The end is searched from the back, a larger piece at a time."""
    opener = gzip.open if gzipped else open
    with opener(path, "rb") as handle:
        size = handle.seek(0, 2)
        piece = TAIL_BYTES
        while True:
            start = max(0, size - piece)
            handle.seek(start)
            found = _top_level_config(handle.read().decode("utf-8", "replace"))
            if found is not None or start == 0 or piece >= CONFIG_BYTES:
                return found
            piece *= 4


def _top_level_config(text: str) -> dict[str, Any] | None:
    """The last ``"config": {...}`` of the text that the rest of the document closes: what
    follows it is the top-level object's last members and its closing brace."""
    decoder = json.JSONDecoder()
    for match in reversed(list(_CONFIG.finditer(text))):
        try:
            config, end = decoder.raw_decode(text, match.end() - 1)
        except ValueError:
            continue
        rest = text[end:].strip()
        if rest == "}" or (rest.startswith(",") and _closes_object(rest[1:])):
            return config if isinstance(config, dict) else None
    return None


def _closes_object(members: str) -> bool:
    """Whether ``members`` are an object's last members and its closing brace."""
    try:
        return isinstance(json.loads("{" + members), dict)
    except ValueError:
        return False
