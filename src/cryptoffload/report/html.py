"""`report/index.html`: a first screen of one card per study, then every study's tables beside
the paper's, its plots and its notes.

Why cards first: a reader should take in within ten seconds what each paper claimed, what we
found, and whether our number was measured, predicted (simulated), fitted or cited; the tables
are the evidence behind each card. A card shows the study's claims (``StudyResult.claims``:
the paper's words, ours, a provenance badge, and for the largest divergence its reason) and the
study's key figure; a study without claims falls back to its headline and the provenances of its
tables.

Above the cards, the scoreboard over every study and what each colour means (:mod:`.palette`);
after them, the contents (:mod:`.contents`) lead to every study run (a study run twice, e.g. on
a recorded trace, gets its own heading and id) and to each of its tables and figures; a card's
claim links to the table it quotes. Every table (:mod:`.grid`) sits in a box that scrolls
sideways, so a wide ours-beside-the-paper table never pushes the page wider than the window,
and a long table folds under a summary line so the evidence does not become a wall; every
figure (:mod:`.figures`) is captioned with the machine and date of its run.

Plain HTML with inline CSS, no JavaScript and nothing fetched from the network, so the report
opens anywhere (CI artefacts, an air-gapped lab)."""

from __future__ import annotations

import html
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

from cryptoffload import __version__
from cryptoffload.io import atomic_write
from cryptoffload.papers import PAPERS, Paper
from cryptoffload.report import palette
from cryptoffload.report.contents import CONTENTS_ID, Section, contents_html
from cryptoffload.report.figures import figure_html, figure_id, read_figure, run_line
# FOLD_ROWS and table_html are named here too: the page's tables are this module's to callers
from cryptoffload.report.grid import FOLD_ROWS, badge, self_link, table_html, table_id
from cryptoffload.report.result import Claim, StudyResult
from cryptoffload.report.verdicts import VERDICTS_ID, Scoreboard

#: ids of the page's own parts (a study section's id is its name, so these are not study names)
SCOREBOARD_ID, CARDS_ID = "scoreboard", "studies"
#: claims a card shows before the rest fold under "more"
CARD_CLAIMS = 2

#: Fonts: the system's sans-serif first, then fonts Debian ships (fonts-dejavu-core, and for the
#: Chinese venue names fonts-noto-cjk, which the Makefile installs); a machine without a CJK font
#: still reads each CJK name in Latin script beside it (:func:`venue_html`).
FONT_STACK = 'system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","DejaVu Sans","Liberation Sans",sans-serif'
CJK_FONTS = '"Noto Sans CJK SC","Noto Sans SC","Source Han Sans SC","WenQuanYi Micro Hei",sans-serif'

