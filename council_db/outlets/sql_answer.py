"""The answer of `council-db sql`, streamed, and the limits that stop a runaway query.

Rows come from an open cursor one at a time, so a large answer is printed as it is read
instead of held in memory. Three limits hold on both backends: a time limit (each backend
enforces it inside the database, see readonly_sql.py and pg_readonly.py), a number of rows
and a size of any one value. A limit reached after some rows were printed ends the answer
there (the output stays well-formed) and is reported afterwards as ``stopped``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator

from council_db.errors import CouncilDbError


@dataclass(frozen=True)
class Limits:
    """0 means no limit. Defaults: 30 s, 100,000 rows, 10 MB in any one value."""

    timeout: float = 30.0
    max_rows: int = 100_000
    max_value_bytes: int = 10_000_000


def timed_out(limits: Limits) -> CouncilDbError:
    return CouncilDbError(f"the query ran longer than {limits.timeout:g} s and was stopped; "
                          "give --timeout SECONDS to allow longer (0 for no limit)")


def value_too_big(limits: Limits) -> CouncilDbError:
    return CouncilDbError(f"the query made a value larger than {limits.max_value_bytes:,} bytes and was stopped "
                          "before printing it; give --max-value-bytes N to allow more (0 for no limit)")


def too_many_rows(limits: Limits) -> CouncilDbError:
    return CouncilDbError(f"the answer has more than {limits.max_rows:,} rows: only the first {limits.max_rows:,} "
                          "were printed; give --max-rows N for more (0 for no limit), or add LIMIT")


def _size(value: Any) -> int:
    """Bytes of a string (UTF-8) or blob; 0 for numbers and the like."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return len(value)
    if isinstance(value, str):
        return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))
    return 0


_END = object()


class Answer:
    """Column names and the rows, read as they are printed. Building it reads the first row,
    so a query that fails (or breaks a limit) at once raises before anything is printed."""

    def __init__(self, columns: list[str], rows: Iterator[tuple[Any, ...]], limits: Limits,
                 errors: Callable[[Exception], CouncilDbError | None] = lambda _: None):
        self.columns = columns
        self.limits = limits
        self.stopped: CouncilDbError | None = None
        self._source = rows
        self._errors = errors
        self._rows = self._capped()
        self._first = next(self._rows, _END)
        if self._first is _END and self.stopped is not None:
            self.close()
            raise self.stopped

    @property
    def rows(self) -> Iterator[tuple[Any, ...]]:
        if self._first is not _END:
            yield self._first  # type: ignore[misc]
        yield from self._rows

    def _capped(self) -> Iterator[tuple[Any, ...]]:
        """The source's rows up to the limits; a limit or a database error ends them in ``stopped``."""
        count = 0
        try:
            for row in self._source:
                if self.limits.max_rows and count == self.limits.max_rows:
                    self.stopped = too_many_rows(self.limits)
                    return
                if self.limits.max_value_bytes and any(_size(v) > self.limits.max_value_bytes for v in row):
                    self.stopped = value_too_big(self.limits)
                    return
                count += 1
                yield tuple(row)
        except Exception as error:  # the backend's driver error, turned into a message
            known = error if isinstance(error, CouncilDbError) else self._errors(error)
            if known is None:
                raise
            self.stopped = known

    def close(self) -> None:
        """Stop reading the source (a streaming cursor cancels the rest of the query)."""
        close = getattr(self._source, "close", None)
        if close is not None:
            close()

    def as_dicts(self) -> Iterator[dict[str, Any]]:
        """Rows as dicts; a repeated column name gets a suffix (_2, _3) so no value is lost."""
        names: list[str] = []
        for column in self.columns:
            name, n = column, 1
            while name in names:
                n += 1
                name = f"{column}_{n}"
            names.append(name)
        for row in self.rows:
            yield dict(zip(names, (_plain(v) for v in row)))


def _plain(value: Any) -> Any:
    return value.hex() if isinstance(value, (bytes, memoryview)) else value
