"""Bench and test helper (not part of frames): open an HTML file in a headless Chromium (the system's package) and
report what it did: a
screenshot, the rendered DOM, console messages and network attempts. Used by the HTML report's test
and bench script to show that the report renders offline with no request and no console error.

Every console message of the page is logged (`--log-level=0`: `INFO:CONSOLE`), and counts as a
problem. A network attempt shows up there too: the report's Content-Security-Policy (`default-src
'none'`) makes the browser block any fetch and say so on the console; and Chromium runs with a
proxy on a closed local port and a resolver that resolves nothing, so nothing could leave the
machine anyway. `urls_named` checks the HTML itself for URLs, which covers a page without the policy.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

#: Chromium's log lines that mean the page tried to reach something or reported an error.
_BAD = re.compile(r":CONSOLE[:(]|Refused to|Uncaught")
#: A URL the page itself names, other than an XML namespace name (never fetched).
_URL = re.compile(r"""(?<!xmlns=")(?<!xmlns:xlink=")(?:https?|ftp)://[^\s"'<>)]+""")


@dataclass
class BrowserResult:
    """What the browser saw.

    Attributes:
        dom: the page's DOM after loading (`--dump-dom`).
        screenshot: the PNG written.
        problems: log lines of the page's console messages (errors, blocked loads), uncaught errors.
    """

    dom: str
    screenshot: Path
    problems: list[str] = field(default_factory=list)


def find_chromium() -> str | None:
    """The path of a Chromium or Chrome binary on PATH, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def urls_named(html: str) -> list[str]:
    """Every URL `html` names, XML namespace names (`xmlns="http://www.w3.org/2000/svg"`) left out."""
    return _URL.findall(html)


def open_in_chromium(page: Path, screenshot: Path, *, width: int = 1280, height: int = 2400,
                     timeout_s: float = 120) -> BrowserResult:
    """Load `page` in headless Chromium twice (DOM dump, then screenshot) with logging on.

    Raises:
        FileNotFoundError: no Chromium is installed (see `find_chromium`).
        subprocess.TimeoutExpired: the browser took longer than `timeout_s` seconds.
    """
    binary = find_chromium()
    if binary is None:
        raise FileNotFoundError("no chromium on PATH (Debian: apt-get install chromium)")
    common = [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--enable-logging=stderr", "--log-level=0", "--proxy-server=127.0.0.1:9",
              "--host-resolver-rules=MAP * ~NOTFOUND",
              f"--window-size={width},{height}"]
    url = page.resolve().as_uri()
    dump = subprocess.run([*common, "--dump-dom", url], capture_output=True, text=True, timeout=timeout_s)
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    shot = subprocess.run([*common, f"--screenshot={screenshot}", url], capture_output=True, text=True,
                          timeout=timeout_s)
    problems = [line for line in (dump.stderr + shot.stderr).splitlines() if _BAD.search(line)]
    return BrowserResult(dump.stdout, screenshot, problems)
