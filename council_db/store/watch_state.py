"""`council-db watch`'s memory (watch_models.WatchState): the status each rule outcome had when
the watch last acted on it, read before a run and written as it acts, and the database's name
and fingerprint for an alert (never a path, a host or a password)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from council_db.store.database import Database

FINGERPRINT_CHARS = 16


@dataclass(frozen=True)
class Known:
    """A rule outcome's status as the watch last acted on it."""

    status: str
    changed_at: datetime


@dataclass(frozen=True)
class Acted:
    """A status to remember: ``sent_at`` and ``alert_id`` when the webhook accepted its alert."""

    rule: str
    subject: str
    status: str
    changed_at: datetime
    sent_at: datetime | None = None
    alert_id: str | None = None


def fingerprint(text: str) -> str:
    """16 hex characters of SHA-256: tells webhooks (or databases) apart, says nothing of them."""
    return hashlib.sha256(text.encode()).hexdigest()[:FINGERPRINT_CHARS]


def known(db: Database, watch: str, endpoint: str) -> dict[tuple[str, str], Known]:
    """(rule, subject) -> what the watch ``watch`` to the webhook fingerprinted ``endpoint`` last acted on."""
    from sqlalchemy import select

    from council_db.store.watch_models import WatchState

    with db.engine.connect() as connection:
        rows = connection.execute(select(WatchState.rule, WatchState.subject, WatchState.status, WatchState.changed_at)
                                  .where(WatchState.watch == watch, WatchState.endpoint == endpoint))
        return {(rule, subject): Known(status, changed_at) for rule, subject, status, changed_at in rows}


def remember(db: Database, watch: str, endpoint: str, acted: list[Acted]) -> None:
    """Store each status in place of the one before, in one transaction."""
    from sqlalchemy import delete, insert, tuple_

    from council_db.store.watch_models import WatchState

    if not acted:
        return
    keys = [(a.rule, a.subject) for a in acted]
    with db.writer() as connection:
        connection.execute(delete(WatchState).where(WatchState.watch == watch, WatchState.endpoint == endpoint,
                                                    tuple_(WatchState.rule, WatchState.subject).in_(keys)))
        connection.execute(insert(WatchState), [dict(watch=watch, endpoint=endpoint, rule=a.rule, subject=a.subject,
                                                      status=a.status, changed_at=a.changed_at, sent_at=a.sent_at,
                                                      alert_id=a.alert_id) for a in acted])
        connection.commit()


def database_name(db: Database) -> str:
    """The SQLite file's name without its folder, or the PostgreSQL database's name (no host, no user)."""
    from sqlalchemy.engine import make_url

    name = make_url(db.url).database or ""
    return Path(name).name if db.dialect == "sqlite" else name


def database_fingerprint(db: Database) -> str | None:
    """A fingerprint of this database's own random key (local_keys): the same for every alert
    from this database, different for another database, and no clue to the key itself."""
    from sqlalchemy import select

    from council_db.store.local_keys import LINE_HASH
    from council_db.store.models import LocalKey

    with db.engine.connect() as connection:
        key = connection.execute(select(LocalKey.value).where(LocalKey.name == LINE_HASH)).scalar()
    return None if key is None else fingerprint(f"council-db database {key}")
