"""The HTML around the charts: escaping, tables, sections and the one small script (table sorting).

Every piece of library text goes through :func:`esc` (HTML-escaped, control characters replaced) and
names sit in ``<bdi>`` so right-to-left characters in one cell cannot reorder the text around it.
A Content-Security-Policy allows no network at all, no inline handlers, and only the sort script by
its hash: even a name that slipped past escaping could neither run nor fetch anything.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Sequence
from typing import Any

from ..clock import iso
from ..graph.export import clean

GENERATOR = "kaos-dream report"

SORT_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0];
      var down = th.getAttribute("aria-sort") !== "descending";
      table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", down ? "descending" : "ascending");
      var numeric = th.dataset.type === "num";
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col].dataset.v, y = b.cells[col].dataset.v;
        var c = numeric ? (parseFloat(x) - parseFloat(y)) : x.localeCompare(y);
        return (down ? -c : c) || (a.dataset.i - b.dataset.i);
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 1rem 2rem; color: #222; }
h1 { margin-bottom: 0; } h2 { border-bottom: 2px solid #ddd; padding-bottom: .2rem; margin-top: 2.2rem; }
.meta { color: #666; margin-top: .2rem; }
nav a { margin-right: 1rem; }
.cards { display: flex; flex-wrap: wrap; gap: .6rem; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: .4rem .8rem; min-width: 8rem; }
.card b { display: block; font-size: 1.3rem; }
figure.chart { margin: 1rem 0; }
table { border-collapse: collapse; margin: .6rem 0; width: 100%; }
th, td { border-bottom: 1px solid #eee; padding: .2rem .5rem; text-align: left; vertical-align: top; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
table.sortable th { cursor: pointer; user-select: none; }
th[aria-sort=descending]::after { content: " \\25BE"; } th[aria-sort=ascending]::after { content: " \\25B4"; }
.empty { color: #777; font-style: italic; }
.scroll { max-height: 32rem; overflow: auto; }
"""


def esc(value: Any) -> str:
    return html.escape(clean(str(value)), quote=True)


def name(value: Any) -> str:
    return f"<bdi>{esc(value)}</bdi>"


def pct(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.0f} %"


def when(ts: float | None) -> str:
    return "-" if ts is None else esc(iso(ts))


def chart(key: str, svg: str) -> str:
    return f'<figure class="chart" data-chart="{esc(key)}">{svg}</figure>'


def empty(text: str) -> str:
    return f'<p class="empty">{esc(text)}</p>'


def cards(items: Sequence[tuple[str, Any]]) -> str:
    return '<div class="cards">' + "".join(
        f'<div class="card"><b>{esc(v)}</b>{esc(k)}</div>' for k, v in items) + "</div>"


class Cell:
    """A table cell: HTML to show (already escaped) and the value it sorts by."""

    def __init__(self, shown: str, sort: float | str | None = None, numeric: bool = False) -> None:
        self.shown, self.sort, self.numeric = shown, shown if sort is None else sort, numeric


def num(value: float | int | None, shown: str | None = None) -> Cell:
    return Cell(esc(shown if shown is not None else ("-" if value is None else value)),
                -1 if value is None else value, numeric=True)


def text(value: Any) -> Cell:
    return Cell(esc("-" if value is None else value), str(value or ""))


def table(columns: Sequence[tuple[str, bool]], rows: Sequence[Sequence[Cell]], *, sortable: bool = False,
          scroll: bool = False) -> str:
    """``columns`` are (title, numeric); numeric columns align right and sort as numbers."""
    head = "".join(f'<th{" class=n" if numeric else ""} data-type="{"num" if numeric else "text"}">{esc(title)}</th>'
                   for title, numeric in columns)
    body = "".join(
        f'<tr data-i="{i}">' + "".join(
            f'<td{" class=n" if c.numeric else ""} data-v="{esc(c.sort)}">{c.shown}</td>' for c in row) + "</tr>"
        for i, row in enumerate(rows))
    grid = (f'<table{" class=sortable" if sortable else ""}><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>")
    return f'<div class="scroll">{grid}</div>' if scroll else grid


def section(key: str, title: str, body: str) -> str:
    return f'<section id="{esc(key)}"><h2>{esc(title)}</h2>{body}</section>'


def document(title: str, subtitle: str, sections: Sequence[tuple[str, str, str]]) -> str:
    digest = base64.b64encode(hashlib.sha256(SORT_SCRIPT.encode()).digest()).decode()
    policy = (f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{digest}'; "
              "base-uri 'none'; form-action 'none'")
    nav = "".join(f'<a href="#{esc(k)}">{esc(t)}</a>' for k, t, _ in sections)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        f'<meta name="generator" content="{GENERATOR}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>"
        f"<header><h1>{esc(title)}</h1><p class=\"meta\">{esc(subtitle)}</p><nav>{nav}</nav></header>"
        + "".join(section(k, t, b) for k, t, b in sections)
        + f"<script>{SORT_SCRIPT}</script></body></html>\n"
    )
