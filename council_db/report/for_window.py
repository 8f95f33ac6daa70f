"""The bias report of one window of a database: the steps `council-db bias-report`, the Python
API and the Datasette plugin share (load the window, build, add the version-drift warnings),
so the three can never give different reports of the same window."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from council_db.analysis.loading.score_data import ScoreData
    from council_db.analysis.loading.window import Window
    from council_db.report.model import BiasReport
    from council_db.store.database import Database


class WindowReport(msgspec.Struct):
    report: BiasReport
    data: ScoreData  # the scores analysed (a sample of a large window): the HTML page charts their session means
    empty_window_hint: str | None = None  # where the data is, when the window holds none of it

    def html(self) -> str:
        from council_db.analysis.drift.session_means import session_series
        from council_db.report import render_html

        return render_html.html(self.report, session_series(self.data))


def _same_sessions(with_reference: ScoreData | None, data: ScoreData) -> ScoreData | None:
    """The reference raters' scores of the sessions ``data`` kept (anomalous ones may be left out)."""
    if with_reference is None or with_reference.n_sessions == data.n_sessions:
        return with_reference
    import numpy as np

    from council_db.analysis.loading.score_data import keep_sessions

    return keep_sessions(with_reference, np.isin(np.array(with_reference.session_keys, dtype=object),
                                                 np.array(data.session_keys, dtype=object)))


def report_for_window(db: Database, window: Window, filters: dict[str, Any], *, seed: int = 0,
                      sample_sessions: int | None = None, exclude_anomalies: bool = False,
                      for_rules: bool = False, method: str = "frequentist",
                      version_warnings: bool = True) -> WindowReport:
    """The report of ``window``. ``filters`` is what the report says it was asked for; above
    ``sample_sessions`` sessions (None: analysis.loading.window's default; 0: never) the record-level
    analyses read a sample; with ``exclude_anomalies`` the sessions council-db anomalies flags
    are left out (and counted in the filters). ``for_rules`` (council-db check) leaves out what
    only a reader of the report sees: the version-drift warnings, a large window's length
    correlations (the whole-window sums of the counts alone), and builder.build's for_rules part.
    ``method`` "bayes" adds the hierarchical model's part (report.hierarchical). Without
    ``version_warnings`` (`council-db diff`, which shows figures, not warnings) the sample's
    config versions are not looked up."""
    from concurrent.futures import ThreadPoolExecutor  # here: its logging import would slow --help

    from council_db.analysis.loading.window import SAMPLE_SESSIONS, hash_sample, load_for_report

    with ThreadPoolExecutor(max_workers=1) as pool:
        # The window's queries run (the database releases the GIL) while the analyses load:
        # over a million sessions each takes about a second.
        loading = pool.submit(load_for_report, db, window,
                              SAMPLE_SESSIONS if sample_sessions is None else sample_sessions,
                              correlations=not for_rules)
        from council_db.analysis.drift import version_drift
        from council_db.analysis.sessions import anomalies
        from council_db.report.builder import build
        loaded = loading.result()
    data, totals = loaded.data, loaded.totals
    if window.dimension is not None:  # what the report analysed: said with its window, in every format
        filters = {**filters, "dimension": window.dimension}
    versions = None if for_rules or not version_warnings else version_drift.load_config_versions(db, data)
    dropped = []
    if exclude_anomalies:
        data, dropped = anomalies.exclude(data)
        filters = {**filters, "exclude_anomalies": len(dropped)}
        totals = None  # whole-window sums would still hold the excluded sessions
    result = build(data, as_of=window.as_of, filters=filters, seed=seed, totals=totals,
                   window_sessions=loaded.window_sessions, requested=window.requested(),
                   with_reference=_same_sessions(loaded.with_reference, data), for_rules=for_rules,
                   hash_sample=hash_sample(loaded, data), per_subject=loaded.per_subject)
    if method == "bayes":
        from council_db.report.hierarchical_section import add_to

        add_to(result, data)
    if versions is not None:
        result.warnings.extend(version_drift.mixed_version_warnings(data, versions))
    if exclude_anomalies:
        result.warnings.insert(0, anomalies.excluded_note(dropped))
    hint = None
    if data.n_sessions == 0:
        from council_db.analysis.loading.empty_window import where_the_data_is

        hint = where_the_data_is(db, window)
        if hint:
            result.warnings.insert(0, hint)
    return WindowReport(result, data, hint)