CSS = f"""
body{{font-family:{FONT_STACK};margin:1.2rem auto;max-width:1360px;color:#222;line-height:1.45;padding:0 1rem}}
:lang(zh-Hans){{font-family:{CJK_FONTS}}}
h1{{margin-bottom:.2rem}} h2{{border-bottom:2px solid #ddd;padding-bottom:.2rem;margin-top:2.5rem}}
a.self{{color:#8c959f;text-decoration:none;font-weight:400;font-size:.85em;margin-left:.3rem;visibility:hidden}}
:hover>a.self,:target>a.self,:hover>summary>a.self,a.self:focus{{visibility:visible}}
:target{{scroll-margin-top:.5rem}} :target>h3,:target>summary,figure:target figcaption,h2:target{{background:#fff8c5}}
table{{border-collapse:collapse;margin:1rem 0;font-size:.85rem}}
th,td{{border:1px solid #ccc;padding:.25rem .5rem;vertical-align:top}} th{{background:#f3f3f3;font-weight:600}}
.num{{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}}
.text{{text-align:left;min-width:4.5rem;max-width:36rem;overflow-wrap:anywhere}}
th.num,th.text{{white-space:normal;min-width:0}} td.prov{{text-align:left;min-width:6rem;max-width:22rem}}
td.prov .badge{{white-space:normal;margin:0}}
td.paper{{color:#555;background:#fafafa}}
.badge{{display:inline-block;font-size:.75rem;padding:.05rem .4rem;border-radius:.3rem;color:#fff;margin-left:.4rem;
white-space:nowrap;font-weight:600}}
{palette.css()}
.note{{background:#fff8c5;border-left:4px solid #bf8700;padding:.3rem .6rem;margin:.3rem 0}}
.headline li{{margin:.2rem 0}} img{{max-width:100%;height:auto;border:1px solid #eee;margin:.5rem 0}}
.meta{{color:#666;font-size:.85rem;margin:.2rem 0}} .caption{{color:#555;font-size:.85rem}}
.legend{{font-size:.8rem;color:#444;margin:.2rem 0 .6rem}}
.legend .badge{{margin:0 .15rem 0 .5rem}}
h1.top{{font-size:1.35rem;margin:.1rem 0}} nav.jump{{font-size:.85rem;margin:.2rem 0}}
.cards{{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(600px,100%),1fr));gap:.7rem;margin:.5rem 0 2rem}}
.card{{border:1px solid #d0d7de;border-radius:.6rem;padding:.5rem .8rem .55rem;background:#fff;box-shadow:0 1px 2px #0001;
min-width:0}}
.card h2{{font-size:1rem;line-height:1.3;margin:0;border:0;padding:0;
display:-webkit-box;-webkit-line-clamp:2;-webkit-box-orient:vertical;overflow:hidden}}
.card h2 a{{color:#0b3d91;text-decoration:none}}
.card .paper{{font-size:.74rem;color:#57606a;margin:.1rem 0 .25rem;line-height:1.3;
display:-webkit-box;-webkit-line-clamp:2;-webkit-box-orient:vertical;overflow:hidden}}
.card .body{{display:flex;gap:.7rem;align-items:flex-start}}
.card .claims{{flex:1;min-width:0}}
.card .thumb{{width:260px;max-height:220px;object-fit:contain;flex:none;border:1px solid #eee;margin:.2rem 0 0}}
.claim{{border-left:4px solid #d0d7de;padding:.05rem .5rem;margin:.3rem 0;font-size:.82rem;line-height:1.35;
overflow-wrap:break-word}}
.score{{font-size:.78rem;margin:.15rem 0 .3rem;color:#24292f}} .score b{{font-weight:600}}
.claim .kind{{font-size:.66rem;text-transform:uppercase;letter-spacing:.04em;color:#57606a;font-weight:600}}
.claim .line{{display:flex;gap:.4rem;align-items:baseline}} .claim .line>span:last-child{{min-width:0}}
.claim .who{{flex:none;width:2.6rem;color:#57606a}}
.claim .badge{{margin:0;font-size:.68rem}}
.claim .why{{font-size:.74rem;color:#57606a;margin-left:3rem;
display:-webkit-box;-webkit-line-clamp:2;-webkit-box-orient:vertical;overflow:hidden}}
.claim.divergence .why{{-webkit-line-clamp:3}}
.more{{font-size:.78rem;margin:.25rem 0 0}} .more summary{{color:#0b3d91;cursor:pointer}}
.claim .src{{font-size:.66rem;margin-left:.4rem}}
.scroll{{overflow-x:auto;max-width:100%}} .scroll table{{margin:.3rem 0}}
details.fold{{margin:.6rem 0}} details.fold>summary{{cursor:pointer;font-weight:600}}
details.fold>summary .rows{{font-weight:400;color:#57606a;font-size:.85rem}}
nav.toc{{border:1px solid #d0d7de;border-radius:.6rem;padding:.4rem 1rem;margin:1rem 0 2rem;background:#f6f8fa}}
nav.toc h2{{margin:.2rem 0;border:0;font-size:1.05rem}}
nav.toc ol.studies{{margin:.2rem 0;padding-left:1.2rem;columns:2 520px;column-gap:2rem}}
nav.toc li.study{{break-inside:avoid;margin:.3rem 0 .6rem}}
nav.toc ol.tables,nav.toc ol.figures{{font-size:.8rem;margin:.1rem 0;padding-left:1.1rem;list-style:disc}}
nav.toc ol.figures{{list-style:circle}} nav.toc .badge{{font-size:.62rem;padding:0 .3rem}} nav.toc .meta{{font-size:.78rem}}
h3{{font-size:1rem;margin:1.2rem 0 .2rem}}
.figs{{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(560px,100%),1fr));gap:.5rem 1rem;align-items:start}}
figure{{margin:.5rem 0;min-width:0}} figcaption{{font-size:.82rem;color:#333}} figcaption .meta{{font-size:.78rem}}
code{{overflow-wrap:anywhere}}
"""

def _e(v: object) -> str:
    return html.escape(str(v))


def paper_of(result: StudyResult) -> Paper | None:
    """The paper a result reproduces, found by its citation (``result.paper`` starts with it)."""
    for p in PAPERS.values():
        if result.paper.startswith(p.cite()):
            return p
    return None


