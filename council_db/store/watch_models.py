"""The state of `council-db watch` (revision 0019): each rule outcome's last status per watch,
so an alert goes out once per change and never again for the same state.

A row is keyed by the watch's name, its webhook's fingerprint (never the URL: a Slack webhook's
URL is itself the secret), the rule and the subject (a reviewer, a flag, the window). It is
written only after the webhook accepted the alert for it (or when no alert was due), so a
delivery that failed leaves the old status and the next run sends the alert again."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String, Text
from sqlalchemy.orm import Mapped, mapped_column

from council_db.store.model_base import Base


class WatchState(Base):
    """One rule outcome's last status as one watch knows it."""

    __tablename__ = "watch_state"
    watch: Mapped[str] = mapped_column(Text, primary_key=True)
    endpoint: Mapped[str] = mapped_column(String(16), primary_key=True)  # the webhook's fingerprint
    rule: Mapped[str] = mapped_column(Text, primary_key=True)
    subject: Mapped[str] = mapped_column(Text, primary_key=True)
    status: Mapped[str] = mapped_column(String(4))  # pass, fail or skip
    changed_at: Mapped[datetime] = mapped_column()  # when the watch first saw this status, UTC
    sent_at: Mapped[datetime | None] = mapped_column()  # when the webhook accepted its alert; NULL: none was due
    alert_id: Mapped[str | None] = mapped_column(String(64))  # the id of that alert
