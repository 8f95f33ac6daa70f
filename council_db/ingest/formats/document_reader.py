"""A reader of one JSON document whose entries are a list streamed a batch of lines at a time
(AlpacaEval's annotations, promptfoo's results): each entry is read as a line of a line format
is, and what is wrong with the list itself is rejected at the line it starts on."""

from __future__ import annotations

from typing import Iterator, Protocol

from council_db.contract.fields import LineError
from council_db.ingest.formats.judge_lines import LineReader
from council_db.ingest.lines import LineBatch, Parsed
from council_db.ingest.rejected import from_line_error

Found = tuple[int, "bytes | LineError"]


class Entries(Protocol):
    """What finds a document's entries: json_list.ListElements, or a wrapper around one."""

    def feed_lines(self, first: int, lines: list[bytes]) -> Iterator[Found]: ...

    def end(self) -> Iterator[Found]: ...


class DocumentReader(LineReader):
    """A LineReader fed the entries that ``elements`` finds in the document's lines."""

    elements: Entries

    def __call__(self, batch: LineBatch) -> Parsed:
        """The records of the entries that end on the batch's lines."""
        parsed = Parsed()
        for start, found in self.elements.feed_lines(batch.first_line, batch.lines):
            self._found(start, found, parsed)
        return parsed

    def end(self) -> Parsed:
        """What is wrong when the document ends (an entry or the list left open)."""
        parsed = Parsed()
        for start, found in self.elements.end():
            self._found(start, found, parsed)
        return parsed

    def _found(self, start: int, found: bytes | LineError, parsed: Parsed) -> None:
        if isinstance(found, LineError):
            parsed.rejected.append(from_line_error(start, b"", found))
        else:
            self._read(start, found, found, parsed)
