"""The isc-he-cnn study's claims: the paper's headline ratios (Table 3's CSDs vs FPGA&SSD, a
CSD vs the CPU), our strongest agreement and largest divergence with the paper and why, and a
note for every difference beyond the tolerance.

Why its own module: the tables (``_isc_tables.py``) say what we simulated; this module says
what it means beside the paper's words, reading the tables' typed rows by field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from cryptoffload.profiles.sensitivity import closer
from cryptoffload.report.result import Claim, Table
from cryptoffload.report.rows import column, hidden, table_of
from cryptoffload.studies import isc_gap
from cryptoffload.studies._bands import Banded
from cryptoffload.studies._isc_paper import (GB, PAPER_CPU_MS, PAPER_HEADLINE, PAPER_SIZES, PAPER_TABLE2, PREDICTED,
                                             TABLE3_COLUMNS, TOLERANCE)
from cryptoffload.studies._isc_tables import IscSetting, Table2, Table3, paper_table3_row

TABLE2_ID, HEADLINE_ID = "table2_latency_vs_bandwidth", "table3_headline"
CPU_SPEEDUP = "CSD at 8 GB/s vs CPU: speedup"


@dataclass(frozen=True)
class HeadlineRow:
    claim: str = column()
    provenance: str | None = column()
    value: float | None = column()
    paper_value: float | None = hidden(default=None)


@dataclass
class Headline:
    """The headline rows, and the paper's claims they test by row label (one claim may stand
    for two rows: the paper states latency and throughput in one sentence)."""

    devices: int  # k of "k CSDs vs k FPGA&SSD": 16 as in the paper, else the largest swept
    rows: list[HeadlineRow]
    claims: dict[str, Claim]

    def value(self, label: str) -> float | None:
        return next((r.value for r in self.rows if r.claim == label), None)


def device_ratio_labels(k: int) -> tuple[str, str]:
    return f"{k} CSDs vs {k} FPGA&SSD: latency reduction (%)", f"{k} CSDs vs {k} FPGA&SSD: throughput ratio"


def headline(setting: IscSetting, t2: Table2, t3: Table3) -> Headline:
    """k CSDs vs k FPGA&SSD (latency reduction, throughput ratio), and one CSD at 8 GB/s vs the CPU."""
    ks = setting.devices
    k = 16 if 16 in ks else ks[-1]
    head = Headline(k, [], {})
    csd, ssd = t3.runs.get(("csd", k)), t3.runs.get(("fpga_ssd", k))
    if csd is not None and ssd is not None:
        red = (1 - csd.mean_latency_s / ssd.mean_latency_s) * 100
        ratio = t3.throughput[("csd", k)] / t3.throughput[("fpga_ssd", k)]
        lab_r, lab_t = device_ratio_labels(k)
        head.rows += [HeadlineRow(lab_r, setting.provenance, red,
                                  PAPER_HEADLINE["latency_reduction_pct"] if k == 16 else None),
                      HeadlineRow(lab_t, setting.provenance, ratio, PAPER_HEADLINE["throughput_ratio"] if k == 16 else None)]
        if k == 16 and setting.paper_like:
            head.claims[lab_r] = head.claims[lab_t] = Claim(
                paper="16 CSDs vs 16 FPGA&SSD: latency -72.2 %, throughput x3.60",
                ours=f"16 CSDs vs 16 FPGA&SSD: latency -{red:.1f} %, throughput x{ratio:.2f}",
                provenance=setting.provenance, table=HEADLINE_ID, key=[lab_r])
    if 8.0 in t2.runs:
        sp, prov = t2.cpu.seconds / t2.runs[8.0].mean_latency_s, cpu_speedup_provenance(setting)
        head.rows.append(HeadlineRow(CPU_SPEEDUP, prov, sp, PAPER_HEADLINE["csd_vs_cpu"]))
        if setting.paper_like:
            head.claims[CPU_SPEEDUP] = Claim(
                paper="one CSD at 8 GB/s is 10.6x faster than one CPU thread (11,359 ms)",
                ours=f"one CSD at 8 GB/s: {sp:.1f}x the {t2.cpu.provenance} CPU time",
                provenance=prov, table=HEADLINE_ID, key=[CPU_SPEEDUP])
    return head


def cpu_speedup_provenance(setting: IscSetting) -> str:
    """The CPU speedup is a CPU time (cited or measured) over our latency: *derived*, unless the
    latency is fitted, since a value computed from a fit must say fitted."""
    return "fitted" if setting.provenance == "fitted" else "derived"


def headline_table(setting: IscSetting, head: Headline) -> Table:
    paper = [HeadlineRow(r.claim, None, r.paper_value) for r in head.rows]
    return table_of(HeadlineRow, head.rows, paper=paper, id=HEADLINE_ID, title="Headline claims",
                    provenance="mixed", reproduces="Table 3", inputs=setting.inputs,
                    note=f"Ratios of the latencies above ({setting.provenance}); the CPU speedup divides the CPU "
                         f"row (cited or measured) by our latency, so it is {cpu_speedup_provenance(setting)}.")


@dataclass(frozen=True)
class Candidate:
    """One predicted number beside the paper's, as a claim would state it; ``error`` is
    |ours / paper - 1|. ``gbps`` (a Table 2 point) or ``headline`` (a headline row's label)
    says which number it is."""

    error: float
    paper: str
    ours: str
    table: str
    key: list[Any]
    gbps: float | None = None
    headline: str | None = None

    def order(self) -> tuple[Any, ...]:
        """By error; ties (never seen) by the texts."""
        return self.error, self.paper, self.ours, self.table, self.key


def candidates(t2: Table2, head: Headline) -> list[Candidate]:
    """Every predicted number the paper states: Table 2's points and the headline ratios."""
    out = []
    for b, r in t2.runs.items():
        pv = PAPER_TABLE2.get(float(b))
        if pv:
            ours = r.mean_latency_s * 1e3
            out.append(Candidate(abs(ours / pv - 1), f"Table 2 at {b:g} GB/s: {pv:,.0f} ms",
                                 f"predicted {ours:,.0f} ms ({ours / pv - 1:+.1%})", TABLE2_ID,
                                 [f"{b:g} GB/s", PREDICTED], gbps=b))
    for row in head.rows:
        pv, v = row.paper_value, row.value
        if pv and v is not None:
            out.append(Candidate(abs(v / pv - 1), f"{row.claim}: {pv:g}", f"predicted {v:.3g} ({v / pv - 1:+.1%})",
                                 HEADLINE_ID, [row.claim], headline=row.claim))
    return out


def _why(worst: Candidate, gap: list[isc_gap.GapRow], bandwidths: list[float]) -> str:
    if gap and worst.gbps is not None:
        return isc_gap.explain(gap, bandwidths.index(worst.gbps), PAPER_TABLE2[worst.gbps])
    if worst.headline is not None:
        return ("our predicted FPGA compute (per-op times of the assumed HEAX rates) is shorter than the "
                "paper's, so the compute-bound CSD gains more")
    return ""


def band_name(cand: Candidate) -> str:
    """The name ``_isc_bands`` gives the candidate's figure."""
    return cand.headline if cand.headline is not None else f"Table 2 at {cand.gbps:g} GB/s (ms)"


def _judged(text: Claim, kind: str, reason: str, b: Banded | None) -> Claim:
    """The claim as ``text`` words it, of the kind its band gives; without a band, stated and
    not judged (an agreement or a divergence needs a band), with the reason ``kind`` would have."""
    if b is None or b.paper is None:
        return Claim(paper=text.paper, ours=text.ours, provenance=text.provenance, table=text.table, key=text.key,
                     why=reason if kind == "divergence" else "")
    return Claim.judged(paper=text.paper, ours=text.ours, provenance=text.provenance, table=text.table, key=text.key,
                        why=reason, band=[b.band.low, b.band.high], paper_value=b.paper,
                        most_sensitive=b.band.most_sensitive, closes=closer(b.band, b.paper), band_method=b.band.method)


def claims(setting: IscSetting, t2: Table2, head: Headline, gap: list[isc_gap.GapRow],
           bands: Mapping[str, Banded] | None = None) -> list[Claim]:
    """Our strongest agreement and largest divergence among the predicted numbers (a headline
    claim of the paper, when it is one of them, takes that role), each judged by its band
    (``_isc_bands.py``) when given, then the other headline claims."""
    bands = bands or {}
    remaining = dict(head.claims)
    out: list[Claim] = []
    cands = candidates(t2, head) if setting.paper_like and setting.main_is_paper else []
    if cands:
        best, worst = min(cands, key=Candidate.order), max(cands, key=Candidate.order)
        for cand, kind, reason in ((best, "agreement", ""), (worst, "divergence", _why(worst, gap, setting.bandwidths))):
            shared = remaining.get(cand.headline) if cand.headline is not None else None
            text = shared or Claim(paper=cand.paper, ours=cand.ours, provenance=setting.provenance, table=cand.table,
                                   key=cand.key)
            out.append(_judged(text, kind, reason, bands.get(band_name(cand))))
            if shared is not None:
                remaining = {k: c for k, c in remaining.items() if c is not shared}
    return out + [_with_cpu_band(c, bands) for c in _distinct(remaining.values())]


def _with_cpu_band(c: Claim, bands: Mapping[str, Banded]) -> Claim:
    """The CPU speedup claim with the band of its denominator (Table 2 at 8 GB/s): the CPU time
    is cited, so the speedup moves only with our latency."""
    b = bands.get("Table 2 at 8 GB/s (ms)")
    if c.key != [CPU_SPEEDUP] or b is None:
        return c
    c.band = [PAPER_CPU_MS / b.band.high, PAPER_CPU_MS / b.band.low]
    c.paper_value, c.most_sensitive, c.band_method = PAPER_HEADLINE["csd_vs_cpu"], b.band.most_sensitive, b.band.method
    return c


def _distinct(found: Any) -> list[Claim]:
    """Each claim once (one claim may stand under two labels)."""
    out: list[Claim] = []
    for c in found:
        if not any(c is r for r in out):
            out.append(c)
    return out


def table2_notes(setting: IscSetting, t2: Table2, gap: list[isc_gap.GapRow]) -> list[str]:
    """Every point of the main program more than the tolerance from the paper, with the gap by input."""
    notes = []
    for r, pr in zip(t2.rows, t2.paper):  # t2.paper is built row by row beside t2.rows
        if r.program != setting.label or pr.latency_ms is None or r.latency_ms is None:
            continue
        if abs(r.latency_ms / pr.latency_ms - 1) <= TOLERANCE:
            continue
        why = ""
        if gap and r.gbps is not None and r.gbps in setting.bandwidths:
            why = " -- " + isc_gap.explain(gap, setting.bandwidths.index(r.gbps), pr.latency_ms)
        notes.append(f"Table 2 at {r.bandwidth} ({r.program}): {r.latency_ms:,.0f} ms vs the paper's "
                     f"{pr.latency_ms:,.0f} ms (beyond 10 %){why}")
    return notes


def table3_note(t3: Table3) -> list[str]:
    """How many of Table 3's values are beyond the tolerance, and the largest."""
    devs = []
    for r in t3.rows:
        paper = paper_table3_row(r.devices)
        if paper is None:
            continue
        for col in TABLE3_COLUMNS[1:]:
            ours, theirs = getattr(r, col), getattr(paper, col)
            if ours is not None and theirs is not None:
                devs.append((ours / theirs - 1, r.devices, col))
    beyond = [d for d in devs if abs(d[0]) > TOLERANCE]
    if not beyond:
        return []
    lo, hi = min(d[0] for d in devs), max(d[0] for d in devs)
    rel, k, col = max(beyond, key=lambda d: abs(d[0]))
    return [f"Table 3: {len(beyond)} of {len(devs)} values beyond 10 % (from {lo:+.0%} to {hi:+.0%}; "
            f"largest k={k} {col} {rel:+.0%}): each board's latency is Table 2's at its "
            "share of the lanes, so Table 3 inherits Table 2's gap (see table2_gap)"]


def keys_note(setting: IscSetting) -> list[str]:
    summ = setting.program.summary(setting.world.cost)
    keys = summ["key_bytes"] / GB
    if abs(keys / PAPER_SIZES["keys_gb"] - 1) <= TOLERANCE:
        return []
    params = setting.program.params
    return [f"evaluation keys {keys:.2f} GB vs the paper's 0.5 GB: {summ['keys']} keys of "
            f"{params.ksk_bytes / 1e6:.1f} MB (SEAL layout, {params.data_primes} data "
            "primes); the paper's EVA program uses more rotation steps or larger keys"]


def other_program_notes(setting: IscSetting, t2: Table2) -> list[str]:
    prog = setting.program
    notes = [f"model {prog.name!r} ({prog.source}) is not the paper's program: the paper columns are the "
             "paper's own program, shown for scale; docs/studies/isc-he-cnn.md explains the differences"]
    if t2.cpu.provenance == "cited":
        notes.append("the CPU row is the paper's (cited, its own program): give a trace with per-op wall_s "
                     "to get a measured CPU row for this model")
    return notes


def other_program_headline(setting: IscSetting) -> str:
    """The first headline line of a run on a program that is not the paper's (a recorded
    trace): what it is beside the paper's, so what follows shows scale, not a reproduction. Its
    figures are claims of their own (``_isc_trace_claims.py``)."""
    prog = setting.program
    summ = prog.summary(setting.world.cost)
    return (f"Not the paper's program: {prog.name} ({prog.source}: weights {summ['weight_bytes'] / GB:.2f} GB, keys "
            f"{summ['key_bytes'] / GB:.2f} GB, FPGA compute {summ['compute_s']:.3f} s per inference; the paper's "
            f"{PAPER_SIZES['weights_gb']:g} GB, {PAPER_SIZES['keys_gb']:g} GB, {PAPER_SIZES['compute_s']:g} s) on the "
            "paper's platforms, so its numbers show scale, not a reproduction")


__all__ = ["Candidate", "Headline", "HeadlineRow", "band_name", "candidates", "claims", "device_ratio_labels",
           "cpu_speedup_provenance", "headline", "headline_table", "keys_note", "other_program_headline", "other_program_notes", "table2_notes",
           "table3_note"]
