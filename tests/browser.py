"""Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`), with no dependency:
open an HTML file from disk, run script in it, read what it logged and what it tried to load, take screenshots.

Used by the HTML report's tests (tests/test_html_report.py), its benchmark and the README screenshot
(benchmarks/html_report.py). The browser: $ONNXLINT_CHROMIUM, else `chromium` (Debian's package), `chromium-browser`,
`google-chrome` on PATH. Each session gets a fresh profile folder and flags that keep it off the network (no
component updates, no background requests, every host name resolving to nothing).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions",
         "--mute-audio", "--host-resolver-rules=MAP * ~NOTFOUND", "--hide-scrollbars", "--remote-debugging-pipe"]


def find() -> str | None:
    """The Chromium executable, or None."""
    env = os.environ.get("ONNXLINT_CHROMIUM")
    if env:
        return env if os.access(env, os.X_OK) else None
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        got = shutil.which(name)
        if got:
            return got
    return None


class BrowserError(RuntimeError):
    pass


class Chromium:
    """One browser process with one page. `with Chromium() as b: b.open(path); b.evaluate("1+1")`."""

    def __init__(self, exe: str | None = None, width: int = 1600, height: int = 1000, timeout: float = 60):
        self.exe = exe or find()
        if self.exe is None:
            raise BrowserError("no Chromium found (apt-get install chromium, or set ONNXLINT_CHROMIUM)")
        self.width, self.height, self.timeout = width, height, timeout
        self.console: list[dict[str, Any]] = []  # console calls, exceptions and browser log entries
        self.requests: list[str] = []  # every URL the page asked for
        self._id = 0
        self._buf = b""
        self._events: list[dict[str, Any]] = []
        self.session: str | None = None

    # -------------------------------------------------------------- process and pipe
    def __enter__(self) -> "Chromium":
        self.profile = tempfile.mkdtemp(prefix="onnxlint-chromium-")
        to_child_r, self._w = os.pipe()
        self._r, from_child_w = os.pipe()
        # the child's ends above fd 10, so that moving them onto 3 and 4 cannot overwrite one with the other
        c_in = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
        c_out = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
        os.close(to_child_r)
        os.close(from_child_w)

        def fds() -> None:  # the protocol's pipe: the browser reads fd 3, writes fd 4
            os.dup2(c_in, 3)
            os.dup2(c_out, 4)

        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([self.exe, *FLAGS, f"--user-data-dir={self.profile}",
                                      f"--window-size={self.width},{self.height}", "about:blank"],
                                     pass_fds=(3, 4, c_in, c_out), preexec_fn=fds, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=self.stderr)
        os.close(c_in)
        os.close(c_out)
        try:
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                self.call(f"{domain}.enable")
            self.call("Emulation.setDeviceMetricsOverride", {"width": self.width, "height": self.height,
                                                              "deviceScaleFactor": 1, "mobile": False})
        except Exception:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            if self.proc.poll() is None:
                self._send("Browser.close", {}, None)
                self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired, BrowserError):
            self.proc.kill()
            self.proc.wait()
        for fd in (self._w, self._r):
            try:
                os.close(fd)
            except OSError:
                pass
        self.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def _send(self, method: str, params: dict[str, Any], session: str | None) -> int:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self._w, data):]
        except BrokenPipeError:
            raise BrowserError(f"Chromium exited (code {self.proc.poll()}): {self._stderr_tail()}") from None
        return self._id

    def _recv(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("Chromium did not answer in time")
            ready, _, _ = select.select([self._r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise BrowserError(f"Chromium closed the pipe (exit {self.proc.poll()}): {self._stderr_tail()}")
            self._buf += chunk
        raw, _, self._buf = self._buf.partition(b"\0")
        msg: dict[str, Any] = json.loads(raw)
        if "method" in msg:
            self._event(msg)
        return msg

    def _stderr_tail(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")[-800:]

    def _event(self, msg: dict[str, Any]) -> None:
        method, p = msg["method"], msg.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            self.console.append({"level": p.get("type"), "text": text})
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            self.console.append({"level": "exception", "text": d.get("exception", {}).get("description") or d.get("text")})
        elif method == "Log.entryAdded":
            e = p.get("entry", {})
            self.console.append({"level": e.get("level"), "text": e.get("text"), "source": e.get("source")})
        elif method == "Network.requestWillBeSent":
            self.requests.append(p.get("request", {}).get("url", ""))
        self._events.append(msg)

    def call(self, method: str, params: dict[str, Any] | None = None, timeout: float | None = None) -> dict[str, Any]:
        """One protocol command on the page (the browser itself before the page exists); its result."""
        mid = self._send(method, params or {}, self.session)
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            msg = self._recv(deadline)
            if msg.get("id") == mid:
                if "error" in msg:
                    raise BrowserError(f"{method}: {msg['error'].get('message')}")
                result: dict[str, Any] = msg.get("result", {})
                return result

    def wait_event(self, method: str, timeout: float | None = None) -> dict[str, Any]:
        for i, msg in enumerate(self._events):
            if msg["method"] == method:
                del self._events[: i + 1]
                return msg
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            msg = self._recv(deadline)
            if msg.get("method") == method:
                self._events.clear()
                return msg

    # -------------------------------------------------------------- page
    def open(self, path: Path, ready: str = "document.body && document.body.dataset.ready === '1'") -> float:
        """Load a file and wait until `ready` holds; the seconds from navigation to ready."""
        self._events.clear()
        t0 = time.monotonic()
        url = Path(path).resolve().as_uri()
        self.page_url = url
        got = self.call("Page.navigate", {"url": url})
        if got.get("errorText"):
            raise BrowserError(f"{url}: {got['errorText']}")
        self.wait_event("Page.loadEventFired")
        self.wait_for(ready)
        return time.monotonic() - t0

    def wait_for(self, expression: str, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (timeout or self.timeout)
        while not self.evaluate(f"!!({expression})"):
            if time.monotonic() > deadline:
                raise BrowserError(f"timed out waiting for {expression}; console: {self.errors()}")
            time.sleep(0.05)

    def evaluate(self, expression: str, timeout: float | None = None) -> Any:
        """The value of a script expression in the page (promises awaited), as JSON gives it."""
        got = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True},
                        timeout=timeout)
        if "exceptionDetails" in got:
            d = got["exceptionDetails"]
            raise BrowserError(f"{expression[:80]!r}: {d.get('exception', {}).get('description') or d.get('text')}")
        return got.get("result", {}).get("value")

    def errors(self) -> list[dict[str, Any]]:
        """What the page reported as an error or a warning: console errors and warnings, uncaught exceptions,
        the browser's own error log (a Content-Security-Policy violation, a failed load)."""
        return [c for c in self.console if c.get("level") in ("error", "warning", "assert", "exception")]

    def outside_requests(self) -> list[str]:
        """Requests for anything but the page itself and inline data."""
        return [u for u in self.requests if u != getattr(self, "page_url", None) and not u.startswith(("data:", "about:"))]

    def screenshot(self, path: Path) -> None:
        got = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False})
        Path(path).write_bytes(base64.b64decode(got["data"]))

    def click(self, selector: str) -> None:
        """A real mouse click (pressed and released) at the middle of the first element the selector finds."""
        box = self.evaluate(f"(function(){{var e=document.querySelector({json.dumps(selector)}); if(!e) return null; "
                            "e.scrollIntoView({block:'center'}); var r=e.getBoundingClientRect(); "
                            "return [r.left+r.width/2, r.top+r.height/2];})()")
        if box is None:
            raise BrowserError(f"nothing matches {selector}")
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1})

    def type(self, text: str) -> None:
        self.call("Input.insertText", {"text": text})

    def key(self, key: str, keycode: int = 0) -> None:
        """A key pressed and released: a printable one types its character, others (Enter: keycode 13) only their key."""
        down: dict[str, Any] = {"type": "keyDown", "key": key, "text": key} if len(key) == 1 else \
            {"type": "rawKeyDown", "key": key, "windowsVirtualKeyCode": keycode, "nativeVirtualKeyCode": keycode}
        self.call("Input.dispatchKeyEvent", down)
        self.call("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "windowsVirtualKeyCode": keycode,
                                             "nativeVirtualKeyCode": keycode})
