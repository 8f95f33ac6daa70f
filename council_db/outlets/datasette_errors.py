"""Datasette's page for a client's mistake (a 4xx), without a traceback in the server log.

Datasette's own exception handler prints a full traceback, locals included, for every error
it handles: a bad query string gives one, so a review's 307 requests left 171 tracebacks,
among which the 500s that need one are hard to find. The plugin wraps the handler: for a 4xx
it answers with the page Datasette's handler would give (the same JSON or error template,
mirroring datasette/handle_exception.py) without calling it, so nothing is printed but the
access log's line. A 500 goes to Datasette's handler as before, traceback and all.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from datasette import Response, hookimpl
from datasette.utils import add_cors_headers
from datasette.utils.asgi import Base400
from datasette.views.base import DatasetteError
from markupsafe import Markup

DEFAULT_HANDLER = "datasette.handle_exception"  # the module of the handler that prints tracebacks


@hookimpl(hookwrapper=True)
def handle_exception(datasette, request, exception):
    """For a 4xx, Datasette's own handler's answer is replaced by the same page, unprinted;
    other plugins' answers stay."""
    outcome = yield
    status = client_error(exception)
    if status is None:
        return
    outcome.force_result([quiet_page(datasette, request, exception, status)
                          if getattr(result, "__module__", None) == DEFAULT_HANDLER else result
                          for result in outcome.get_result()])


def client_error(exception: Exception) -> int | None:
    """The 4xx status Datasette answers ``exception`` with, or None for a server error."""
    status = getattr(exception, "status", None) if isinstance(exception, (Base400, DatasetteError)) else None
    return status if isinstance(status, int) and 400 <= status < 500 else None


def quiet_page(datasette, request, exception: Exception, status: int) -> Callable[[], Awaitable[Response]]:
    """Datasette's error page for ``exception``: JSON for a .json path, else its error template."""
    async def page() -> Response:
        info: dict[str, Any]
        if isinstance(exception, DatasetteError):
            message = Markup(exception.message) if exception.message_is_html else exception.message
            info, title = dict(exception.error_dict), exception.title
        else:
            message, info, title = exception.args[0], {}, None
        info.update({"ok": False, "error": message, "status": status, "title": title})
        headers: dict[str, str] = {}
        if datasette.cors:
            add_cors_headers(headers)
        if request.path.split("?")[0].endswith(".json"):
            return Response.json(info, status=status, headers=headers)
        template = datasette.jinja_env.select_template([f"{status}.html", "error.html"])
        context = dict(info, urls=datasette.urls, app_css_hash=datasette.app_css_hash(), menu_links=lambda: [])
        return Response.html(await template.render_async(context), status=status, headers=headers)

    return page
