"""Headless Chromium driven over its DevTools protocol, for looking at the report as a person would.

Why the raw protocol (over websocket-client, a small pure-Python package) rather than Playwright or
Selenium: Playwright downloads and pins its own browser builds (the test must use Debian's
``chromium``), Selenium needs a matching chromedriver; the protocol gives everything the tests need
— console messages, every network request, script evaluation, screenshots — from the browser itself.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import websocket

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def find_browser() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


class Page:
    """One browser tab: ``call`` sends a command and returns its result; events pile up in ``events``."""

    def __init__(self, ws: websocket.WebSocket) -> None:
        self.ws = ws
        self.events: list[dict[str, Any]] = []
        self._next = 0

    def call(self, method: str, timeout: float = 30.0, **params: Any) -> dict[str, Any]:
        self._next += 1
        self.ws.send(json.dumps({"id": self._next, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = json.loads(self.ws.recv())
            if message.get("id") == self._next:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)
        raise TimeoutError(method)

    def wait_for(self, event: str, timeout: float = 30.0) -> dict[str, Any]:
        for seen in self.events:
            if seen["method"] == event:
                return seen
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = json.loads(self.ws.recv())
            if "method" in message:
                self.events.append(message)
                if message["method"] == event:
                    return message
        raise TimeoutError(event)

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path, width: int, height: int) -> None:
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                         clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1})
        path.write_bytes(base64.b64decode(shot["data"]))

    def named(self, *methods: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["method"] in methods]


class Chromium:
    """A headless browser in its own profile folder, reachable only on a loopback debugging port."""

    def __init__(self, binary: str, profile: Path) -> None:
        args = [binary, "--headless=new", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--remote-debugging-port=0", "--remote-allow-origins=*", f"--user-data-dir={profile}",
                # the report must need nothing from the network: any name lookup fails
                "--host-resolver-rules=MAP * ~NOTFOUND", "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text().strip():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("chromium did not start")
            time.sleep(0.1)
        self.port = int(port_file.read_text().split()[0])

    def page(self) -> Page:
        """A new tab, so no console or log entry of an earlier page is replayed into this one."""
        ask = urllib.request.Request(f"http://127.0.0.1:{self.port}/json/new?about:blank", method="PUT")
        with urllib.request.urlopen(ask, timeout=10) as answer:
            tab = json.load(answer)
        return Page(websocket.create_connection(tab["webSocketDebuggerUrl"], timeout=60, suppress_origin=True))

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def chromium_fixture(profile: str) -> Callable[..., Iterator[Chromium]]:
    """A module-scoped ``browser`` fixture: one headless Chromium in a fresh ``profile`` folder,
    shared by the module's tests and closed after them (the module skips when none is installed)."""

    @pytest.fixture(scope="module")
    def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
        binary = find_browser()
        assert binary is not None
        chromium = Chromium(binary, tmp_path_factory.mktemp(profile))
        yield chromium
        chromium.close()

    return browser


def open_report(browser: Chromium, path: Path, width: int = 1200, height: int = 900) -> Page:
    """Load a report from disk with the network switched off; return the tab once it has loaded."""
    page = browser.page()
    for domain in ("Page", "Runtime", "Log", "Network"):
        page.call(f"{domain}.enable")
    page.call("Network.emulateNetworkConditions", offline=True, latency=0, downloadThroughput=-1,
              uploadThroughput=-1)
    page.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
    page.call("Page.navigate", url=path.resolve().as_uri())
    page.wait_for("Page.loadEventFired")
    return page


def problems(page: Page) -> list[str]:
    """Console errors, uncaught exceptions, log errors (CSP violations among them) and failed loads."""
    found = []
    for e in page.named("Runtime.consoleAPICalled"):
        if e["params"]["type"] in ("error", "assert"):
            found.append("console: " + " ".join(str(a.get("value", a.get("description"))) for a in e["params"]["args"]))
    for e in page.named("Runtime.exceptionThrown"):
        found.append("exception: " + json.dumps(e["params"]["exceptionDetails"])[:300])
    for e in page.named("Log.entryAdded"):
        if e["params"]["entry"]["level"] == "error":
            found.append("log: " + e["params"]["entry"]["text"])
    for e in page.named("Network.loadingFailed"):
        found.append("failed load: " + json.dumps(e["params"])[:300])
    return found


def requests(page: Page) -> list[str]:
    return [e["params"]["request"]["url"] for e in page.named("Network.requestWillBeSent")]
