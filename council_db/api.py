"""The Python API: record council sessions and read the bias report from your own code.

    import council_db
    db = council_db.connect()                       # $COUNCIL_DB, else the user data dir
    db.record_session(session_id, stage1_results, stage2_results, label_to_model, query=q)
    report = db.report(days=30)                     # a council_db.BiasReport
    db.sqlite_utils().query("SELECT * FROM reviewer_profiles")   # notebooks: read-only
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from council_db.errors import CouncilDbError
from council_db.store.database import Database, no_database, open_database
from council_db.store.location import resolve_url, sqlite_path

if TYPE_CHECKING:
    import sqlite_utils

    from council_db.ingest.recording import Recorded
    from council_db.report.model import BiasReport

logger = logging.getLogger("council_db")


class Council:
    """One council-db database, upgraded on open. Reading never creates one: a SQLite file
    that is not there is created by the first ``record_session``, and ``report()`` on it is
    refused, as ``council-db bias-report`` refuses it (a mistyped path leaves nothing behind)."""

    def __init__(self, database: Database, *, opened: bool = True):
        self._database = database
        self._opened = opened  # False: connect() found no SQLite file there (yet)

    @property
    def database(self) -> Database:
        """The database, for code that writes to it: created now if connect() found none."""
        return self._open(create=True)

    @classmethod
    def open(cls, url: str | None = None) -> Council:
        resolved = resolve_url(url)
        path = sqlite_path(resolved)
        if path is not None and not path.exists():
            return cls(Database(resolved), opened=False)
        return cls(open_database(resolved, notify=logger.info))

    def _open(self, *, create: bool) -> Database:
        """The database, opened on first use if connect() found no file: created for a write,
        refused for a read while there is still none."""
        if not self._opened:
            path = sqlite_path(self._database.url)
            if not create and path is not None and not path.exists():
                raise no_database(path)
            self._database = open_database(self._database.url, notify=logger.info)
            self._opened = True
        return self._database

    def record_session(
        self,
        session_id: str,
        stage1_results: list[dict[str, Any]],
        stage2_results: list[dict[str, Any]],
        label_to_model: dict[str, Any],
        query: str | None = None,
        consent_level: int = 1,
        timestamp: str | None = None,
        reviewer_kinds: dict[str, str] | None = None,
    ) -> Recorded:
        """Store the records llm-council's writer would produce for this session. The query is
        never stored: llm-council's coarse metadata always, its HMAC prefix at consent level 4
        (keyed by $COUNCIL_DB_HMAC_SECRET or $COUNCIL_DB_HMAC_SECRET_FILE; with neither, null
        and a warning, as llm-council writes without a key). ``reviewer_kinds`` marks reviewers
        that are no LLM judge: ``{"expert_1": "human"}`` for a person rating the same answers,
        ``"gold"`` for a known right answer (the others keep their kind; a new one is a judge).
        Recording a session again adds nothing."""
        from council_db.ingest.recording import record

        session = dict(session_id=session_id, stage1_results=stage1_results, stage2_results=stage2_results,
                       label_to_model=label_to_model, query=query, consent_level=consent_level, timestamp=timestamp,
                       reviewer_kinds=reviewer_kinds)
        return record(self._open(create=True), session, source="python:record_session")

    def report(self, *, seed: int = 0, sample_sessions: int | None = None, method: str = "frequentist",
               **window: Any) -> BiasReport:
        """The bias report for a window: the keyword arguments of ``analysis.loading.window.Window``
        (sessions, days, since, until, as_of, reviewers, models, config_versions, categories, dimension).
        The same report as ``council-db bias-report``: above ``sample_sessions`` sessions
        (default 5,000; 0 = never) the record-level analyses read a sample of the window's
        sessions, so a report over a million sessions takes seconds, not minutes. ``method``
        "bayes" adds the hierarchical model's part (``report.hierarchical``), as --method bayes."""
        from council_db.analysis.loading.window import Window
        from council_db.report.for_window import report_for_window

        chosen = Window(**window)
        filters = {k: v for k, v in window.items() if v and k != "as_of"}
        database = self._open(create=False)
        return report_for_window(database, chosen, filters, seed=seed, sample_sessions=sample_sessions,
                                 method=method).report

    def sqlite_utils(self) -> sqlite_utils.Database:
        """The database file as a read-only ``sqlite_utils.Database``, for notebooks:
        ``.query(sql, params)`` gives rows as dicts, ``["reviewer_profiles"].rows`` a view's,
        ``.table_names()`` and ``.view_names()`` what there is. Read-only, so exploring never
        changes the records (they change through imports and ``record_session``); SQLite
        only, as sqlite-utils is."""
        import sqlite3

        import sqlite_utils

        url = self._open(create=False).url
        path = sqlite_path(url)
        if path is None:
            raise CouncilDbError(f"sqlite_utils() reads a SQLite file, and {url.split('://')[0]} "
                                 "is not one: use council-db sql, or the server's own client")
        return sqlite_utils.Database(sqlite3.connect(f"file:{quote(os.fsencode(path))}?mode=ro", uri=True))

    def close(self) -> None:
        if self._opened:
            self._database.engine.dispose()

    def __enter__(self) -> Council:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()


def connect(url: str | None = None) -> Council:
    """Open a database: a file path or SQLAlchemy URL; default $COUNCIL_DB, else the user data
    dir. A SQLite file that is not there is created by the first record_session, never by a read."""
    return Council.open(url)
