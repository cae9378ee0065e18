"""What a reader of the report runs into, measured in a real browser: a page wider than the
window, a link that goes nowhere, a character drawn as a box, a table too wide for its box.

Why measured and not parsed: whether a table fits, whether a prose cell wraps, how tall the
page is, depend on the browser's layout and fonts; parsing the HTML cannot tell. The audit lays
the page out in headless Chromium (:func:`~.browser.probe`) at a given width, with every folded
table opened (a reader may open any), and reads back what the layout did.

Why fontconfig for the glyphs: on Linux, Chromium draws a character the page's fonts lack with
whatever installed font fontconfig says covers it, and draws a box (tofu) when none does. So a
character the page shows is drawn iff some installed font's character set holds it -- which
``fc-list`` lists. (A browser cannot be asked directly: ``document.fonts.check`` answers true
for a system font whatever it covers.) The characters checked are the ones the page shows:
its rendered text, tooltips and image descriptions.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable

from cryptoffload.errors import BackendUnavailable
from cryptoffload.report.browser import OVERFLOW_JS, answer_js, probe

#: The layout measured once the page has loaded: its height as delivered (folded tables
#: closed), then with every ``<details>`` open: the page's width, every table against its box
#: and the window, every in-page link, the ids, the characters shown, prose cells aligned
#: right, and the colour each badge and verdict class is drawn in.
_AUDIT = """var se=document.scrollingElement,W=innerWidth,cw=document.documentElement.clientWidth;
var folded=se.scrollHeight;document.querySelectorAll('details').forEach(function(d){d.open=true;});
var tables=[];document.querySelectorAll('table').forEach(function(t,i){var r=t.getBoundingClientRect(),
box=t.closest('.scroll'),h=t.closest('[id]');tables.push({at:h?h.id:'#'+i,width:Math.round(r.width),
right:Math.round(r.right),boxed:!!box,scrolls:!!box&&box.scrollWidth>box.clientWidth+1});});
var broken=[],links=0;document.querySelectorAll('a[href^="#"]').forEach(function(a){links++;
var id=decodeURIComponent(a.getAttribute('href').slice(1));if(!id||!document.getElementById(id))broken.push(a.getAttribute('href'));});
var seen={},dup=[];document.querySelectorAll('[id]').forEach(function(e){if(seen[e.id])dup.push(e.id);seen[e.id]=1;});
var text=document.body.innerText;document.querySelectorAll('[title],img[alt]').forEach(function(e){
text+=' '+(e.getAttribute('title')||'')+' '+(e.getAttribute('alt')||'');});
var chars={};for(var c of text){chars[c]=1;}
var prose=0;document.querySelectorAll('td,th').forEach(function(td){var s=getComputedStyle(td).textAlign,t=td.innerText.trim();
if((s=='right'||s=='end')&&/[A-Za-z]{3,}.*\\s.*[A-Za-z]{3,}/.test(t))prose++;});
var colours={};document.querySelectorAll('.badge,.verdict,.claim').forEach(function(e){var cs=getComputedStyle(e);
var col=e.classList.contains('badge')?cs.backgroundColor:(e.classList.contains('claim')?cs.borderLeftColor:cs.color);
e.classList.forEach(function(k){if(k=='badge'||k=='verdict'||k=='claim')return;
(colours[k]=colours[k]||{})[col]=1;});});
var figs=[];document.querySelectorAll('figure').forEach(function(f){figs.push({id:f.id,caption:(f.querySelector('figcaption')||{}).innerText||''});});
"""
_ANSWER = ("{viewport:W,page:se.scrollWidth,height:folded,height_open:se.scrollHeight,wide:bad,tables:tables,"
           "links:links,broken:broken,duplicates:dup,chars:Object.keys(chars).join(''),prose_right:prose,"
           "colours:colours,figures:figs}")


@dataclass
class Audit:
    """The report as laid out at one window width."""

    width: int
    viewport: int
    page_width: int
    height: int
    height_open: int
    wide: list[str]
    tables: list[dict[str, Any]]
    links: int
    broken_links: list[str]
    duplicate_ids: list[str]
    chars: str
    prose_right: int
    colours: dict[str, list[str]]
    figures: list[dict[str, str]]
    missing_glyphs: list[str] = field(default_factory=list)

    @property
    def overflows(self) -> bool:
        """Whether the page scrolls sideways (``scrollWidth > innerWidth``)."""
        return self.page_width > self.viewport

    @property
    def tables_wider_than_window(self) -> list[str]:
        return [t["at"] for t in self.tables if t["width"] > self.viewport]

    @property
    def tables_scrolling(self) -> list[str]:
        """Tables wider than their box (they scroll inside it, the page does not)."""
        return [t["at"] for t in self.tables if t["scrolls"]]

    @property
    def tables_past_the_edge(self) -> list[str]:
        """Tables outside any scrolling box that reach past the window's right edge."""
        return [t["at"] for t in self.tables if not t["boxed"] and t["right"] > self.viewport]


def audit(index: str | os.PathLike[str], width: int, browser: str | None = None) -> Audit:
    """Lay ``index`` out ``width`` pixels wide and measure it; the characters it shows are
    checked against the installed fonts (:func:`missing_glyphs`)."""
    data = probe(index, OVERFLOW_JS + _AUDIT + answer_js(_ANSWER), width, browser)
    colours = {k: sorted(v) for k, v in dict(data["colours"]).items()}
    out = Audit(width, int(data["viewport"]), int(data["page"]), int(data["height"]), int(data["height_open"]),
                list(data["wide"]), list(data["tables"]), int(data["links"]), list(data["broken"]),
                list(data["duplicates"]), str(data["chars"]), int(data["prose_right"]), colours, list(data["figures"]))
    out.missing_glyphs = missing_glyphs(out.chars)
    return out


def _shown(ch: str) -> bool:
    """Whether a character is drawn with a glyph: all but controls, format characters and
    spaces (a private-use or unassigned character is drawn too: as a box, unless a font has it)."""
    cat = unicodedata.category(ch)
    return cat not in ("Cc", "Cf", "Cs") and not cat.startswith("Z")


def _ranges(charset: str) -> Iterable[tuple[int, int]]:
    for part in charset.split():
        lo, _, hi = part.partition("-")
        yield int(lo, 16), int(hi or lo, 16)


@lru_cache(maxsize=1)
def installed_coverage() -> tuple[tuple[int, int], ...]:
    """Every code point range some installed font covers, as fontconfig reports them."""
    exe = shutil.which("fc-list")
    if exe is None:
        raise BackendUnavailable("fc-list not found: install fontconfig (apt-get install fontconfig) to check "
                                 "which characters the installed fonts cover")
    done = subprocess.run([exe, "--format", "%{charset}\\n"], capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        raise BackendUnavailable(f"fc-list exited {done.returncode}: {done.stderr.strip()[-300:]}")
    spans = sorted({r for line in done.stdout.splitlines() for r in _ranges(line)})
    merged: list[tuple[int, int]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return tuple(merged)


def missing_glyphs(text: str, coverage: tuple[tuple[int, int], ...] | None = None) -> list[str]:
    """The characters of ``text`` that no installed font covers (each once, as ``U+4E2D 中``)."""
    spans = installed_coverage() if coverage is None else coverage
    out = []
    for ch in sorted(set(text)):
        cp = ord(ch)
        if _shown(ch) and not any(lo <= cp <= hi for lo, hi in spans):
            out.append(f"U+{cp:04X} {ch}")
    return out


__all__ = ["Audit", "audit", "installed_coverage", "missing_glyphs"]
