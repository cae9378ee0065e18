"""`report/index.html`: a first screen of one card per study, then every study's tables beside
the paper's, its plots and its notes.

Why cards first: a reader should take in within ten seconds what each paper claimed, what we
found, and whether our number was measured, predicted (simulated), fitted or cited; the tables
are the evidence behind each card. A card shows the study's claims (``StudyResult.claims``:
the paper's words, ours, a provenance badge, and for the largest divergence its reason) and the
study's key figure; a study without claims falls back to its headline and the provenances of its
tables.

After the cards, a table of contents leads to one section per study run (a study run twice, e.g.
on a recorded trace, gets its own heading and id); a card's claim links to the table it quotes.
Every table sits in a box that scrolls sideways, so a wide ours-beside-the-paper table never
pushes the page wider than the window, and a long table folds under a summary line so the
evidence does not become a wall.

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
from cryptoffload.report.result import (
    PROVENANCE_COLUMN,
    PROVENANCES,
    VALUE_PROVENANCES,
    Claim,
    StudyResult,
    Table,
    provenance_word,
)
from cryptoffload.report.tables import fmt, provenance_label
from cryptoffload.report.verdicts import VERDICTS_ID, Scoreboard

BADGE_CLASSES = frozenset(PROVENANCES + VALUE_PROVENANCES)
#: a table with more rows than this folds under its summary line (``<details>``), unless a
#: claim quotes it (a claim's link must land on an open table)
FOLD_ROWS = 8
#: claims a card shows before the rest fold under "more"
CARD_CLAIMS = 2

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:1.2rem auto;max-width:1360px;
color:#222;line-height:1.45;padding:0 1rem}
h1{margin-bottom:.2rem} h2{border-bottom:2px solid #ddd;padding-bottom:.2rem;margin-top:2.5rem}
table{border-collapse:collapse;margin:1rem 0;font-size:.85rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:right} th{background:#f3f3f3}
td.key,th.key{text-align:left} td.paper{color:#666;background:#fafafa}
.badge{display:inline-block;font-size:.75rem;padding:.05rem .4rem;border-radius:.3rem;color:#fff;margin-left:.4rem;
white-space:nowrap;font-weight:600}
.simulated{background:#1f6feb}.measured{background:#1a7f37}.fitted{background:#cf222e}.cited{background:#8250df}.stored{background:#9a6700}.mixed{background:#6e7781}.derived{background:#57606a}.input{background:#57606a}
.note{background:#fff8c5;border-left:4px solid #bf8700;padding:.3rem .6rem;margin:.3rem 0}
.headline li{margin:.2rem 0} img{max-width:100%;border:1px solid #eee;margin:.5rem 0}
.meta{color:#666;font-size:.85rem;margin:.2rem 0} .caption{color:#555;font-size:.85rem}
.legend{font-size:.8rem;color:#444;margin:.2rem 0 .6rem}
.legend .badge{margin:0 .15rem 0 .5rem}
h1.top{font-size:1.35rem;margin:.1rem 0}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(600px,1fr));gap:.7rem;margin:.5rem 0 2rem}
.card{border:1px solid #d0d7de;border-radius:.6rem;padding:.5rem .8rem .55rem;background:#fff;box-shadow:0 1px 2px #0001}
.card h2{font-size:1rem;line-height:1.3;margin:0;border:0;padding:0;
display:-webkit-box;-webkit-line-clamp:2;-webkit-box-orient:vertical;overflow:hidden}
.card h2 a{color:#0b3d91;text-decoration:none}
.card .paper{font-size:.74rem;color:#57606a;margin:.1rem 0 .25rem;line-height:1.3;
display:-webkit-box;-webkit-line-clamp:2;-webkit-box-orient:vertical;overflow:hidden}
.card .body{display:flex;gap:.7rem;align-items:flex-start}
.card .claims{flex:1;min-width:0}
.card .thumb{width:200px;max-height:170px;object-fit:contain;flex:none;border:1px solid #eee;margin:.2rem 0 0}
.claim{border-left:4px solid #d0d7de;padding:.05rem .5rem;margin:.3rem 0;font-size:.82rem;line-height:1.35}
.claim.agreement{border-color:#1a7f37}.claim.divergence{border-color:#cf222e}.claim.inconclusive{border-color:#bf8700}
.score{font-size:.78rem;margin:.15rem 0 .3rem;color:#24292f} .score b{font-weight:600}
.score .agreement{color:#1a7f37}.score .divergence{color:#cf222e}.score .inconclusive{color:#9a6700}
.claim .kind{font-size:.66rem;text-transform:uppercase;letter-spacing:.04em;color:#57606a;font-weight:600}
.claim .line{display:flex;gap:.4rem;align-items:baseline}
.claim .who{flex:none;width:2.6rem;color:#57606a}
.claim .badge{margin:0;font-size:.68rem}
.claim .why{font-size:.74rem;color:#57606a;margin-left:3rem;
display:-webkit-box;-webkit-line-clamp:2;-webkit-box-orient:vertical;overflow:hidden}
.claim.divergence .why{-webkit-line-clamp:3}
.more{font-size:.78rem;margin:.25rem 0 0} .more summary{color:#0b3d91;cursor:pointer}
.cards{grid-template-columns:repeat(auto-fill,minmax(min(600px,100%),1fr))}
.card .thumb{width:260px;max-height:220px}
.claim .src{font-size:.66rem;margin-left:.4rem}
.scroll{overflow-x:auto;max-width:100%} .scroll table{margin:.3rem 0}
details.fold{margin:.6rem 0} details.fold>summary{cursor:pointer;font-weight:600}
details.fold>summary .rows{font-weight:400;color:#57606a;font-size:.85rem}
nav.toc{border:1px solid #d0d7de;border-radius:.6rem;padding:.4rem 1rem;margin:1rem 0 2rem;background:#f6f8fa}
nav.toc h2{margin:.2rem 0;border:0;font-size:1.05rem} nav.toc ol{margin:.2rem 0;columns:2 380px}
nav.toc li{margin:.15rem 0} nav.toc .meta{display:inline}
h3{font-size:1rem;margin:1.2rem 0 .2rem}
"""

