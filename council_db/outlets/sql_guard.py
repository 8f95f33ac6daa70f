"""What `council-db sql` lets through: one statement that only reads.

The checks here are the first wall (a clear message before anything runs); each dialect's
own read-only machinery is the second (readonly_sql.py for SQLite, pg_readonly.py for
PostgreSQL), which holds even if a check here were fooled. To count statements right the
text is split the way the server's own lexer would: SQLite's and PostgreSQL's strings,
quoted names and comments differ (E'\\'' is one quote to PostgreSQL, nested /* */ comments,
$tag$ quotes), and a form the check cannot read for certain is refused.
"""

from __future__ import annotations

import re
from typing import Iterator

from council_db.errors import CouncilDbError
from council_db.outlets.secret_tables import KEYS

READ_STARTS = {"SELECT", "WITH", "VALUES"}
SQLITE_READ_STARTS = READ_STARTS | {"PRAGMA", "EXPLAIN"}

# PRAGMAs that only ever read, whatever their argument (the argument names a table or index).
READ_PRAGMAS = {
    "table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo", "foreign_key_list",
    "database_list", "collation_list", "function_list", "module_list", "pragma_list", "compile_options",
    "integrity_check", "quick_check", "foreign_key_check",
}
# PRAGMAs that read a setting when given no value (and would write one when given a value).
SETTING_PRAGMAS = {
    "user_version", "schema_version", "application_id", "page_size", "page_count", "freelist_count",
    "journal_mode", "encoding", "auto_vacuum", "foreign_keys", "busy_timeout", "data_version",
}

# PostgreSQL functions that reach past the database's tables: server files, large objects,
# settings, locks, other sessions, replication, SQL given as a string (which no check here
# could read), or a table named by a string or an oid, computed as the statement runs (so
# local_keys could be read without being named; raw pages and WAL hold its rows too). A
# superuser may call them even in a READ ONLY transaction.
PG_SIDE_EFFECT_FUNCTIONS = frozenset("""
PG_RELOAD_CONF PG_ROTATE_LOGFILE PG_TERMINATE_BACKEND PG_CANCEL_BACKEND PG_PROMOTE PG_SWITCH_WAL
PG_BACKUP_START PG_BACKUP_STOP PG_START_BACKUP PG_STOP_BACKUP PG_LOG_BACKEND_MEMORY_CONTEXTS PG_STAT_FILE
PG_REPLICATION_SLOT_ADVANCE PG_IMPORT_SYSTEM_COLLATIONS PG_NOTIFY PG_EXPORT_SNAPSHOT PG_STAT_STATEMENTS_RESET
SET_CONFIG NEXTVAL SETVAL TXID_CURRENT PG_CURRENT_XACT_ID LOWRITE TS_STAT TS_REWRITE
QUERY_TO_XML QUERY_TO_XMLSCHEMA QUERY_TO_XML_AND_XMLSCHEMA CURSOR_TO_XML CURSOR_TO_XMLSCHEMA
TABLE_TO_XML TABLE_TO_XMLSCHEMA TABLE_TO_XML_AND_XMLSCHEMA SCHEMA_TO_XML SCHEMA_TO_XMLSCHEMA
SCHEMA_TO_XML_AND_XMLSCHEMA DATABASE_TO_XML DATABASE_TO_XMLSCHEMA DATABASE_TO_XML_AND_XMLSCHEMA
CROSSTAB CONNECTBY GET_RAW_PAGE
""".split())
PG_SIDE_EFFECT_PREFIXES = (
    "PG_READ_", "PG_LS_", "PG_FILE_", "LO_", "DBLINK", "PG_ADVISORY", "PG_TRY_ADVISORY", "PG_STAT_RESET",
    "PG_REPLICATION_ORIGIN", "PG_LOGICAL_", "PG_CREATE_", "PG_DROP_", "PG_COPY_", "PG_WAL_REPLAY", "PG_GET_WAL_",
)
# PostgreSQL's views of column statistics: sample values of every table's columns, local_keys' too.
PG_STATISTICS = frozenset({"PG_STATS", "PG_STATS_EXT", "PG_STATS_EXT_EXPRS", "PG_STATISTIC", "PG_STATISTIC_EXT_DATA"})
# Words that make a PostgreSQL SELECT write or lock: data-modifying WITH, SELECT INTO.
PG_WRITE_WORDS = {
    "INSERT": "INSERT (a data-modifying WITH)", "UPDATE": "UPDATE (a data-modifying WITH)",
    "DELETE": "DELETE (a data-modifying WITH)", "MERGE": "MERGE (a data-modifying WITH)",
    "TRUNCATE": "TRUNCATE", "INTO": "SELECT ... INTO (it creates a table)",
}


