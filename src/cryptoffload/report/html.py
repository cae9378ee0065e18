"""`report/index.html`: every study's tables beside the paper's, its plots and its notes.

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
from cryptoffload.report.result import PROVENANCE_COLUMN, PROVENANCES, VALUE_PROVENANCES, StudyResult, Table, provenance_word
from cryptoffload.report.tables import fmt, provenance_label

BADGE_CLASSES = frozenset(PROVENANCES + VALUE_PROVENANCES)

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1200px;
color:#222;line-height:1.45;padding:0 1rem}
h1{margin-bottom:.2rem} h2{border-bottom:2px solid #ddd;padding-bottom:.2rem;margin-top:2.5rem}
table{border-collapse:collapse;margin:1rem 0;font-size:.85rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:right} th{background:#f3f3f3}
td.key,th.key{text-align:left} td.paper{color:#666;background:#fafafa}
.badge{display:inline-block;font-size:.75rem;padding:.05rem .4rem;border-radius:.3rem;color:#fff;margin-left:.4rem}
.simulated{background:#1f6feb}.measured{background:#2da44e}.fitted{background:#cf222e}.cited{background:#8250df}.mixed{background:#6e7781}.derived{background:#57606a}.input{background:#57606a}
.note{background:#fff8c5;border-left:4px solid #bf8700;padding:.3rem .6rem;margin:.3rem 0}
.headline li{margin:.2rem 0} img{max-width:100%;border:1px solid #eee;margin:.5rem 0}
.meta{color:#666;font-size:.85rem} .caption{color:#555;font-size:.85rem}
"""


def _e(v: object) -> str:
    return html.escape(str(v))


def badge(provenance: str, text: str | None = None) -> str:
    """A coloured provenance badge; the class is one of the known provenances or none."""
    cls = provenance if provenance in BADGE_CLASSES else "derived"
    return f"<span class='badge {cls}'>{_e(text if text is not None else provenance)}</span>"


def table_html(table: Table) -> str:
    k = table.key_columns
    has_paper = bool(table.paper)
    out = [f"<h3>{_e(table.title)}{badge(table.provenance, provenance_label(table))}</h3>"]
    out.append("<table><thead><tr>")
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
    if table.note:
        out.append(f"<p class='caption'>{_e(table.note)}</p>")
    return "".join(out)


def study_html(result: StudyResult, fig_prefix: str) -> str:
    parts = [f"<h2 id='{_e(result.study)}'>{_e(result.title)}</h2>"]
    parts.append(f"<p class='meta'>study <code>{_e(result.study)}</code> · {_e(result.mode)} mode · seed "
                 f"{_e(result.seed)} · {result.elapsed_s:.1f} s · profiles: {_e(', '.join(result.profiles))}</p>")
    if result.paper:
        parts.append(f"<p class='meta'>paper: {_e(result.paper)}</p>")
    if result.headline:
        parts.append("<ul class='headline'>" + "".join(f"<li>{_e(h)}</li>" for h in result.headline) + "</ul>")
    for t in result.tables.values():
        parts.append(table_html(t))
    for f in result.figures:
        parts.append(f"<img src='{_e(fig_prefix + f)}' alt='{_e(f)}'>")
    for n in result.notes:
        parts.append(f"<div class='note'>{_e(n)}</div>")
    return "\n".join(parts)


def write_index(results: Sequence[tuple[StudyResult, str]], out_dir: str | os.PathLike[str],
                machine: dict, failures: Sequence[tuple[str, str]] = ()) -> Path:
    """Write ``out_dir/index.html``; ``results`` pairs each result with its folder relative to
    ``out_dir`` (for the figure links). Written to a temp file then renamed."""
    out = Path(out_dir)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    toc = "".join(f"<li><a href='#{_e(r.study)}'>{_e(r.title)}</a></li>" for r, _ in results)
    body = [f"<h1>cryptoffload report</h1><p class='meta'>version {__version__} · {now} · "
            f"{_e(machine.get('cpu', '?'))}, {_e(machine.get('cores', '?'))} cores</p>",
            "<p>Each table shows our result beside the paper's. Badges say where numbers come from: "
            "<span class='badge simulated'>simulated</span> predicted by our models from inputs not fitted to "
            "the table beside them, "
            "<span class='badge fitted'>fitted</span> fitted to the very table beside them (a fit, not a "
            "prediction), "
            "<span class='badge measured'>measured</span> on this machine, "
            "<span class='badge cited'>cited</span> from a paper.</p>",
            f"<ul>{toc}</ul>"]
    for name, err in failures:
        body.append(f"<div class='note'>study {_e(name)} failed: {_e(err)}</div>")
    for r, rel in results:
        body.append(study_html(r, rel.rstrip("/") + "/" if rel else ""))
    doc = (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>cryptoffload report</title>"
           f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>")
    out.mkdir(parents=True, exist_ok=True)
    return atomic_write(out / "index.html", doc)