def _e(v: object) -> str:
    return html.escape(str(v))


def badge(provenance: str, text: str | None = None) -> str:
    """A coloured provenance badge; the class is one of the known provenances or none."""
    cls = provenance if provenance in BADGE_CLASSES else "derived"
    return f"<span class='badge {cls}'>{_e(text if text is not None else provenance)}</span>"


def table_id(anchor: str, table_key: str) -> str:
    """The page-wide id of a study section's table (table ids repeat across studies)."""
    return f"{anchor}--{table_key}"


def table_html(table: Table, html_id: str = "", quoted: bool = False) -> str:
    """The table's heading, then the table in a box that scrolls sideways; a table longer than
    :data:`FOLD_ROWS` folds under its heading (the reader opens it), a short one or one a
    claim quotes (``quoted``) stays open."""
    heading = f"{_e(table.title)}{badge(table.provenance, provenance_label(table))}"
    body = f"<div class='scroll'>{_grid_html(table)}</div>"
    if table.note:
        body += f"<p class='caption'>{_e(table.note)}</p>"
    ident = f" id='{_e(html_id)}'" if html_id else ""
    if len(table.rows) > FOLD_ROWS:
        return (f"<details class='fold'{ident}{' open' if quoted else ''}><summary>{heading} <span class='rows'>{len(table.rows)} rows"
                f"</span></summary>{body}</details>")
    return f"<div class='table'{ident}><h3>{heading}</h3>{body}</div>"


