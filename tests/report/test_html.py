"""report/index.html: every study's tables beside the paper's, badges, figure links, notes;
nothing from the results is inserted unescaped."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from cryptoffload import __version__
from cryptoffload.report.html import FOLD_ROWS, table_html, write_index
from cryptoffload.report.result import StudyResult, Table

EVIL = "<script>alert('x')</script>"


def _study(name: str, title: str, **kw) -> StudyResult:
    res = StudyResult(study=name, title=title, mode="quick", seed=3, version="0.1.0",
                      machine={"cpu": "c", "cores": 2}, figures=["p90_vs_rate.png", "load_factor.png"],
                      profiles=["profiles/virtex2_ciphers.toml"], headline=["Predict/Oracle 1.20"],
                      notes=["differs from the paper"], paper="Niwa et al. 2005", elapsed_s=2.0)
    res.add(Table("table6", "Table 6 p90 relative", ["rate", "predict", "oracle_p90_s"],
                  [[10, 1.234, 0.000508], [1000, 2.5, 1.89]], "simulated",
                  paper=[[10, 1.17, 0.000508]], note="a caption"))
    res.add(Table("sw", "Software throughput", ["cipher", "software_mbps"], [["AES-ECB", 28362.5]], "measured"))
    for k, v in kw.items():
        setattr(res, k, v)
    return res


def test_index_holds_each_study_tables_paper_badges_and_images(tmp_path: Path) -> None:
    a = _study("fpga-reconfig", "FPGA reconfiguration study")
    b = _study("other-study", "Another study", figures=["other.png"])
    path = write_index([(a, "fpga-reconfig"), (b, "other/")], tmp_path / "report",
                       machine={"cpu": "Test CPU 9000", "cores": 16})
    assert path == tmp_path / "report" / "index.html"
    doc = path.read_text(encoding="utf-8")
    assert doc.startswith("<!doctype html>") and doc.rstrip().endswith("</html>")
    assert "Test CPU 9000" in doc and "16 cores" in doc and __version__ in doc
    for title in ("FPGA reconfiguration study", "Another study", "Table 6 p90 relative", "Software throughput"):
        assert title in doc
    # ours and the paper's values, formatted
    assert "<td class='num'>1.23</td><td class='paper num'>1.17</td>" in doc
    assert "<td class='num'>28,362</td>" in doc
    assert "<td class='paper num'>—</td>" in doc  # rate 1000 has no paper row
    assert "<td class='key text'>AES-ECB</td>" in doc  # words left-aligned, numbers right-aligned
    # badges
    assert "<span class='badge simulated'>simulated</span>" in doc
    assert "<span class='badge measured'>measured</span>" in doc
    # figures linked under each study's folder
    assert "<img src='fpga-reconfig/p90_vs_rate.png'" in doc
    assert "<img src='fpga-reconfig/load_factor.png'" in doc
    assert "<img src='other/other.png'" in doc
    assert doc.count("<img ") == 3 + 2  # the figures, and one key figure per first-screen card
    assert "<img class='thumb' src='fpga-reconfig/p90_vs_rate.png'" in doc
    # notes, headline, caption, table of contents
    assert "<div class='note'>differs from the paper</div>" in doc
    assert "Predict/Oracle 1.20" in doc and "a caption" in doc
    assert "<a href='#fpga-reconfig'>" in doc and "<h2 id='other-study'>" in doc
    # each figure in its own <figure>, captioned with the machine and date of its result
    assert "<figure id='fpga-reconfig--fig-p90_vs_rate'>" in doc
    assert "c, 2 cores, no GPU · date not recorded" in doc
    # nothing fetched from the network, no script
    assert "http://" not in doc and "https://" not in doc and "<script" not in doc.lower()
    assert [p.name for p in path.parent.iterdir()] == ["index.html"]


def test_index_escapes_html_from_results(tmp_path: Path) -> None:
    res = _study("evil", EVIL, notes=[EVIL], headline=[EVIL], paper=EVIL, profiles=[EVIL],
                 figures=["a'><script>x</script>.png"], seed=EVIL)  # as a hand-edited result.json could hold
    res.add(Table("t", EVIL, ["k", EVIL], [[EVIL, 1.0]], "cited", paper=[[EVIL, 2.0]], note=EVIL))
    path = write_index([(res, "evil")], tmp_path, machine={"cpu": EVIL, "cores": EVIL},
                       failures=[("bad-study", EVIL)])
    doc = path.read_text(encoding="utf-8")
    assert "<script" not in doc.lower()
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in doc
    # every occurrence of the string came back escaped (title, toc, notes, headline, paper,
    # profiles, table title, header, key cell, note, failure, machine, seed)
    assert doc.count("&lt;script&gt;alert") >= 12
    assert "study bad-study failed" in doc


def test_index_without_paper_has_single_header_row(tmp_path: Path) -> None:
    t = Table("t", "Plain", ["cipher", "share"], [["AES", 0.25]], "cited")
    html = table_html(t)
    assert ">ours</th>" not in html and "paper" not in html
    assert "<td class='key text'>AES</td><td class='num'>0.25</td>" in html


def test_table_html_pairs_ours_and_paper_columns() -> None:
    t = Table("t", "T", ["rate", "a", "b"], [[10, 1.0, 2.0]], "simulated", paper=[[10, None, 3.0]])
    html = table_html(t)
    # b beside the paper's b; a, which the paper never fills, alone (no column of dashes)
    assert html.count("<th class='num'>ours</th><th class='num paper'>paper</th>") == 1
    assert "<th class='num' rowspan='2'>a</th><th class='num' colspan='2'>b</th>" in html
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", html)
    assert cells == ["10", "1", "2", "3"]


def test_index_rewrite_leaves_no_temp_file(tmp_path: Path) -> None:
    write_index([(_study("s", "First"), "s")], tmp_path, machine={})
    write_index([(_study("s", "Second"), "s")], tmp_path, machine={})
    doc = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "Second" in doc and "First" not in doc
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.html"]


def test_fitted_tables_and_provenance_cells_carry_their_badges() -> None:
    t = Table("t1", "Table 1", ["devices", "provenance", "naive_ms"], [[1, "fitted", 14.3], [2, "simulated", 8.0]],
              "mixed", paper=[[1, None, 14.297]], reproduces="Table 1")
    html = table_html(t)
    assert "<span class='badge fitted'>fitted</span>" in html
    assert "<span class='badge simulated'>simulated</span>" in html
    f = Table("f", "Fit", ["k", "v"], [["a", 1.0]], "fitted", reproduces="Table 2")
    assert "<span class='badge fitted'>fitted to Table 2</span>" in table_html(f)


def _cards(doc: str) -> dict[str, str]:
    """``{study: the card's text}`` for every first-screen card, parsed (not grepped)."""
    from html.parser import HTMLParser

    class Cards(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.cards: dict[str, str] = {}
            self.depth = 0
            self.current: str | None = None

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "article" and "card" in (a.get("class") or "").split():
                self.current, self.depth = a["data-study"], 1
                self.cards[self.current] = ""
            elif self.current and tag == "article":
                self.depth += 1

        def handle_endtag(self, tag):
            if self.current and tag == "article":
                self.depth -= 1
                if not self.depth:
                    self.current = None

        def handle_data(self, data):
            if self.current:
                self.cards[self.current] += data

    parser = Cards()
    parser.feed(doc)
    return parser.cards


def test_first_screen_cards_claims_badges_and_key_figure(tmp_path: Path) -> None:
    from cryptoffload.papers import PAPERS
    from cryptoffload.report.result import Claim

    a = _study("isc-he-cnn", "HE CNN on computational storage", paper=PAPERS["in-storage-he"].cite(),
               key_figure="load_factor.png")
    a.claims = [Claim.judged(paper="3,850 ms", ours="3,656 ms (-5 %)", provenance="simulated", band=[3600, 3900],
                             paper_value=3850, alternative=11359, most_sensitive="keys"),
                Claim.judged(paper="1,321 ms", ours="1,082 ms (-18 %)", provenance="simulated", band=[1000, 1200],
                             paper_value=1321, alternative=11359, most_sensitive="keys", closes="keys",
                             why="assumed HEAX op rates"),
                Claim("x3.60", "x3.96", "fitted"),
                Claim.judged(paper="12 runs within 20 %", ours="within 20 % of 12 runs", provenance="simulated",
                             band=[0.9, 1.1], paper_value=1.0, alternative=0.0, most_sensitive="seed")]
    trace = _study("isc-he-cnn", "HE CNN, a recorded trace")
    b = _study("ridge", "Ridge regression")  # no claims: headline and table provenances
    doc = write_index([(a, "isc-he-cnn"), (trace, "isc-he-cnn-trace"), (b, "ridge")], tmp_path,
                      machine={}).read_text(encoding="utf-8")
    cards = _cards(doc)
    assert set(cards) == {"isc-he-cnn", "ridge"}  # one card per study; the second run is linked from it
    assert "— 2 papers on offloading" in doc  # counted from the results (the trace run's paper is ridge's)
    isc = cards["isc-he-cnn"]
    assert "T. Suzuki et al." in isc and "Japanese workshop paper" in isc
    assert "title='T. Suzuki and H. Yamana" in doc  # the full citation on hover
    # agreement, then divergence; the paper's other claims and the other run fold under "more"
    assert isc.index("predicted agreement, inside our band") < isc.index("divergence, outside our band") \
        < isc.index("the paper's claim")
    more = doc[doc.index("id='card-isc-he-cnn'"):doc.index("id='card-ridge'")]
    assert more.index("<details class='more'>") < more.index("x3.96") and "1 other run of this study" in more
    # a second agreement folds too: one agreement and one divergence per card, so every card fits
    assert isc.count("predicted agreement, inside our band") == 2 and "2 more claims" in isc
    assert more.index("<details class='more'>") < more.index("within 20 % of 12 runs")
    assert "assumed HEAX op rates" in isc and "HE CNN, a recorded trace" in isc
    # the badge leads our result, so the badges line up down the card
    assert "<span class='who'>ours</span><span><span class='badge simulated'>simulated</span> 3,656 ms" in doc
    assert "<img class='thumb' src='isc-he-cnn/load_factor.png'" in doc
    assert "<span class='badge fitted'>fitted</span>" in doc
    assert "<h2 id='isc-he-cnn-trace'>" in doc and "<h2 id='isc-he-cnn'>" in doc  # distinct anchors
    assert "Predict/Oracle 1.20" in cards["ridge"] and "<span class='badge measured'>measured</span>" in doc
    assert "seed 00" not in doc


class _Page(HTMLParser):
    """The page's structure: every id, every in-page link (and where it sits: the contents,
    a claim), every h2's text, and each ``<table>``'s enclosing elements."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.toc_links: list[str] = []
        self.claim_links: list[str] = []
        self.h2: list[str] = []
        self.table_parents: list[list[tuple[str, str]]] = []
        self.folds: list[tuple[str, bool]] = []
        self._stack: list[tuple[str, str]] = []
        self._in_h2 = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        if "id" in a:
            self.ids.append(a["id"])
        href = a.get("href", "")
        if tag == "a" and href.startswith("#"):
            if any(t == "nav" and c == "toc" for t, c in self._stack):
                self.toc_links.append(href[1:])
            if "src" in (a.get("class") or "").split():
                self.claim_links.append(href[1:])
        if tag == "table":
            self.table_parents.append(list(self._stack))
        if tag == "details" and a.get("class") == "fold":
            self.folds.append((a.get("id", ""), "open" in a))
        if tag == "h2" and not any("card" in c.split() for _, c in self._stack):
            self._in_h2 = True
            self.h2.append("")
        if tag not in ("img", "meta", "br", "wbr"):
            self._stack.append((tag, a.get("class") or ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2":
            self._in_h2 = False
        while self._stack:
            if self._stack.pop()[0] == tag:
                break

    def handle_data(self, data: str) -> None:
        if self._in_h2 and self._stack and self._stack[-1] != ("a", "self") and "h2" in (t for t, _ in self._stack):
            self.h2[-1] += data


def _navigable_report(tmp_path: Path) -> str:
    """Two runs of one study (one on a trace), a study with a wide ours-beside-the-paper table,
    a long table a claim quotes and a long one none quotes."""
    from cryptoffload.report.result import Claim

    wide_cols = ["k"] + [f"platform_{i}_latency_ms" for i in range(14)]
    wide = Table("wide", "A wide table", wide_cols, [[k] + [1000.0 * k + i for i in range(14)] for k in (1, 2)],
                 "simulated", paper=[[1] + [999.0 + i for i in range(14)]])
    long_rows = [[i, float(i)] for i in range(FOLD_ROWS + 1)]
    a = _study("isc-he-cnn", "HE CNN on computational storage")
    a.add(wide)
    a.add(Table("quoted_long", "Long and quoted", ["i", "v"], long_rows, "simulated"))
    a.add(Table("long", "Long, not quoted", ["i", "v"], long_rows, "simulated"))
    a.claims = [Claim("1,000 ms", "1,001 ms", "simulated", table="wide", kind="agreement", band=[990.0, 1010.0],
                      paper_value=1000.0, alternative=0.0),
                Claim("12", "13", "simulated", table="quoted_long", kind="divergence", why="w", band=[13.0, 14.0],
                      paper_value=12.0, alternative=0.0),
                Claim("x", "y", "simulated", table="sw")]
    trace = _study("isc-he-cnn", "HE CNN on computational storage")
    b = _study("ridge", "Ridge regression")
    return write_index([(a, "isc-he-cnn"), (trace, "isc-he-cnn-trace"), (b, "ridge")], tmp_path,
                       machine={}).read_text(encoding="utf-8")


def test_contents_link_every_section_table_and_figure_once_and_ids_and_headings_are_unique(tmp_path: Path) -> None:
    doc = _navigable_report(tmp_path)
    page = _Page()
    page.feed(doc)
    tables = {"isc-he-cnn": ["table6", "sw", "wide", "quoted_long", "long"], "isc-he-cnn-trace": ["table6", "sw"],
              "ridge": ["table6", "sw"]}
    expected = [x for sec, keys in tables.items() for x in
                [sec] + [f"{sec}--{k}" for k in keys] + [f"{sec}--fig-p90_vs_rate", f"{sec}--fig-load_factor"]]
    assert page.toc_links == ["contents"] + expected  # each once, in the page's order (and its own #)
    assert set(page.toc_links) <= set(page.ids)
    assert len(page.ids) == len(set(page.ids))
    assert [h.strip() for h in page.h2] == ["Contents: every table and figure", "HE CNN on computational storage",
                       "HE CNN on computational storage \u2014 run isc-he-cnn-trace", "Ridge regression"]
    assert doc.index("id='scoreboard'") < doc.index("<section class='cards' id='studies'>") \
        < doc.index("<nav class='toc' id='contents'") < doc.index("<h2 id='isc-he-cnn'>")
    # every section, table and figure links to itself, and figures are numbered through the page
    for ident in expected:
        assert f"<a class='self' href='#{ident}'" in doc, ident
    assert "Figure 5. p90 vs rate" in doc and "Figure 1. p90 vs rate" in doc and "Figure 6. load factor" in doc


def test_each_claim_links_to_the_table_it_quotes(tmp_path: Path) -> None:
    doc = _navigable_report(tmp_path)
    page = _Page()
    page.feed(doc)
    assert page.claim_links == ["isc-he-cnn--wide", "isc-he-cnn--quoted_long", "isc-he-cnn--sw"]
    assert set(page.claim_links) <= set(page.ids)


def test_every_table_scrolls_sideways_and_long_ones_fold(tmp_path: Path) -> None:
    doc = _navigable_report(tmp_path)
    page = _Page()
    page.feed(doc)
    # 3 studies' two tables each, and the three added to the first
    assert len(page.table_parents) == 3 * 2 + 3
    assert all(parents[-1] == ("div", "scroll") for parents in page.table_parents)
    assert ".scroll{overflow-x:auto;max-width:100%}" in doc
    # a long table folds under its heading; a claim's table stays open so its link lands on it
    assert page.folds == [("isc-he-cnn--quoted_long", True), ("isc-he-cnn--long", False)]
    assert f"<span class='rows'>{FOLD_ROWS + 1} rows</span>" in doc


def test_a_chinese_venue_is_also_given_in_latin_script(tmp_path: Path) -> None:
    from cryptoffload.papers import PAPERS

    res = _study("paillier-offload", "Paillier offload", paper=PAPERS["qat-paillier"].cite())
    doc = write_index([(res, "p")], tmp_path, machine={}).read_text(encoding="utf-8")
    beside = ("Journal of Chinese Computer Systems (Xiaoxing Weixing Jisuanji Xitong, "
              "<span lang='zh-Hans'>小型微型计算机系统</span>), 2021, no. 3")
    assert doc.count(beside) == 2  # on the card and in the section's paper line


def test_a_banded_claim_shows_its_band_and_what_would_close_it() -> None:
    from cryptoffload.report.html import _claim_html
    from cryptoffload.report.result import Claim

    c = Claim.judged(paper="Table 2 at 16 GB/s: 1.20 s", ours="1.00 s", provenance="simulated",
                     band=(0.90, 1.10), paper_value=1.20, alternative=0.0, most_sensitive="keyswitch_s",
                     closes="hidden")
    html = _claim_html(c)
    assert c.kind == "divergence"
    assert "<span class='who'>band</span><span>band 0.9 .. 1.1, most sensitive to keyswitch_s</span>" in html
    assert "hidden moves ours furthest towards it" in html          # the divergence's reason
    plain = Claim(paper="p", ours="o", provenance="measured")
    assert "who'>band<" not in _claim_html(plain)


def test_each_card_and_the_top_show_the_scoreboard(tmp_path: Path) -> None:
    """Issue 35: the rows with a paper value and each verdict's count, on the card (linking to
    the verdicts table) and summed at the top of the report."""
    from cryptoffload.report.result import Table
    from cryptoffload.report.verdicts import verdict_for

    a = _study("isc-he-cnn", "HE CNN on computational storage")
    t = a.add(Table("t2", "Table 2", ["bw", "ms"], [["1", 3656.0], ["2", 1848.0], ["4", 1082.0]], "simulated",
                    paper=[["1", 3850.0], ["2", 1951.0], ["4", 1321.0]]))
    for key, band in (("1", [3600.0, 3700.0]), ("2", [1800.0, 2000.0]), ("4", [900.0, 2000.0])):
        a.verdicts.append(verdict_for(t, [key], "ms", figure=f"Table 2 at {key}", paper_source="cited: Table 2",
                                      alternative=11359.0, alternative_what="no offload", band=band))
    a.add(Table("verdicts", "Verdicts", ["figure"], [[v.figure] for v in a.verdicts], "mixed"))
    b = _study("ridge", "Ridge regression")
    doc = write_index([(a, "isc-he-cnn"), (b, "ridge")], tmp_path, machine={}).read_text(encoding="utf-8")
    card = _cards(doc)["isc-he-cnn"]
    assert "3 rows with a paper value" in card and "1 agreement" in card and "1 divergence" in card \
        and "1 inconclusive" in card
    assert "href='#isc-he-cnn--verdicts'" in doc
    top = doc[:doc.index("<section class='cards'")]
    assert "3 rows with a paper value" in top and "one rule" in top
