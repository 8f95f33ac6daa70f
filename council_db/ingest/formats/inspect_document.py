"""An Inspect ``.json`` log read as it comes: its top-level values in order, then its samples
one at a time, so a log of any size is never held whole (only a window of it and one sample).

The log is one JSON document, ``{"version": ..., "eval": {...}, ..., "samples": [...], ...}``,
which Inspect writes with ``eval`` before ``samples``. Each value is cut out of the window with
the json module's ``raw_decode``; a value the window ends inside is read again once more of the
file is in (the window doubles until it holds it), so only a value still broken at the end of
the file is broken. A sample is numbered by the line it starts on, as LLMBar's items are.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, TextIO, Union

CHUNK_CHARS = 1 << 18  # the window grows by at least this much at a time
BROKEN = b"{"  # the text of a sample where the list stops being JSON: its reader rejects it as such


class JsonLog:
    """Passes over a ``.json`` log's text, each from its start."""

    def __init__(self, path: Path):
        self.path = path
        self.handle: Union[TextIO, None] = None
        self.text = ""
        self.position = 0  # in ``text``: where reading stands
        self.line, self.counted = 1, 0  # the line number at ``counted`` in ``text``
        self.decoder = json.JSONDecoder()

    def eval_text(self) -> Union[bytes, None]:
        """The text of the document's ``eval``; None when its top level has none."""
        with self._opened():
            return next((text for key, text in self._top_level() if key == "eval"), None)

    def samples(self) -> Iterator[tuple[int, bytes]]:
        """(the line it starts on, its text) of each element of the ``samples`` list. Where the
        list stops being JSON, a broken text at that line, and no more."""
        with self._opened():
            if not any(key == "samples" for key, _ in self._top_level()):
                return
            if not self._at("["):
                return
            self.position += 1
            while self._blank() and not self._at("]"):
                line = self._line()
                found = self._value()
                if found is None:
                    yield line, BROKEN
                    return
                yield line, self.text[found[0]:found[1]].encode("utf-8", "surrogateescape")
                self.position = found[1]
                if self._blank() and self._at(","):
                    self.position += 1

    @contextmanager
    def _opened(self) -> Iterator[None]:
        """The file open for one pass from its start (bytes that are not UTF-8 kept as escapes: a
        sample holding them is rejected as not UTF-8 when it is read, as any line is)."""
        self.text, self.position, self.line, self.counted = "", 0, 1, 0
        with self.path.open("r", encoding="utf-8-sig", errors="surrogateescape", newline="") as self.handle:
            yield

    def _top_level(self) -> Iterator[tuple[str, bytes]]:
        """(key, value text) of the top-level object's members in order; stops at ``samples``,
        with reading at its value."""
        if not (self._blank() and self._at("{")):
            return
        self.position += 1
        while self._blank() and self._at('"'):
            found = self._value()
            if found is None:
                return
            key = self.text[found[0] + 1:found[1] - 1]
            self.position = found[1]
            if not (self._blank() and self._at(":")):
                return
            self.position += 1
            self._blank()
            if key == "samples":
                yield key, b""
                return
            found = self._value()
            if found is None:
                return
            yield key, self.text[found[0]:found[1]].encode("utf-8", "surrogateescape")
            self.position = found[1]
            if self._blank() and self._at(","):
                self.position += 1

    def _value(self) -> Union[tuple[int, int], None]:
        """(start, end) of the JSON value at the reading position, the window grown until it
        holds it (a number at the window's end may go on); None when the file ends first."""
        while True:
            try:
                _, end = self.decoder.raw_decode(self.text, self.position)
            except json.JSONDecodeError:
                end = None
            if (end is not None and end < len(self.text)) or not self._more():
                return None if end is None else (self.position, end)

    def _blank(self) -> bool:
        """Move past JSON whitespace; False when the file ends."""
        while True:
            while self.position < len(self.text) and self.text[self.position] in " \t\r\n":
                self.position += 1
            if self.position < len(self.text) or not self._more():
                return self.position < len(self.text)

    def _at(self, character: str) -> bool:
        return self.text.startswith(character, self.position)

    def _line(self) -> int:
        self.line += self.text.count("\n", self.counted, self.position)
        self.counted = self.position
        return self.line

    def _more(self) -> bool:
        """The window from the reading position on, and the next chunk of the file (as long as
        what is kept, at least: a long value is parsed again a logarithmic number of times);
        False at its end."""
        assert self.handle is not None
        chunk = self.handle.read(max(CHUNK_CHARS, len(self.text) - self.position))
        if not chunk:
            return False
        self._line()
        self.text = self.text[self.position:] + chunk
        self.position = self.counted = 0
        return True