def _grid_html(table: Table) -> str:
    """The ``<table>`` itself: key columns, then ours beside the paper's for each value column."""
    k = table.key_columns
    has_paper = bool(table.paper)
    out = ["<table><thead><tr>"]
    for i, c in enumerate(table.columns):
        if i < k:
            out.append(f"<th class='key' rowspan='{2 if has_paper else 1}'>{_e(c)}</th>")
        else:
            out.append(f"<th colspan='{2 if has_paper else 1}'>{_e(c)}</th>")
    out.append("</tr>")
    if has_paper:
        out.append("<tr>" + "".join("<th>ours</th><th>paper</th>" for _ in table.columns[k:]) + "</tr>")
    out.append("</thead><tbody>")
    for r in table.rows:
        p = table.paper_row(r[:k]) if has_paper else None
        cells = [f"<td class='key'>{_e(fmt(v))}</td>" for v in r[:k]]
        for j in range(k, len(r)):
            if table.columns[j] == PROVENANCE_COLUMN and provenance_word(r[j]) in BADGE_CLASSES:
                cells.append(f"<td class='prov'>{badge(provenance_word(r[j]), fmt(r[j]))}</td>")
            else:
                cells.append(f"<td>{_e(fmt(r[j]))}</td>")
            if has_paper:
                cells.append(f"<td class='paper'>{_e(fmt(p[j]) if p is not None else '—')}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


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


def study_html(result: StudyResult, fig_prefix: str, anchor: str | None = None) -> str:
    anchor = anchor or result.study
    parts = [f"<section class='study'><h2 id='{_e(anchor)}'>{_e(section_title(result, anchor))}</h2>"]
    parts.append(f"<p class='meta'>study <code>{_e(result.study)}</code> · {_e(result.mode)} mode · seed "
                 f"{_e(result.seed)} · {result.elapsed_s:.1f} s · profiles: {_e(', '.join(result.profiles))}</p>")
    if result.paper:
        parts.append(f"<p class='meta'>paper: {venue_html(result.paper)}</p>")
    if result.headline:
        parts.append("<ul class='headline'>" + "".join(f"<li>{_e(h)}</li>" for h in result.headline) + "</ul>")
    quoted = {c.table for c in result.claims}
    for key, t in result.tables.items():
        parts.append(table_html(t, table_id(anchor, key), key in quoted))
    for f in result.figures:
        parts.append(f"<img src='{_e(fig_prefix + f)}' alt='{_e(f)}'>")
    for n in result.notes:
        parts.append(f"<div class='note'>{_e(n)}</div>")
    return "\n".join(parts) + "</section>"


def toc_html(results: Sequence[tuple[StudyResult, str]], anchors: Sequence[str]) -> str:
    """The table of contents after the cards: one link per study section, with its table count."""
    items = "".join(f"<li><a href='#{_e(a)}'>{_e(section_title(r, a))}</a> <span class='meta'>"
                    f"{len(r.tables)} table{'s' if len(r.tables) != 1 else ''}</span></li>"
                    for (r, _), a in zip(results, anchors))
    return f"<nav class='toc' id='contents'><h2>Contents</h2><ol>{items}</ol></nav>"


def _anchors(results: Sequence[tuple[StudyResult, str]]) -> list[str]:
    """One unique anchor per result: the study's name, or its folder when a study ran twice."""
    seen: set[str] = set()
    out: list[str] = []
    for r, rel in results:
        a = r.study if r.study not in seen else (rel.strip("/") or f"{r.study}-{len(out)}")
        seen.add(a)
        out.append(a)
    return out


def write_index(results: Sequence[tuple[StudyResult, str]], out_dir: str | os.PathLike[str],
                machine: dict, failures: Sequence[tuple[str, str]] = ()) -> Path:
    """Write ``out_dir/index.html``; ``results`` pairs each result with its folder relative to
    ``out_dir`` (for the figure links). Written to a temp file then renamed."""
    out = Path(out_dir)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    anchors = _anchors(results)
    prefix = [rel.rstrip("/") + "/" if rel else "" for _, rel in results]
    first: dict[str, int] = {}
    for i, (r, _) in enumerate(results):
        first.setdefault(r.study, i)
    cards = []
    for study, i in first.items():
        also = [(r, anchors[j]) for j, (r, _) in enumerate(results) if r.study == study and j != i]
        cards.append(card_html(results[i][0], anchors[i], prefix[i], also))
    papers = {(p.cite() if (p := paper_of(r)) else r.paper) for r, _ in results}
    total = Scoreboard()
    for r, _ in results:
        total = total.add(r.scoreboard)
    modes = sorted({r.mode for r, _ in results})
    count = f"{len(papers)} paper{'s' if len(papers) != 1 else ''}"
    body = [f"<h1 class='top'>cryptoffload — {count} on offloading cryptographic work: what each claimed, "
            "what we found</h1>"
            f"<p class='meta'>version {__version__} · {now} · this machine: "
            f"{_e(machine.get('cpu', '?'))}, {_e(machine.get('cores', '?'))} cores</p>",
            "<p class='legend'>Our numbers are "
            "<span class='badge measured'>measured</span> on this machine in this run, "
            "<span class='badge simulated'>simulated</span> predicted by our models from inputs not fitted to the "
            "paper's table, "
            "<span class='badge fitted'>fitted</span> to the very table they stand beside (a fit, not a prediction), "
            "<span class='badge derived'>derived</span> by arithmetic on other numbers, "
            "<span class='badge stored'>stored</span> from an earlier run of ours on the machine and date shown, or "
            "<span class='badge cited'>cited</span> from a paper. "
            "A card's title leads to the study's tables.</p>",
            f"<section class='total'>{scoreboard_html(total)}<p class='legend'>Every row of ours beside a paper "
            "value is judged by one rule (docs/result-contract.md): a <b>divergence</b> when the paper's value lies "
            "outside our band, an <b>agreement</b> inside a band narrower than the effect it judges, "
            "<b>inconclusive</b> inside a wider one; <b>fitted</b> rows are not judged"
            + (", and a quick run leaves <b>not judged</b> what its smaller sample could judge otherwise than the "
               "full run (<code>cryptoffload report --full</code>)" if "quick" in modes else "")
            + ".</p></section>",
            f"<section class='cards'>{''.join(cards)}</section>", toc_html(results, anchors)]
    for name, err in failures:
        body.append(f"<div class='note'>study {_e(name)} failed: {_e(err)}</div>")
    for (r, _), a, fp in zip(results, anchors, prefix):
        body.append(study_html(r, fp, a))
    doc = (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>cryptoffload report</title>"
           f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
           f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>")
    out.mkdir(parents=True, exist_ok=True)
    return atomic_write(out / "index.html", doc)
