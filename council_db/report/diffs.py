"""`council-db diff`'s two results: two sides on the same items (analysis.versions), and two
windows' bias reports figure by figure (figure_changes). Each states the windows it read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from council_db.errors import UsageError
from council_db.report.figure_changes import ALPHA, FigureChange, compare_reports

if TYPE_CHECKING:
    from council_db.analysis.loading.window import Window
    from council_db.analysis.versions.same_items import SameItems
    from council_db.analysis.versions.sides import Sides
    from council_db.report.model import ReportWindow
    from council_db.store.database import Database


@dataclass(frozen=True)
class ItemsDiff:
    """Two reviewers or two config versions on the items both scored."""

    sides: Sides
    figures: SameItems
    window: str  # what the options asked for, in words

    def changed(self, alpha: float = ALPHA) -> bool:
        return self.figures.changed(alpha)


@dataclass(frozen=True)
class WindowsDiff:
    """The bias report of the window before a time against the one from that time on."""

    before: ReportWindow
    after: ReportWindow
    changes: list[FigureChange]
    unmatched: list[str]  # figures only one window gives

    def changed(self, alpha: float = ALPHA) -> bool:
        return any(change.changed(alpha) for change in self.changes)


def windows_diff(db: Database, before: Window, after: Window, *, filters: dict[str, Any], seed: int = 0,
                 sample_sessions: int | None = None) -> WindowsDiff:
    """Both windows' reports (each the one `bias-report` gives for it, but for the warnings
    about mixed config versions: the diff shows figures alone, and at a million sessions the
    lookup cost 0.2 s a window) and what changed. A window without sessions is a usage error
    naming it."""
    from council_db.report.for_window import report_for_window

    reports = []
    for name, window in (("before", before), ("after", after)):
        made = report_for_window(db, window, filters, seed=seed, sample_sessions=sample_sessions,
                                 version_warnings=False)
        if made.report.window.sessions == 0:
            raise UsageError(f"no session {name} --changed-at in this window: "
                             f"{made.empty_window_hint or 'pick a time inside the data'}")
        reports.append(made.report)
    changes, unmatched = compare_reports(*reports)
    return WindowsDiff(reports[0].window, reports[1].window, changes, unmatched)
