"""Looking at the report the way a reader does: in a real browser (headless Chromium).

Why: the first screen is judged by what a reader sees in ten seconds -- whether every study's
card is there, whether text overflows or a badge is unreadable. Parsing the HTML cannot tell
that; a browser's rendered DOM and a screenshot can. ``cryptoffload report --screenshot PNG``
and the report's browser test use this module. Chromium is optional (CI has none): callers ask
:func:`find_chromium` first and skip or refuse with a clear reason; a browser that is missing,
fails or hangs is the machine's problem, not a bug here, so it raises
:class:`~cryptoffload.errors.BackendUnavailable` (one ``error:`` line on the command line).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from cryptoffload.errors import BackendUnavailable

#: Executable names tried in order (Debian's ``chromium``, Chrome's and Ubuntu's names).
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: The first screen as a reader's laptop shows it.
FIRST_SCREEN = (1400, 1000)
TIMEOUT_S = 90.0

#: Where a probe's answer is left in the page (:func:`probe`).
PROBE_ID = "cryptoffload-probe"

#: Lists in ``bad`` every element whose box reaches past the window's right or left edge. An
#: element inside a sideways-scrolling box (``.scroll``) is clipped by it, so only the box
#: itself counts.
OVERFLOW_JS = """var w=document.documentElement.clientWidth,bad=[];
document.querySelectorAll('body *').forEach(function(el){
if(el.parentElement&&el.parentElement.closest('.scroll'))return;
var r=el.getBoundingClientRect();if(r.width>0&&(r.right>w+1||r.left<-1)){
bad.push(el.tagName.toLowerCase()+(el.id?'#'+el.id:'')+(el.className?'.'+String(el.className).split(' ')[0]:'')
+' '+Math.round(r.left)+'..'+Math.round(r.right));}});"""


def find_chromium() -> str | None:
    """The path of a Chromium-family browser on PATH (``CRYPTOFFLOAD_CHROMIUM`` wins), or None."""
    env = os.environ.get("CRYPTOFFLOAD_CHROMIUM")
    if env:
        return shutil.which(env)
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def require_chromium() -> str:
    """The browser, or :class:`BackendUnavailable` saying how to get one (for options that need it)."""
    path = find_chromium()
    env = os.environ.get("CRYPTOFFLOAD_CHROMIUM")
    if path is None and env:
        raise BackendUnavailable(f"CRYPTOFFLOAD_CHROMIUM={env} is not an executable on PATH: set it to a Chromium "
                                 "binary, or unset it to look for chromium")
    if path is None:
        raise BackendUnavailable("no Chromium found to render the report (tried " + ", ".join(CHROMIUM_NAMES)
                          + "): install one (apt-get install chromium) or set CRYPTOFFLOAD_CHROMIUM to its path")
    return path


def _run(browser: str, args: list[str], what: str) -> subprocess.CompletedProcess[str]:
    # A throw-away profile: nothing of the user's browser is read or written. No network:
    # the report fetches nothing, and --no-proxy-server keeps Chromium from looking for one.
    with tempfile.TemporaryDirectory(prefix="cryptoffload-chromium-") as profile:
        # Chromium's sandbox cannot start as root (containers, CI); elsewhere it stays on
        sandbox = ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
        cmd = [browser, "--headless", *sandbox, "--disable-gpu", "--no-first-run", "--no-proxy-server",
               "--hide-scrollbars", f"--user-data-dir={profile}", *args]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired as exc:
            raise BackendUnavailable(f"{what}: {browser} did not finish in {TIMEOUT_S:g} s") from exc
    if done.returncode != 0:
        raise BackendUnavailable(f"{what}: {browser} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return done


def rendered_dom(index: str | os.PathLike[str], browser: str | None = None) -> str:
    """The DOM of ``index`` after the browser laid it out (``--dump-dom``)."""
    page = Path(index).resolve()
    return _run(browser or require_chromium(), ["--dump-dom", page.as_uri()], f"render {page}").stdout


def probe(index: str | os.PathLike[str], script: str, width: int = FIRST_SCREEN[0],
          browser: str | None = None) -> dict[str, Any]:
    """Lay ``index`` out in a window ``width`` pixels wide, run ``script`` in it once the page
    and its images have loaded, and return the JSON the script leaves in ``<pre id="{PROBE_ID}">``.

    The script goes into a copy of the page written beside it (so its figures load) and removed
    afterwards: the report itself carries no script."""
    exe = browser or require_chromium()
    page = Path(index).resolve()
    doc = page.read_text(encoding="utf-8")
    fd, copy = tempfile.mkstemp(prefix=".probe-", suffix=".html", dir=page.parent)
    tag = f"<script>window.addEventListener('load',function(){{{script}}});</script>"
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(doc.replace("</body>", tag + "</body>", 1) if "</body>" in doc else doc + tag)
        dom = _run(exe, [f"--window-size={width},{FIRST_SCREEN[1]}", "--dump-dom", Path(copy).as_uri()],
                   f"lay out {page}").stdout
    finally:
        os.unlink(copy)
    found = re.search(rf"<pre id=\"{PROBE_ID}\">(.*?)</pre>", dom, re.S)
    if found is None:
        raise BackendUnavailable(f"lay out {page}: {exe} ran no script (the probe left no answer)")
    answer = json.loads(html.unescape(found.group(1)))
    if not isinstance(answer, dict):
        raise BackendUnavailable(f"lay out {page}: the probe's answer is not an object")
    return answer


def answer_js(expression: str) -> str:
    """JavaScript that leaves ``expression``'s value (JSON) where :func:`probe` reads it."""
    return (f"var o=document.createElement('pre');o.id='{PROBE_ID}';o.textContent=JSON.stringify({expression});"
            "document.body.appendChild(o);")