def _claim_html(c: Claim, anchor: str = "", tables: Sequence[str] = ()) -> str:
    """One claim: what it is, the paper's words, then ours led by its provenance badge (the
    badges line up, so a reader sees at a glance which results are measured, predicted or
    fitted), and the reason for a divergence (two lines; the whole on hover). A claim that
    quotes one of the study's tables links to it: the card is the summary, the table the
    evidence. A banded claim shows its band and the input that moves it most; a divergence's
    reason names the input that would close it."""
    why = f"<div class='why' title='{_e(c.why)}'>{_e(c.why)}</div>" if c.why else ""
    band = (f"<div class='line'><span class='who'>band</span><span>{_e(c.band_text())}</span></div>"
            if c.band is not None else "")
    src = (f"<a class='src' href='#{_e(table_id(anchor, c.table))}'>table →</a>"
           if anchor and c.table and c.table in tables else "")
    return (f"<div class='claim {_e(c.kind.split()[0])}'><div class='kind'>{_e(c.label())}{src}</div>"
            f"<div class='line'><span class='who'>paper</span><span>{_e(c.paper)}</span></div>"
            f"<div class='line'><span class='who'>ours</span><span>{badge(c.provenance)} {_e(c.ours)}</span></div>"
            f"{band}{why}</div>")


def _fallback_html(result: StudyResult) -> str:
    """A study without claims: its first headline lines, badged with its tables' provenances."""
    kinds = sorted({word for t in result.tables.values() for word in
                    ([t.provenance] if t.provenance != "mixed" else
                     {t.row_provenance(i) for i in range(len(t.rows))} | set((t.column_provenance or {}).values()))
                    if word in ("measured", "simulated", "fitted", "cited", "stored")})
    lines = result.headline[:2] or ["(no headline)"]
    badges = "".join(badge(k) for k in kinds)
    return "".join(f"<div class='claim'><div class='line'><span class='who'>ours</span><span>{_e(h)}</span></div></div>"
                   for h in lines) + f"<div class='claim'><div class='line'><span class='who'>tables</span><span>{badges}</span></div></div>"


def _also_html(other: StudyResult, anchor: str) -> str:
    """Another run of the same study (e.g. on a recorded trace): a link, and its first headline line."""
    head = other.headline[0] if other.headline else ""
    why = f"<div class='why' title='{_e(head)}'>{_e(head)}</div>" if head else ""
    return (f"<div class='claim'><div class='kind'>another run</div><div class='line'><span class='who'>also</span>"
            f"<a href='#{_e(anchor)}'>{_e(other.title)} ({_e(anchor)})</a></div>{why}</div>")


def scoreboard_html(board: Scoreboard, anchor: str = "") -> str:
    """The scoreboard line (issue 35): rows with a paper value and each verdict's count, the
    verdicts coloured as the claims are; it links to the study's verdicts table."""
    if not board.rows:
        return ""
    parts = [f"<span class='{_e(k.split()[0])}'>{_e(text)}</span>" for k, text in board.parts()]
    link = f" <a href='#{_e(table_id(anchor, VERDICTS_ID))}'>verdicts →</a>" if anchor else ""
    return (f"<div class='score'><b>{board.rows} row{'s' if board.rows != 1 else ''} with a paper value</b>: "
            + ", ".join(parts) + f"{link}</div>")


