"""The report as a person sees it: loaded from disk in headless Chromium with the network off.

Needs Debian's ``chromium`` (``.ci/run`` installs it); skipped where no browser is installed.
Set ``KAOS_REPORT_SCREENSHOT=docs/report.png`` to keep the demo report's screenshot (the README's).
"""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest
from PIL import Image

from kaos_dream.demo import build_demo_library

from .browser import Chromium, chromium_fixture, find_browser, open_report, problems, requests
from .conftest import run_kaos
from .report_libraries import HOSTILE, RTL_OVERRIDE, hostile_library

BROWSER = find_browser()
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no chromium installed (apt-get install chromium)")
SECTIONS = ["overview", "skills", "cost", "failures", "graph", "dream"]

CHART_STATS = """
Array.from(document.querySelectorAll("figure.chart")).map(function (f) {
  var box = f.querySelector("svg").getBoundingClientRect();
  return {key: f.dataset.chart, drawn: f.querySelectorAll("svg path, svg use").length,
          width: box.width, height: box.height};
})
"""


browser = chromium_fixture("chromium-profile")


def render(db: Path, out: Path) -> Path:
    r = run_kaos("report", "--out", str(out), db=db)
    assert r.returncode == 0, r.stderr
    return out


def non_blank(png: bytes) -> float:
    """Share of pixels that are not (near) white."""
    image = Image.open(io.BytesIO(png)).convert("L")
    histogram = image.histogram()
    return 1 - sum(histogram[245:]) / (image.width * image.height)


def test_demo_report_in_a_browser(browser: Chromium, tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    build_demo_library(str(db))
    page = open_report(browser, render(db, tmp_path / "report.html"))
    assert problems(page) == []
    assert all(url.startswith("file:") for url in requests(page)), requests(page)
    assert page.evaluate("Array.from(document.querySelectorAll('section')).map(s => s.id)") == SECTIONS
    for key in SECTIONS:
        assert page.evaluate(f"document.getElementById('{key}').getBoundingClientRect().height") > 50
    stats = page.evaluate(CHART_STATS)
    assert len(stats) >= 6
    for chart in stats:
        assert chart["drawn"] >= 20 and chart["width"] > 300 and chart["height"] > 100, chart
    height = int(page.evaluate("document.documentElement.scrollHeight"))
    shot = tmp_path / "report.png"
    page.screenshot(shot, 1200, min(height, 2400))
    assert non_blank(shot.read_bytes()) > 0.05
    assert len(Image.open(shot).convert("RGB").getcolors(1 << 24) or []) > 100  # charts in colour, not a flat page
    target = os.environ.get("KAOS_REPORT_SCREENSHOT")
    if target:
        shutil.copyfile(shot, target)
    # the skills table sorts when a header is clicked, as a person would click it
    uses = "Array.from(document.querySelectorAll('#skills table.sortable tbody tr')).map(r => +r.cells[1].dataset.v)"
    click = "document.querySelectorAll('#skills table.sortable th')[{}].click()"
    page.evaluate(click.format(1))
    assert page.evaluate(uses) == sorted(page.evaluate(uses), reverse=True)
    page.evaluate(click.format(1))
    ascending = page.evaluate(uses)
    assert ascending == sorted(ascending) and ascending[0] < ascending[-1]
    assert problems(page) == []


def test_hostile_names_do_not_execute(browser: Chromium, tmp_path: Path) -> None:
    db = tmp_path / "hostile.db"
    hostile_library(db)
    page = open_report(browser, render(db, tmp_path / "report.html"))
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert problems(page) == []  # a blocked script would be a CSP error in the log
    assert all(url.startswith("file:") for url in requests(page))
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    assert page.evaluate("document.querySelectorAll('script').length") == 1
    cells = page.evaluate("Array.from(document.querySelectorAll('#skills tbody td:first-child'))"
                          ".map(td => td.textContent)")
    for name in HOSTILE:
        if name != HOSTILE[3]:
            assert name in cells  # shown literally
    assert RTL_OVERRIDE in cells
    assert page.evaluate("document.querySelector('#skills tbody td:first-child bdi') !== null")


def test_empty_report_in_a_browser(browser: Chromium, tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    assert run_kaos("init", db=db).returncode == 0
    page = open_report(browser, render(db, tmp_path / "report.html"))
    assert problems(page) == []
    assert page.evaluate("Array.from(document.querySelectorAll('section')).map(s => s.id)") == SECTIONS
    assert page.evaluate("document.querySelectorAll('p.empty').length") >= 5


def test_a_report_that_asks_the_network_is_caught(browser: Chromium, tmp_path: Path) -> None:
    """The check above would see a request: a page that loads an image from the network fails it."""
    page_file = tmp_path / "leaky.html"
    page_file.write_text('<!DOCTYPE html><html><body><img src="http://example.invalid/x.png"></body></html>')
    page = open_report(browser, page_file)
    assert any(url.startswith("http://example.invalid") for url in requests(page))
    assert any("failed load" in p for p in problems(page))
