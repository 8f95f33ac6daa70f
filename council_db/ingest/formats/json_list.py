"""The elements of a JSON list read as its lines come, one element held at a time.

A file that is one JSON list (AlpacaEval's annotations.json: a list of objects, pretty-printed
or on one line) has no line per record, and reading it whole costs its size in memory. JSON
forbids a raw line break inside a string, so every string starts and ends on one line: a line
can be scanned on its own for the brackets that open and close an element, strings skipped.
Each element is given the number of the line it starts on, so a bad element is rejected by
that line and its neighbours are kept. A sequence of objects without the list around them
(JSON Lines, or ``jq -c '.[]'``'s output) is read the same way.

Only the structure is judged here; whether an element's text is valid JSON, and an object
with the format's fields, is its reader's question (judge_lines.LineReader).
"""

from __future__ import annotations

import re
from typing import Iterator, Union

from council_db.contract.fields import LineError

ELEMENT_BYTES = 16 * 1024 * 1024  # one element at most (AlpacaEval's run to tens of KiB)
# A string (escapes kept inside it), a bracket, a comma, or a run of anything else
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},]|[^\s"\[\]{},]+')
_OPEN, _CLOSE = (b"[", b"{"), (b"]", b"}")
_BRACKET = re.compile(rb"[\[\]{}]")
_STRING = re.compile(rb'"[^"\\\n]*(?:\\.[^"\\\n]*)*"')  # as _TOKEN reads a string, within one line

Found = tuple[int, Union[bytes, LineError]]  # (the line an element starts on, its JSON text or its problem)


class ListElements:
    """Fed a document's lines in order; gives each element of its top-level list as it ends,
    and a LineError (with its line) where the structure goes wrong."""

    def __init__(self, what: str, *, nested: bool = False):
        self.what = what  # the document, as messages name it: "AlpacaEval's annotations.json"
        self.nested = nested  # a list inside a document: what follows its closing ] is the document's, not read
        self.state = "start"  # start | element (one is due) | separator (, or ] is due) | inside | end | broken
        self.in_list = False  # False: a sequence of objects without [ ] around them
        self.depth = 0
        self.start = 0  # the line the current element starts on
        self.parts: list[bytes] = []
        self.held = 0  # bytes of the current element held so far; -1 once it is too large to hold
        self.last_line = 0

    def feed(self, number: int, line: bytes) -> Iterator[Found]:
        """The elements that end on this line (and the problems it shows), in order."""
        self.last_line = number
        if self.state == "inside" and self._goes_on(line):  # most of an element's lines
            self._hold(line + b"\n")
            return
        if self.state == "broken" or (self.nested and self.state == "end"):
            return
        first = 0  # where the current element's text starts on this line
        for token in _TOKEN.finditer(line):
            text = token.group()
            if self.state == "inside":
                if text in _OPEN:
                    self.depth += 1
                elif text in _CLOSE:
                    self.depth -= 1
                    if self.depth == 0:
                        yield self._ended(line[first:token.end()])
                continue
            found = self._between(number, text)
            if found is not None:
                yield found
            if self.state == "broken" or (self.nested and self.state == "end"):
                return
            if self.state == "inside":
                first = token.start()
        if self.state == "inside":
            self._hold(line[first:] + b"\n")

    def feed_lines(self, first: int, lines: list[bytes]) -> Iterator[Found]:
        """feed() over a batch of lines, numbered from ``first``, an element's inner lines taken
        in bulk: the batch's brackets outside strings are counted in one pass, and only a line
        that may end an element, or lies between elements, is read token by token."""
        bare = _STRING.sub(b"", b"\n".join(lines))  # strings hold no line break: the lines stay
        index, position = 0, 0  # the next line, and where it starts in bare
        while index < len(lines):
            if self.state == "inside":
                ending = self._ending(bare, position)
                if ending is None:  # the element goes on past the batch
                    self._bulk(lines[index:], bare, position, len(bare))
                    break
                start = bare.rfind(b"\n", position, ending) + 1 or position  # the line that may end it
                count = bare.count(b"\n", position, start)
                self._bulk(lines[index:index + count], bare, position, start)
                index, position = index + count, start
            yield from self.feed(first + index, lines[index])
            index, position = index + 1, bare.find(b"\n", position) + 1
        self.last_line = max(self.last_line, first + len(lines) - 1)

    def _ending(self, bare: bytes, position: int) -> int | None:
        """Where in ``bare`` the current element's closing bracket is, if it is there."""
        depth = self.depth
        for found in _BRACKET.finditer(bare, position):
            depth += 1 if found.group() in _OPEN else -1
            if depth == 0:
                return found.start()
        return None

    def _bulk(self, lines: list[bytes], bare: bytes, start: int, end: int) -> None:
        """Hold whole lines of the current element; its depth then is what they leave."""
        if not lines:
            return
        between = bare[start:end]
        self.depth += between.count(b"[") + between.count(b"{") - between.count(b"]") - between.count(b"}")
        self._hold(b"\n".join(lines) + b"\n")

    def end(self) -> Iterator[Found]:
        """What is wrong when the input ends: an element or the list left open (a file cut short)."""
        if self.state == "inside":
            yield self.start, LineError(None, f"{self.what} ends inside the entry that starts here (cut short?); "
                                              "the entries before it are kept")
        elif self.in_list and self.state in ("element", "separator"):
            yield self.last_line, LineError(None, f"{self.what} ends before the list's closing ] (cut short?); "
                                                  "the entries before it are kept")

    def _between(self, number: int, text: bytes) -> Found | None:
        """A token outside any element: the list's own brackets and commas, or an element's start."""
        state = self.state
        if state == "start" and text == b"[":
            self.state, self.in_list = "element", True
            return None
        if state == "start" and text != b"{":
            self.state = "broken"
            return number, LineError(None, f"not a JSON list of objects: is this {self.what}? see council-db "
                                           "import --help")
        if state == "end":
            self.state = "broken"
            return number, LineError(None, f"text after the list's closing ]: {self.what} is one JSON list")
        if self.in_list and text == b"]":
            self.state = "end"
            return None
        if self.in_list and text == b",":
            self.state = "element"
            return None if state == "separator" else (number, LineError(None, "a comma where an entry is due (two "
                                                                               "commas, or one after [)"))
        if text in _OPEN:
            self.state, self.depth, self.start, self.parts, self.held = "inside", 1, number, [], 0
            if self.in_list and state == "separator":
                return number, LineError(None, "no comma before the entry that starts here")
            return None
        self.state = "separator"
        return number, LineError(None, f"an entry that is not an object ({_kind(text)}); {self.what} lists "
                                       "objects")

    def _goes_on(self, line: bytes) -> bool:
        """Whether the current element goes on past this whole line, its depth then counted: a
        line without brackets, or whose closing brackets (outside strings) cannot close it. A
        line that may end the element is read token by token."""
        if _BRACKET.search(line) is None:
            return True
        bare = _STRING.sub(b"", line) if b'"' in line else line
        closing = bare.count(b"]") + bare.count(b"}")
        if self.depth - closing <= 0:
            return False
        self.depth += bare.count(b"[") + bare.count(b"{") - closing
        return True

    def _hold(self, piece: bytes) -> None:
        """Keep a piece of the current element, unless it has grown past ELEMENT_BYTES."""
        if self.held < 0:
            return
        self.held += len(piece)
        if self.held > ELEMENT_BYTES:
            self.parts, self.held = [], -1
        else:
            self.parts.append(piece)

    def _ended(self, piece: bytes) -> Found:
        self._hold(piece)
        self.state = "separator"
        if self.held < 0:
            return self.start, LineError(None, f"an entry of more than {ELEMENT_BYTES:,} bytes, not held; an entry "
                                               f"of {self.what} is a few KiB")
        text, self.parts = b"".join(self.parts), []
        return self.start, text


def _kind(text: bytes) -> str:
    """What a scalar element is, by its first byte (its text is never quoted)."""
    if text.startswith(b'"'):
        return "a string"
    if text in (b"true", b"false"):
        return "a boolean"
    return "null" if text == b"null" else "a number" if text[:1] in b"-0123456789" else "not JSON"