def card_html(result: StudyResult, anchor: str, fig_prefix: str, also: Sequence[tuple[StudyResult, str]] = ()) -> str:
    """One first-screen card: title (linking to the details), the paper by authors, title and
    venue, the study's scoreboard (every row with a paper value and its verdict), the claims
    that matter most to a user (each with our provenance badge), and the key figure. The
    paper's other claims and other runs of the study fold under "more", so every card fits a
    few lines and the first screen shows them all."""
    p = paper_of(result)
    paper = (f"{_e(p.short())}, \u201c{_e(p.title)}\u201d, {venue_html(p.venue)}" if p
             else venue_html(result.paper))
    full = p.cite() if p else result.paper
    # the study's first claims (it lists what matters most to a user first) stay on the card;
    # the rest fold under "more"
    main, more = result.claims[:CARD_CLAIMS], result.claims[CARD_CLAIMS:]
    tables = list(result.tables)
    body = scoreboard_html(result.scoreboard, anchor if VERDICTS_ID in result.tables else "")
    body += "".join(_claim_html(c, anchor, tables) for c in main) if main else _fallback_html(result)
    folded = "".join(_claim_html(c, anchor, tables) for c in more) + "".join(_also_html(r, a) for r, a in also)
    if folded:
        what = [f"{len(more)} more claims" if len(more) > 1 else "1 more claim"] if more else []
        what += [f"{len(also)} other run{'s' if len(also) > 1 else ''} of this study"] if also else []
        body += f"<details class='more'><summary>{_e(', '.join(what))}</summary>{folded}</details>"
    fig = result.key_figure or (result.figures[0] if result.figures else "")
    img = (f"<a href='#{_e(anchor)}'><img class='thumb' src='{_e(fig_prefix + fig)}' alt='{_e(fig)}'></a>"
           if fig else "")
    return (f"<article class='card' id='card-{_e(result.study)}' data-study='{_e(result.study)}'>"
            f"<h2 title='{_e(result.title)}'><a href='#{_e(anchor)}'>{_e(result.title)}</a></h2>"
            f"<p class='paper' title='{_e(full)}'>{paper}</p>"
            f"<div class='body'><div class='claims'>{body}</div>{img}</div></article>")


def venue_html(text: str) -> str:
    """``text`` escaped, with each CJK venue name given in Latin script beside the original
    (marked ``lang`` so a browser picks a CJK font where one is installed)."""
    out = _e(text)
    for p in PAPERS.values():
        if p.venue_original and p.venue_latin:
            out = out.replace(_e(p.venue_original), f"{_e(p.venue_latin)}, <span lang='zh-Hans'>"
                                                    f"{_e(p.venue_original)}</span>")
    return out


def section_title(result: StudyResult, anchor: str) -> str:
    """The study's title; another run of a study already shown (a recorded trace) adds its
    folder, so no two sections share a heading."""
    return result.title if anchor == result.study else f"{result.title} \u2014 run {anchor}"


def study_html(section: Section) -> str:
    """A study run's section: its heading, what it ran, its headline, its tables, its figures
    side by side (captioned with machine and date), and its notes."""
    r, anchor = section.result, section.anchor
    parts = [f"<section class='study'><h2 id='{_e(anchor)}'>{_e(section.title)}{self_link(anchor, 'study')}</h2>"]
    parts.append(f"<p class='meta'>study <code>{_e(r.study)}</code> · {_e(r.mode)} mode · seed "
                 f"{_e(r.seed)} · {r.elapsed_s:.1f} s · ran on {_e(run_line(r.machine, r.date))} · profiles: "
                 f"{_e(', '.join(r.profiles))}</p>")
    if r.paper:
        parts.append(f"<p class='meta'>paper: {venue_html(r.paper)}</p>")
    if r.headline:
        parts.append("<ul class='headline'>" + "".join(f"<li>{_e(h)}</li>" for h in r.headline) + "</ul>")
    quoted = {c.table for c in r.claims}
    for key, t in r.tables.items():
        parts.append(table_html(t, table_id(anchor, key), key in quoted))
    if section.figures:
        parts.append("<div class='figs'>" + "".join(
            figure_html(f, section.prefix + f.file, figure_id(anchor, f.file), section.first_figure + i, r.study,
                        r.mode, r.machine, r.date) for i, f in enumerate(section.figures)) + "</div>")
    for n in r.notes:
        parts.append(f"<div class='note'>{_e(n)}</div>")
    return "\n".join(parts) + "</section>"


def _anchors(results: Sequence[tuple[StudyResult, str]]) -> list[str]:
    """One unique anchor per result: the study's name, or its folder when a study ran twice."""
    seen: set[str] = set()
    out: list[str] = []
    for r, rel in results:
        a = r.study if r.study not in seen else (rel.strip("/") or f"{r.study}-{len(out)}")
        seen.add(a)
        out.append(a)
    return out


def sections_of(results: Sequence[tuple[StudyResult, str]], out: Path) -> list[Section]:
    """Each result as the page shows it: unique id, heading, figure folder, figures read from
    ``out`` (their titles and sizes) and numbered through the page."""
    sections: list[Section] = []
    number = 1
    for (r, rel), anchor in zip(results, _anchors(results)):
        prefix = rel.rstrip("/") + "/" if rel else ""
        figures = [read_figure(out / (prefix + f), f) for f in r.figures]
        sections.append(Section(r, anchor, section_title(r, anchor), prefix, figures, number))
        number += len(figures)
    return sections


