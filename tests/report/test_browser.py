"""report/browser.py: finding Chromium, its failures as one clear error, the screenshot written
whole or not at all -- with a stand-in browser, and with the real one where it is installed (CI
installs it: `make apt`) (the report rendered, every card in the browser's DOM, a first-screen PNG)."""

from __future__ import annotations

import os
import stat
import struct
from pathlib import Path

import pytest

from cryptoffload.errors import BackendUnavailable
from cryptoffload.report import browser
from cryptoffload.report.result import StudyResult
from cryptoffload.report.html import write_index

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CHROMIUM = browser.find_chromium()
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine: apt-get install "
                                    "chromium (make apt installs it) to run the real-browser checks")


def _fake(tmp_path: Path, body: str) -> str:
    """A stand-in 'browser': a shell script run with Chromium's arguments."""
    path = tmp_path / "fake-chromium"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


WRITES_PNG = ('for a in "$@"; do case "$a" in --screenshot=*) printf \'\\211PNG\\r\\n\\032\\nrest\' > "${a#--screenshot=}";; '
              '--dump-dom) echo "<html><body>rendered</body></html>";; esac; done\n')


def test_find_chromium_honours_the_environment_and_may_find_none(tmp_path: Path, monkeypatch) -> None:
    exe = _fake(tmp_path, "exit 0\n")
    monkeypatch.setenv("CRYPTOFFLOAD_CHROMIUM", exe)
    assert browser.find_chromium() == exe
    monkeypatch.delenv("CRYPTOFFLOAD_CHROMIUM")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert browser.find_chromium() is None
    with pytest.raises(BackendUnavailable, match="no Chromium found.*apt-get install chromium"):
        browser.require_chromium()


def test_screenshot_is_written_whole_and_readable(tmp_path: Path) -> None:
    page = tmp_path / "index.html"
    page.write_text("<p>x</p>")
    png = browser.screenshot(page, tmp_path / "shot.png", browser=_fake(tmp_path, WRITES_PNG))
    assert png.read_bytes().startswith(PNG_MAGIC) and stat.S_IMODE(os.stat(png).st_mode) == 0o644
    assert browser.rendered_dom(page, browser=_fake(tmp_path, WRITES_PNG)).strip() == "<html><body>rendered</body></html>"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fake-chromium", "index.html", "shot.png"]


@pytest.mark.parametrize("body, match", [
    ("echo 'cannot open display' >&2; exit 3\n", "exited 3: cannot open display"),
    ("exit 0\n", "wrote no PNG"),  # a browser that says it worked but wrote nothing
])
def test_a_failing_browser_is_one_clear_error_and_leaves_nothing(tmp_path: Path, body: str, match: str) -> None:
    page, target = tmp_path / "index.html", tmp_path / "shot.png"
    page.write_text("<p>x</p>")
    target.write_bytes(b"old")
    with pytest.raises(BackendUnavailable, match=match):
        browser.screenshot(page, target, browser=_fake(tmp_path, body))
    assert target.read_bytes() == b"old"  # untouched, and no temporary file left beside it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fake-chromium", "index.html", "shot.png"]


def test_a_hanging_browser_is_stopped(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(browser, "TIMEOUT_S", 0.5)
    page = tmp_path / "index.html"
    page.write_text("<p>x</p>")
    with pytest.raises(BackendUnavailable, match="did not finish"):
        browser.rendered_dom(page, browser=_fake(tmp_path, "exec sleep 30\n"))


@needs_chromium
def test_the_real_browser_renders_the_cards_and_takes_the_first_screen(tmp_path: Path) -> None:
    results = [(StudyResult(name, f"Study {name}", "quick", 1, "0", {}, headline=[f"{name} headline"]), name)
               for name in ("alpha", "beta")]
    index = write_index(results, tmp_path, machine={"cpu": "test", "cores": 2})
    dom = browser.rendered_dom(index)
    assert "data-study=\"alpha\"" in dom and "data-study=\"beta\"" in dom and "beta headline" in dom
    png = browser.screenshot(index, tmp_path / "first.png", size=(800, 600))
    head = png.read_bytes()[:24]
    assert head.startswith(PNG_MAGIC) and struct.unpack(">II", head[16:24]) == (800, 600)


def test_the_overflow_probe_reads_the_browsers_answer_and_leaves_no_probe(tmp_path: Path) -> None:
    page = tmp_path / "index.html"
    page.write_text("<html><body><p>x</p></body></html>")
    answer = f'<pre id="{browser.PROBE_ID}">{{&quot;viewport&quot;: 1400, &quot;page&quot;: 1500, ' \
             '&quot;wide&quot;: [&quot;table 0..1500&quot;]}</pre>'
    fake = _fake(tmp_path, f"echo '<html><body>{answer}</body></html>'\n")
    assert browser.wider_than_viewport(page, browser=fake) == (1400, 1500, ["table 0..1500"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fake-chromium", "index.html"]
    with pytest.raises(BackendUnavailable, match="ran no script"):
        browser.wider_than_viewport(page, browser=_fake(tmp_path, "echo '<html></html>'\n"))
    assert "<script" not in page.read_text()


@needs_chromium
def test_no_element_of_the_report_is_wider_than_the_window(tmp_path: Path) -> None:
    from cryptoffload.report.result import Claim, Table

    res = StudyResult("wide", "A study with a wide table", "quick", 1, "0", {}, headline=["h"])
    cols = ["k"] + [f"platform_{i}_latency_ms" for i in range(16)]
    res.add(Table("wide", "Wide", cols, [[k] + [123456.789 * k + i for i in range(16)] for k in (1, 2, 4)],
                  "simulated", paper=[[1] + [99999.0 + i for i in range(16)]]))
    res.claims = [Claim("1", "2", "simulated", table="wide")]
    index = write_index([(res, "wide"), (res, "wide-trace")], tmp_path, machine={"cpu": "test", "cores": 2})
    viewport, page, wide = browser.wider_than_viewport(index, width=1000)
    assert wide == [] and page <= viewport


@needs_chromium
def test_a_screenshot_of_one_element_shows_that_element(tmp_path: Path) -> None:
    """The docs' pictures of one table or figure: the element's own height (folded tables
    opened), the page's width, and a clear error for an id the page lacks."""
    from cryptoffload.report.result import Table

    res = StudyResult("s", "Study s", "quick", 1, "0", {}, headline=["h"] * 40)  # the table sits far down
    res.add(Table("long", "Long", ["k", "v"], [[i, float(i)] for i in range(30)], "measured"))
    index = write_index([(res, "s")], tmp_path, machine={"cpu": "test", "cores": 2})
    png = browser.screenshot_of(index, tmp_path / "table.png", "s--long", width=900, max_height=2000)
    width, height = struct.unpack(">II", png.read_bytes()[16:24])
    assert width == 900 and 30 * 20 < height < 2000  # 30 rows, opened; not the page above it
    with pytest.raises(BackendUnavailable, match="no element with id 'nowhere'"):
        browser.screenshot_of(index, tmp_path / "x.png", "nowhere")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.html", "table.png"]
