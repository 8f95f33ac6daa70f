"""`council-db watch`'s alerts: which rule outcomes changed since the watch last acted, and
the body that tells a webhook so (``SCHEMA_VERSION``, documented in docs/watch.md).

An alert is due when an outcome starts failing or stops failing: once per change, never
again for the same status. Its id is derived from the change itself (the watch, the webhook's
fingerprint, the rule, the subject, the old and new status, and since when the old one held), so
an alert resent after a failed delivery carries the same id and a receiver can drop the repeat.
A body carries figures, names of reviewers and flags, the window and the database's name and
fingerprint: never a query's text, a path, a URL or a credential."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from council_db import __version__
from council_db.gate.outputs import window_document
from council_db.gate.rules import Rule
from council_db.gate.verdicts import Outcome
from council_db.report.model import ReportWindow
from council_db.store.watch_state import Known

SCHEMA_VERSION = "1.0.0"
EVENTS = {"fail": "failing", "pass": "recovered", "skip": "unmeasurable"}  # an alert's event, by its new status


@dataclass(frozen=True)
class Change:
    """An outcome whose status is not the one the watch last acted on (``old`` None: never seen)."""

    outcome: Outcome
    old: str | None
    old_since: datetime | None

    @property
    def alert_due(self) -> bool:
        """Whether the change starts or ends a failure (pass <-> skip, or a first pass, is only remembered)."""
        return (self.outcome.status == "fail") != (self.old == "fail")

    def alert_id(self, watch: str, endpoint: str) -> str:
        o = self.outcome
        since = self.old_since.isoformat() if self.old_since else None
        return hashlib.sha256(json.dumps([watch, endpoint, o.rule, o.subject, self.old, o.status, since]).encode()
                              ).hexdigest()


def _gone(rule: str, subject: str) -> Outcome:
    """A failing outcome the watch knew that this run's rule no longer lists for its subject."""
    if rule == "no-flags":
        return Outcome(rule, subject, "pass", "the flag is no longer raised in this window")
    return Outcome(rule, subject, "skip", "not measured in this window: the subject is not among its results")


def changes(outcomes: list[Outcome], rules: list[Rule], known: dict[tuple[str, str], Known]) -> list[Change]:
    """Every outcome whose status differs from what the watch knew, in the rules' order; a
    failing outcome of one of ``rules`` that this run no longer lists ends its failure too."""
    listed = {(o.rule, o.subject) for o in outcomes}
    judged = {rule.name for rule in rules}
    gone = [_gone(rule, subject) for (rule, subject), seen in known.items()
            if rule in judged and (rule, subject) not in listed and seen.status == "fail"]
    found = []
    for outcome in outcomes + gone:
        seen = known.get((outcome.rule, outcome.subject))
        if seen is None or seen.status != outcome.status:
            found.append(Change(outcome, seen.status if seen else None, seen.changed_at if seen else None))
    return found


def body(change: Change, *, watch: str, endpoint: str, rule: Rule, window: ReportWindow,
         database: dict[str, str | None], evaluated_at: datetime) -> dict[str, Any]:
    """The JSON alert for one change."""
    o = change.outcome
    return {"alert_schema_version": SCHEMA_VERSION, "alert_id": change.alert_id(watch, endpoint), "watch": watch,
            "event": EVENTS[o.status], "rule": rule.as_dict(), "subject": o.subject,
            "status": {"old": change.old, "new": o.status}, "message": o.message,
            "figure": {"estimate": o.estimate, "ci_low": o.ci_low, "ci_high": o.ci_high, "n_sessions": o.n_sessions},
            "window": window_document(window), "database": database, "council_db_version": __version__,
            "evaluated_at": evaluated_at.isoformat(timespec="seconds") + "Z"}


def _slack_escaped(text: str) -> str:
    """Slack's own escaping: &, < and > would otherwise start an entity, a link or a mention."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack(alert: dict[str, Any]) -> dict[str, str]:
    """The alert as a Slack-compatible ``{"text": ...}`` body (an incoming webhook's, or Mattermost's)."""
    headline = {"failing": ":red_circle: started failing", "recovered": ":large_green_circle: recovered",
                "unmeasurable": ":white_circle: can no longer be measured"}[alert["event"]]
    window = alert["window"]
    span = f"{window['start'] or '?'} to {window['end'] or '?'}"
    text = (f"council-db watch {alert['watch']}: {alert['rule']['rule']} {alert['subject']} {headline}\n"
            f"{alert['message']}\nwindow {span}, {window['sessions']:,} sessions; database "
            f"{alert['database']['name']} ({alert['database']['fingerprint']}); alert {alert['alert_id'][:12]}")
    return {"text": _slack_escaped(text)}
