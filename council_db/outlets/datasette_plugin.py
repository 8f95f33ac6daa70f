"""council-db's Datasette plugin (entry point ``datasette``, in the ``datasette`` extra).

For every council-db database Datasette serves, whatever its file name:
- /<database>/-/bias-report: the HTML bias report, with the CLI's window options as query
  parameters (days, sessions, since, until, as_of, reviewer, model, config_version, category);
- a "Bias report" link in the database page's actions menu;
- facets on reviewer, model and score scale over the record views counted from the day
  totals, in milliseconds at any size (outlets/datasette_facets.py);
- the canned queries of the shipped metadata file (Datasette keys metadata by file name, so
  without this a database not named council.db would have none);
- its local_keys (the key of rejected lines' hashes) read as NULL and not writable through
  Datasette's connections (outlets/datasette_local_keys.py);
- for every database, a client's mistake (a 4xx) answered without the traceback Datasette
  prints to the server log for each (outlets/datasette_errors.py).

Other databases get no link, no queries and a 404. A database is council-db's when it has an
Alembic schema version and council-db's record tables. The report is built in a worker thread
(Datasette serves every request from one event loop) on a read-only connection of its own.
"""

from __future__ import annotations

import asyncio
import json
import os
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from datasette import Response, hookimpl
from datasette.facets import ColumnFacet
from datasette.utils import tilde_decode
from datasette.utils.asgi import BadRequest, Base400, NotFound

from council_db.outlets.datasette_databases import council_revision
from council_db.outlets.datasette_errors import handle_exception  # noqa: F401 - a hook, found here by Datasette
from council_db.outlets.datasette_facets import CountedColumnFacet
from council_db.outlets.datasette_local_keys import guard_connection
from council_db.outlets.datasette_metadata import SHIPPED_NAME, shipped

if TYPE_CHECKING:
    from council_db.analysis.loading.window import Window

PAGE = "-/bias-report"
# One report at a time: each holds its window's arrays (up to ~300 MB at a million sessions),
# so concurrent requests wait for the one before rather than multiply that.
BUILDER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="council-db-report")


class SchemaMismatch(Base400):
    """The database is council-db's, at a schema this council-db cannot read read-only."""

    status = 409


@hookimpl
def register_routes(datasette) -> list[tuple[str, Any]]:
    return [(rf"^/(?P<database>[^/]+)/{PAGE}$", bias_report)]


@hookimpl(hookwrapper=True)
def register_facet_classes():
    """Datasette's column facet, with council-db's record views counted from the day totals."""
    outcome = yield
    outcome.force_result([[CountedColumnFacet if kind is ColumnFacet else kind for kind in classes]
                          for classes in outcome.get_result()])


@hookimpl(trylast=True)
def prepare_connection(conn, database, datasette) -> None:
    """Each connection to a council-db database gets an SQLite authorizer that hides local_keys.
    SQLite keeps one authorizer per connection: this hook runs after other plugins' so that
    theirs cannot replace it (a plugin that sets one of its own here loses it)."""
    guard_connection(conn, database, datasette)


@hookimpl
def database_actions(datasette, actor, database, request):
    async def links() -> list[dict[str, str]]:
        if await council_revision(datasette.get_database(database)) is None:
            return []
        return [{"href": f"{datasette.urls.database(database)}/{PAGE}", "label": "Bias report (council-db)",
                 "description": "Reviewer severity, slot, length and self-preference effects with 95% CIs"}]

    return links


@hookimpl
def canned_queries(datasette, database, actor):
    async def queries() -> dict[str, Any]:
        if await council_revision(datasette.get_database(database)) is None:
            return {}
        return {name: dict(query) for name, query in shipped_queries().items()}  # Datasette adds keys to each

    return queries


@cache
def shipped_queries() -> dict[str, Any]:
    metadata = json.loads(shipped().read_text(encoding="utf-8"))
    return metadata["databases"][SHIPPED_NAME].get("queries", {})


async def bias_report(datasette, request) -> Response:
    try:
        db = datasette.get_database(route=tilde_decode(request.url_vars["database"]))
    except KeyError:
        raise NotFound("no such database") from None
    await datasette.ensure_permissions(request.actor, [("view-database", db.name), "view-instance"])
    revision = await council_revision(db)
    if revision is None:
        raise NotFound(f"{db.name} is not a council-db database: it has no bias report")
    _check_schema(db.name, revision)
    from council_db.outlets.report_params import BadParameter, window_from_query

    try:
        window, filters = window_from_query({name: request.args.getlist(name) for name in request.args.keys()})
    except BadParameter as error:
        raise BadRequest(str(error)) from None
    from council_db.errors import UsageError

    try:
        page = await asyncio.get_running_loop().run_in_executor(BUILDER, report_page, db.path, window, filters)
    except UsageError as error:  # a dimension no record in the window has: the line names those it has
        raise BadRequest(str(error).replace("--dimension ", "dimension=")) from None
    return Response.html(page)


def _check_schema(name: str, revision: str) -> None:
    from council_db.store.migrate import HEAD

    if revision == HEAD:
        return
    fix = ("run council-db db upgrade on it (Datasette only reads it)" if revision < HEAD
           else "upgrade council-db beside Datasette (pip install -U 'council-db[datasette]')")
    raise SchemaMismatch(f"{name} has council-db schema {revision} and this council-db reads {HEAD}: {fix}")


def report_page(path: str, window: Window, filters: dict[str, Any]) -> str:
    """The HTML report of the file at ``path``, read through a read-only connection."""
    from council_db.report.for_window import report_for_window
    from council_db.store.database import Database, read_only_uri

    file = Path(path)
    target = read_only_uri(file) or f"file:{quote(os.fsencode(file))}?mode=ro"
    return report_for_window(Database(f"sqlite:///{file}", sqlite_target=target), window, filters).html()