def wider_than_viewport(index: str | os.PathLike[str], width: int = FIRST_SCREEN[0],
                        browser: str | None = None) -> tuple[int, int, list[str]]:
    """Lay ``index`` out in a window ``width`` pixels wide and return (the window's width, the
    page's scroll width, the elements reaching past the window's edges)."""
    data = probe(index, OVERFLOW_JS + answer_js("{viewport:innerWidth,page:document.scrollingElement.scrollWidth,wide:bad}"),
                 width, browser)
    return int(data["viewport"]), int(data["page"]), list(data["wide"])


def screenshot(index: str | os.PathLike[str], png: str | os.PathLike[str], size: tuple[int, int] = FIRST_SCREEN,
               browser: str | None = None) -> Path:
    """Write a PNG of the first ``size`` pixels (width, height) of ``index`` as the browser shows it.

    Chromium writes the PNG itself; it goes to a temporary name in the target folder first and
    is renamed, so ``png`` is either the new screenshot or untouched."""
    exe = browser or require_chromium()
    page, target = Path(index).resolve(), Path(png)
    fd, tmp = tempfile.mkstemp(prefix=".screenshot-", suffix=".png", dir=target.parent)
    os.close(fd)
    try:
        _run(exe, [f"--screenshot={tmp}", f"--window-size={size[0]},{size[1]}", page.as_uri()],
             f"screenshot {page}")
        if Path(tmp).stat().st_size == 0 or Path(tmp).read_bytes()[:8] != b"\x89PNG\r\n\x1a\n":
            raise BackendUnavailable(f"screenshot {page}: {exe} wrote no PNG")
        os.chmod(tmp, 0o644)  # a picture of a public report (mkstemp made it 0600)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def _page_copy(page: Path, doc: str) -> Path:
    """``doc`` written beside ``page`` (so its figures load) under a hidden temporary name."""
    fd, copy = tempfile.mkstemp(prefix=".shot-", suffix=".html", dir=page.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(doc)
    return Path(copy)


def screenshot_of(index: str | os.PathLike[str], png: str | os.PathLike[str], element_id: str,
                  width: int = FIRST_SCREEN[0], margin: int = 12, max_height: int = 1400,
                  browser: str | None = None) -> Path:
    """Write a PNG of the element ``element_id`` of ``index`` (a folded table opened), laid out
    ``width`` pixels wide, with ``margin`` pixels around it and at most ``max_height`` tall.

    Why not the page at ``#id``: headless Chromium paints nothing when a screenshot starts
    scrolled. The page is shifted instead (``position:relative`` moves the picture without
    changing its layout), in a copy beside it that is removed afterwards."""
    exe = browser or require_chromium()
    page = Path(index).resolve()
    doc = page.read_text(encoding="utf-8").replace(f"<details class='fold' id='{element_id}'>",
                                                   f"<details class='fold' id='{element_id}' open>", 1)
    copy = _page_copy(page, doc)
    try:
        box = probe(copy, f"var e=document.getElementById({json.dumps(element_id)}),r=e&&e.getBoundingClientRect();"
                    + answer_js("r?{top:Math.round(r.top+scrollY),height:Math.ceil(r.height)}:{}"), width, exe)
    finally:
        os.unlink(copy)
    if "top" not in box:
        raise BackendUnavailable(f"screenshot {page}: no element with id {element_id!r}")
    top = max(0, int(box["top"]) - margin)
    shifted = _page_copy(page, doc.replace("</head>", f"<style>body{{position:relative;top:-{top}px}}</style></head>", 1))
    try:
        return screenshot(shifted, png, (width, min(int(box["height"]) + 2 * margin, max_height)), exe)
    finally:
        os.unlink(shifted)


__all__ = ["CHROMIUM_NAMES", "FIRST_SCREEN", "OVERFLOW_JS", "PROBE_ID", "answer_js", "find_chromium", "probe", "rendered_dom",
           "require_chromium", "screenshot", "screenshot_of", "wider_than_viewport"]