def _header_html(sections: Sequence[Section], machine: dict) -> str:
    """The title, when and where the page was assembled, and where to jump."""
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    papers = {(p.cite() if (p := paper_of(s.result)) else s.result.paper) for s in sections}
    count = f"{len(papers)} paper{'s' if len(papers) != 1 else ''}"
    return (f"<h1 class='top'>cryptoffload — {count} on offloading cryptographic work: what each claimed, "
            "what we found</h1>"
            f"<p class='meta'>version {__version__} · assembled {now} on {_e(machine.get('cpu', '?'))}, "
            f"{_e(machine.get('cores', '?'))} cores (each study and figure names the machine and date of its own "
            "run)</p>"
            f"<nav class='jump'>Jump to: <a href='#{SCOREBOARD_ID}'>scoreboard</a> · <a href='#{CARDS_ID}'>one card per "
            f"study</a> · <a href='#{CONTENTS_ID}'>contents: every table and figure</a></nav>")


def _legend_html() -> str:
    """What each colour means: one colour per provenance, and the verdicts' own colours."""
    return ("<p class='legend'>A colour means where a number comes from, in every badge, table and plot: "
            "<span class='badge measured'>measured</span> on this machine in this run, "
            "<span class='badge simulated'>simulated</span> predicted by our models from inputs not fitted to the "
            "paper's table, "
            "<span class='badge fitted'>fitted</span> to the very table they stand beside (a fit, not a prediction), "
            "<span class='badge stored'>stored</span> from an earlier run of ours on the machine and date shown, "
            "<span class='badge cited'>cited</span> from a paper (in plots: the dashed lines and crosses), and in grey "
            "outline what is none of these: <span class='badge derived'>derived</span> by arithmetic on other numbers "
            "(or assumed, an input, a mixed table). In plots, a series is told apart by its marker and line style; "
            "a grey series says no provenance. A card's title leads to the study's tables; every heading's "
            "<b>#</b> is a link to it.</p>")


def _total_html(sections: Sequence[Section]) -> str:
    """The scoreboard over every study, at the top: how each row beside a paper value was judged."""
    total = Scoreboard()
    for s in sections:
        total = total.add(s.result.scoreboard)
    quick = any(s.result.mode == "quick" for s in sections)
    return (f"<section class='total' id='{SCOREBOARD_ID}'>{scoreboard_html(total)}<p class='legend'>Every row of "
            "ours beside a paper value is judged by one rule (docs/result-contract.md): a "
            "<b class='verdict divergence'>divergence</b> when the paper's value lies outside our band, an "
            "<b class='verdict agreement'>agreement</b> inside a band narrower than the effect it judges, "
            "<b class='verdict inconclusive'>inconclusive</b> inside a wider one; <b class='verdict fitted'>fitted</b>"
            " rows are not judged"
            + (", and a quick run leaves <b class='verdict not'>not judged</b> what its smaller sample could judge "
               "otherwise than the full run (<code>cryptoffload report --full</code>)" if quick else "")
            + ".</p></section>")


def write_index(results: Sequence[tuple[StudyResult, str]], out_dir: str | os.PathLike[str],
                machine: dict, failures: Sequence[tuple[str, str]] = ()) -> Path:
    """Write ``out_dir/index.html``; ``results`` pairs each result with its folder relative to
    ``out_dir`` (for the figure links). Written to a temp file then renamed."""
    out = Path(out_dir)
    sections = sections_of(results, out)
    first: dict[str, Section] = {}
    for s in sections:
        first.setdefault(s.result.study, s)
    cards = []
    for study, s in first.items():
        also = [(o.result, o.anchor) for o in sections if o.result.study == study and o is not s]
        cards.append(card_html(s.result, s.anchor, s.prefix, also))
    body = [_header_html(sections, machine), _total_html(sections), _legend_html(),
            f"<section class='cards' id='{CARDS_ID}'>{''.join(cards)}</section>", contents_html(sections)]
    for name, err in failures:
        body.append(f"<div class='note'>study {_e(name)} failed: {_e(err)}</div>")
    body += [study_html(s) for s in sections]
    doc = (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>cryptoffload report</title>"
           f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
           f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>")
    out.mkdir(parents=True, exist_ok=True)
    return atomic_write(out / "index.html", doc)


__all__ = ["CARDS_ID", "CSS", "FOLD_ROWS", "SCOREBOARD_ID", "card_html", "scoreboard_html", "sections_of", "study_html",
           "table_html", "venue_html", "write_index"]
