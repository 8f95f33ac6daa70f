"""Datasette's column facet, answered from the day totals on council-db's record views.

A facet on reviewer, model or score scale over score_records or within_session_scores (or
on reviewer_id, model_id, scale_id over scores) counts every record: 6-9 s at a million
sessions, and Datasette stops a facet after 200 ms. On a council-db database at the schema
this council-db reads, with no filter or only equality on those columns, this facet sums the
day totals instead (outlets/facet_counts.py), in milliseconds at any size, to the same
counts. Any other facet, filter or database is Datasette's own, unchanged.

The plugin puts this class in the place of Datasette's ColumnFacet (a hook wrapper on
register_facet_classes), so `?_facet=reviewer`, the column menu's "Facet by this" and the
metadata's facets all use it.
"""

from __future__ import annotations

from typing import Any

from datasette.database import QueryInterrupted
from datasette.facets import ColumnFacet
from datasette.utils import path_with_added_args, path_with_removed_args

from council_db.outlets.datasette_databases import council_revision
from council_db.outlets.facet_counts import COUNTED, Counted

# Query-string arguments that change a table page but not which rows it has.
NOT_FILTERS = {"_size", "_sort", "_sort_desc", "_next", "_col", "_nocol", "_labels", "_nolabels", "_shape",
               "_json", "_trace", "_context", "_timelimit", "_nocount", "_nofacet", "_nosuggest", "_ttl",
               "_extra", "_stream", "_dl", "_hide_sql", "_show_sql"}


class CountedColumnFacet(ColumnFacet):
    """ColumnFacet, with the facets the day totals can count counted from them."""

    async def facet_results(self) -> tuple[list[dict[str, Any]], list[str]]:
        counted, filters = await self._counted()
        if counted is None:
            return await super().facet_results()
        mine = [c for c in self.get_configs() if _column(c) in counted.columns]
        rest = [c for c in self.get_configs() if c not in mine]
        results, timed_out = await _Configured(self, rest).facet_results() if rest else ([], [])
        for source_and_config in mine:
            column = _column(source_and_config)
            try:
                results.append(await self._from_totals(counted, column, filters, source_and_config["source"]))
            except QueryInterrupted:
                timed_out.append(column)
        return results, timed_out

    async def suggest(self) -> list[dict[str, Any]]:
        """Datasette's rule for suggesting a facet (2 to facet-size values, one of them on more
        than one row), applied to the counted columns from the totals; the other columns are
        Datasette's to suggest, with the page's row count taken from the totals."""
        counted, filters = await self._counted()
        if counted is None:
            return await super().suggest()
        enabled = [_column(c) for c in self.get_configs()]
        facet_size, suggested = self.get_facet_size(), []
        for column in (c for c in counted.columns if c not in enabled):
            try:
                rows = await self._counts(counted, column, filters, facet_size + 1)
            except QueryInterrupted:
                continue
            if 1 < len(rows) <= facet_size and any(row["count"] > 1 for row in rows):
                suggested.append({"name": column, "toggle_url": self._url(path_with_added_args(
                    self.request, {"_facet": column}))})
        if self.row_count is None:
            try:
                every = await self._counts(counted, next(iter(counted.columns)), filters, None)
            except QueryInterrupted:
                return suggested  # not Datasette's count of every record instead
            self.row_count = sum(row["count"] for row in every)
        others = [{"source": "request", "config": {"simple": column}} for column in [*enabled, *counted.columns]]
        return suggested + await _Configured(self, others).suggest()

    async def _counts(self, counted: Counted, column: str, filters: dict[str, str | int], limit: int | None) -> list:
        sql, params = counted.counts(column, filters, limit)
        return (await self.ds.execute(self.database, sql, params, truncate=False,
                                      custom_time_limit=self.ds.setting("facet_time_limit_ms"))).rows

    async def _counted(self) -> tuple[Counted | None, dict[str, str | int]]:
        """What counts this page's rows, and its filters; (None, {}) when the totals cannot."""
        counted = COUNTED.get(self.table or "")
        if counted is None:
            return None, {}
        filters = self._equality_filters(counted)
        if filters is None:
            return None, {}
        from council_db.store.migrate import HEAD

        if await council_revision(self.ds.get_database(self.database)) != HEAD:
            return None, {}
        return counted, filters

    def _equality_filters(self, counted: Counted) -> dict[str, str | int] | None:
        """The page's filters when each is one `column=value` on a counted column, else None."""
        filters: dict[str, str | int] = {}
        for key in self.request.args.keys():
            if key.startswith("_facet") or key in NOT_FILTERS:
                continue
            column, values = key.removesuffix("__exact"), self.request.args.getlist(key)
            if column not in counted.columns or column in filters or len(values) != 1:
                return None
            value = counted.filter_value(column, values[0])
            if value is None:
                return None
            filters[column] = value
        return filters

    async def _from_totals(self, counted: Counted, column: str, filters: dict[str, str | int],
                           source: str) -> dict[str, Any]:
        """One facet's result, in the shape Datasette's ColumnFacet gives it."""
        facet_size = self.get_facet_size()
        rows = await self._counts(counted, column, filters, facet_size + 1)
        values = [row["value"] for row in rows[:facet_size]]
        labels = await self.ds.expand_foreign_keys(self.database, self.table, column, values)
        qs_pairs = self.get_querystring_pairs()
        return {
            "name": column, "type": self.type, "hideable": source != "metadata",
            "toggle_url": self.ds.urls.path(path_with_removed_args(self.request, {"_facet": column})),
            "results": [self._value(column, row["value"], row["count"], labels, qs_pairs) for row in rows[:facet_size]],
            "truncated": len(rows) > facet_size,
        }

    def _value(self, column: str, value: Any, count: int, labels: dict, qs_pairs: list) -> dict[str, Any]:
        """A facet value with its count and the link that selects it or, when selected, clears it."""
        selected = (column, str(value)) in qs_pairs
        path = (path_with_removed_args(self.request, {column: str(value)}) if selected
                else path_with_added_args(self.request, {column: value}))
        return {"value": value, "label": labels.get((column, value), value), "count": count,
                "toggle_url": self._url(path), "selected": selected}

    def _url(self, path: str) -> str:
        return self.ds.absolute_url(self.request, self.ds.urls.path(path))


class _Configured(ColumnFacet):
    """Datasette's ColumnFacet on a facet's page, for the facets given only."""

    def __init__(self, facet: ColumnFacet, configs: list[dict[str, Any]]) -> None:
        super().__init__(facet.ds, facet.request, facet.database, sql=facet.sql, table=facet.table,
                         params=facet.params, metadata=facet.metadata, row_count=facet.row_count)
        self.configs = configs

    def get_configs(self) -> list[dict[str, Any]]:
        return self.configs


def _column(source_and_config: dict[str, Any]) -> str:
    config = source_and_config["config"]
    return config.get("column") or config["simple"]