READ_ONLY = ("council-db sql runs one read-only statement "
             "(SELECT, WITH ... SELECT, VALUES; on SQLite also EXPLAIN and PRAGMAs that only read)")
SECRET = "it holds this database's key for rejected lines' hashes, which no read outlet shows"


class Refused(CouncilDbError):
    """A statement council-db sql will not run, with what was refused and why."""

    exit_code = 2

    def __init__(self, what: str, why: str = READ_ONLY):
        super().__init__(f"{what} is refused: {why}")


_SQLITE_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>--[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<string>'(?:[^']|'')*(?:'|\Z))
  | (?P<quoted>"(?:[^"]|"")*(?:"|\Z)|`(?:[^`]|``)*(?:`|\Z)|\[[^\]]*(?:\]|\Z))
  | (?P<semicolon>;)
  | (?P<word>[A-Za-z_][A-Za-z_0-9$]*)
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)

# PostgreSQL's lexer (scan.l), with standard_conforming_strings on (pg_readonly sets it):
# E'...' takes backslash escapes, U&'...' and B/X/N'...' are plain strings after a prefix,
# $tag$...$tag$ quotes anything, identifiers may hold $ and any non-ASCII letter, and
# U&"..." names hold escapes this check does not decode. Block comments nest (handled in
# _pg_tokens, as a regular expression cannot count).
_LETTER = "A-Za-z_\u0080-\U0010ffff"
_PG_TOKEN = re.compile(rf"""
    (?P<space>\s+)
  | (?P<comment>--[^\n\r]*)
  | (?P<string>[eE]'(?:[^'\\]|\\.|'')*(?:'|\Z))
  | (?P<escaped_name>[uU]&"(?:[^"]|"")*(?:"|\Z))
  | (?P<dollar>\$(?P<tag>(?:[{_LETTER}][{_LETTER}0-9]*)?)\$.*?(?:\$(?P=tag)\$|\Z))
  | (?P<plain>'(?:[^']|'')*(?:'|\Z))
  | (?P<quoted>"(?:[^"]|"")*(?:"|\Z))
  | (?P<semicolon>;)
  | (?P<word>[{_LETTER}][{_LETTER}0-9$]*)
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)


def _block_comment_end(sql: str, start: int) -> int:
    """Where PostgreSQL's nested /* ... */ comment starting at ``start`` ends (or the text does)."""
    depth, at = 0, start
    while at < len(sql):
        if sql.startswith("/*", at):
            depth, at = depth + 1, at + 2
        elif sql.startswith("*/", at):
            depth, at = depth - 1, at + 2
            if depth == 0:
                return at
        else:
            at += 1
    return at


def _pg_tokens(sql: str) -> Iterator[tuple[str, str]]:
    at = 0
    while at < len(sql):
        if sql.startswith("/*", at):
            end = _block_comment_end(sql, at)
            yield "comment", sql[at:end]
            at = end
            continue
        match = _PG_TOKEN.match(sql, at)
        assert match is not None  # the last alternative matches any character
        at = match.end()
        kind = match.lastgroup or "other"
        yield ("string" if kind in ("plain", "dollar", "tag") else kind), match.group()


def _sqlite_tokens(sql: str) -> Iterator[tuple[str, str]]:
    for match in _SQLITE_TOKEN.finditer(sql):
        yield match.lastgroup or "other", match.group()


def statements(sql: str, *, dialect: str = "sqlite") -> list[list[str]]:
    """The statements in ``sql``, split on the semicolons outside strings, quoted names and
    comments, each as its tokens: words upper-cased, a string as ', a quoted name as " and
    its name upper-cased, a U&"..." name as U&", anything else as its first character."""
    found: list[list[str]] = [[]]
    tokens = _pg_tokens(sql) if dialect == "postgresql" else _sqlite_tokens(sql)
    for kind, text in tokens:
        if kind == "semicolon":
            found.append([])
        elif kind == "word":
            found[-1].append(text.upper())
        elif kind == "quoted":
            found[-1].append('"' + text[1:-1].replace('""', '"').upper())
        elif kind == "escaped_name":
            found[-1].append('U&"')
        elif kind not in ("space", "comment"):
            found[-1].append(text[:1])
    return [words for words in found if words]


def check(sql: str, dialect: str) -> None:
    """Refuse anything but one statement that starts as a read; the database enforces the rest."""
    found = statements(sql, dialect=dialect)
    if not found:
        raise CouncilDbError("no SQL statement given: write one, e.g. council-db sql \"SELECT * FROM slot_means\"")
    if len(found) > 1:
        raise Refused(f"running several statements ({len(found)} found, separated by ';')")
    first = found[0][0]
    allowed = SQLITE_READ_STARTS if dialect == "sqlite" else READ_STARTS
    if first not in allowed:
        raise Refused(f"{first}" if first.isalpha() or first == "_" else f"a statement starting with {first!r}")
    if any(token.lstrip('"') == KEYS.upper() for token in found[0]):
        raise Refused(f"reading {KEYS}", SECRET)
    if dialect == "postgresql":
        _check_pg_words(found[0])


def _check_pg_words(tokens: list[str]) -> None:
    """Refuse a PostgreSQL statement that writes, locks or calls a side-effecting function,
    by any word or quoted name in it (a column so named needs renaming in the query)."""
    for before, token in zip(["", *tokens], tokens):
        name = token.lstrip('"')
        if token == 'U&"':
            raise Refused('a U&"..." name (its escapes could spell any function)')
        if name in PG_SIDE_EFFECT_FUNCTIONS or name.startswith(PG_SIDE_EFFECT_PREFIXES):
            raise Refused(f"the function {name.lower()}() (it reaches past the tables: server files, settings, "
                          "locks, other sessions, or SQL or a table given as a string)")
        if name in PG_STATISTICS:
            raise Refused(f"reading {name.lower()}", f"it shows sample values of every table's columns, {KEYS} "
                                                     "among them (this database's key for rejected lines' hashes)")
        if token in ("UPDATE", "SHARE") and before in ("FOR", "KEY"):
            raise Refused(f"FOR {token} (it locks rows)")
        if token in PG_WRITE_WORDS:
            raise Refused(PG_WRITE_WORDS[token])


def pg_placeholders(sql: str, names: set[str]) -> str:
    """``sql`` for psycopg with parameters: each ``:name`` of ``names`` outside strings,
    quoted names and comments becomes ``%(name)s`` (a ``::`` cast stays), and every other
    ``%`` is doubled, as psycopg reads ``%`` anywhere in the text, strings included."""
    tokens = list(_pg_tokens(sql))
    out: list[str] = []
    at = 0
    while at < len(tokens):
        kind, text = tokens[at]
        after = tokens[at + 1] if at + 1 < len(tokens) else ("", "")
        if text == ":" and after[0] == "word" and after[1] in names and (at == 0 or tokens[at - 1][1] != ":"):
            out.append(f"%({after[1]})s")
            at += 2
            continue
        out.append(text.replace("%", "%%"))
        at += 1
    return "".join(out)


def pragma_allowed(name: str, argument: str | None) -> bool:
    """Whether a PRAGMA (as SQLite's authorizer reports it) only reads."""
    name = name.lower()
    return name in READ_PRAGMAS or (name in SETTING_PRAGMAS and argument is None)
