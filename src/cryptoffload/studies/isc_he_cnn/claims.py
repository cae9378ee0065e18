"""The isc-he-cnn study's verdicts and claims: a verdict for every cell of the paper's program
beside a paper value (issue 35), the paper's headline ratios (Table 3's CSDs vs FPGA&SSD, a CSD
vs the CPU) as its claims, and a note for every difference beyond the tolerance.

Why its own module: the tables (``tables.py``) say what we simulated; this module says
what it means beside the paper's words, reading the tables' typed rows by field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from cryptoffload.profiles.sensitivity import Band, Swing
from cryptoffload.report.provenance import computed_from, from_printed, printed
from cryptoffload.report.result import Claim, Table
from cryptoffload.report.rows import column, hidden, table_of
from cryptoffload.report.verdicts import Verdict, paper_cells
from cryptoffload.studies.isc_he_cnn import gap as isc_gap
from cryptoffload.studies.bands import Banded
from cryptoffload.studies.isc_he_cnn.bands import table2_label, table3_label, workload_label
from cryptoffload.studies.isc_he_cnn.paper import GB, PAPER_CPU_MS, PAPER_HEADLINE, PAPER_SIZES, TABLE3_COLUMNS, TOLERANCE
from cryptoffload.studies.isc_he_cnn.tables import IscSetting, Table2, Table3, paper_table3_row, unjudged_reason
from cryptoffload.studies.verdicts import Judging, judge

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
    """The headline rows: k CSDs against k FPGA&SSD and one CSD against the CPU."""

    devices: int  # k of "k CSDs vs k FPGA&SSD": 16 as in the paper, else the largest swept
    rows: list[HeadlineRow]

    def value(self, label: str) -> float | None:
        return next((r.value for r in self.rows if r.claim == label), None)


def device_ratio_labels(k: int) -> tuple[str, str]:
    return f"{k} CSDs vs {k} FPGA&SSD: latency reduction (%)", f"{k} CSDs vs {k} FPGA&SSD: throughput ratio"


def headline(setting: IscSetting, t2: Table2, t3: Table3) -> Headline:
    """k CSDs vs k FPGA&SSD (latency reduction, throughput ratio), and one CSD at 8 GB/s vs the CPU."""
    ks = setting.devices
    k = 16 if 16 in ks else ks[-1]
    head = Headline(k, [])
    csd, ssd = t3.runs.get(("csd", k)), t3.runs.get(("fpga_ssd", k))
    if csd is not None and ssd is not None:
        red = (1 - csd.mean_latency_s / ssd.mean_latency_s) * 100
        ratio = t3.throughput[("csd", k)] / t3.throughput[("fpga_ssd", k)]
        lab_r, lab_t = device_ratio_labels(k)
        head.rows += [HeadlineRow(lab_r, setting.provenance, red,
                                  PAPER_HEADLINE["latency_reduction_pct"] if k == 16 else None),
                      HeadlineRow(lab_t, setting.provenance, ratio, PAPER_HEADLINE["throughput_ratio"] if k == 16 else None)]
    if 8.0 in t2.runs:
        sp, prov = t2.cpu.seconds / t2.runs[8.0].mean_latency_s, cpu_speedup_provenance(setting)
        head.rows.append(HeadlineRow(CPU_SPEEDUP, prov, sp, PAPER_HEADLINE["csd_vs_cpu"]))
    return head


def cpu_speedup_provenance(setting: IscSetting) -> str:
    """The CPU speedup is a CPU time (cited or measured) over our latency: *derived*, unless the
    latency is fitted, since a value computed from a fit must say fitted."""
    return computed_from(setting.provenance == "fitted", "derived")


def headline_table(setting: IscSetting, head: Headline) -> Table:
    paper = [HeadlineRow(r.claim, None, r.paper_value) for r in head.rows]
    return table_of(HeadlineRow, head.rows, paper=paper, id=HEADLINE_ID, title="Headline claims",
                    provenance="mixed", reproduces="Table 3", inputs=setting.inputs,
                    unjudged=unjudged_reason(setting),
                    note=f"Ratios of the latencies above ({setting.provenance}); the CPU speedup divides the CPU "
                         f"row (cited or measured) by our latency, so it is {cpu_speedup_provenance(setting)}.")


LATENCY_ALTERNATIVE = (PAPER_CPU_MS, "no offload (the paper's CPU, 11,359 ms)")
THROUGHPUT_ALTERNATIVE = (1e3 / PAPER_CPU_MS, "no offload (the paper's CPU, one thread)")
ONE, NONE = (1.0, "no gain (a ratio of 1)"), (0.0, "none")


def _inverted(b: Banded | None, numerator: float, paper: float) -> Banded | None:
    """The band of ``numerator / figure`` from the figure's band (a CPU time over a latency:
    the CPU time is the paper's, so only the latency moves)."""
    if b is None:
        return None
    t = tuple(Swing(s.input, s.low_input, s.high_input, numerator / s.at_low, numerator / s.at_high)
              for s in b.band.tornado)
    inv = Band(numerator / b.band.nominal, numerator / b.band.high, numerator / b.band.low, t, b.band.method)
    return Banded(f"{numerator:g} / {b.figure}", inv, paper, b.inputs)


def _bandwidth(setting: IscSetting, text: str) -> float | None:
    return next((b for b in setting.bandwidths if f"{b:g} GB/s" == text), None)


def _table2_verdicts(setting: IscSetting, t: Table, bands: Mapping[str, Banded], how: Judging) -> list[Verdict]:
    out = []
    for key, col in paper_cells(t):
        b = _bandwidth(setting, key[0])
        lat = bands.get(table2_label(b)) if b is not None and key[1] == setting.label else None
        paper = t.paper_row(key)
        assert paper is not None
        if col == "latency_ms":
            out.append(judge(t, key, col, lat, how, figure=f"Table 2 at {key[0]} ({key[1]}): latency (ms)",
                             paper_source=printed(f"Table 2, {key[0]}"), alternative=LATENCY_ALTERNATIVE[0],
                             alternative_what=LATENCY_ALTERNATIVE[1], no_band="not banded in this run"))
        else:
            pv = paper[t.columns.index(col)]
            out.append(judge(t, key, col, _inverted(lat, PAPER_CPU_MS, pv), how,
                             figure=f"Table 2 at {key[0]} ({key[1]}): speedup over the CPU",
                             paper_source=from_printed(f"the paper's CPU {PAPER_CPU_MS:,.0f} ms / its {key[0]} latency "
                                                       f"{paper[t.columns.index('latency_ms')]:,.0f} ms"),
                             alternative=ONE[0], alternative_what="no offload (a speedup of 1)",
                             no_band="not banded in this run"))
    return out


def _table3_verdicts(t: Table, bands: Mapping[str, Banded], how: Judging) -> list[Verdict]:
    out = []
    for key, col in paper_cells(t):
        alt = LATENCY_ALTERNATIVE if col.endswith("latency_ms") else THROUGHPUT_ALTERNATIVE
        out.append(judge(t, key, col, bands.get(table3_label(key[0], col)), how,
                         figure=f"Table 3, {key[0]} device(s): {col}", paper_source=printed(f"Table 3, k = {key[0]}, {col}"),
                         alternative=alt[0], alternative_what=alt[1],
                         no_band="fitted to Table 2" if t.provenance == "fitted" else "not banded in this run"))
    return out


_HEADLINE_SOURCES = {"reduction": printed("the paper's headline, latency -72.2 % (= 1 - 1,071 / 3,858 of its Table 3)"),
                     "ratio": printed("the paper's headline, throughput x3.60 (= 14.939 / 4.147 of its Table 3)"),
                     "cpu": printed("the paper's text, 10.6x (= 11,359 / 1,071 ms)")}


def _headline_verdicts(t: Table, bands: Mapping[str, Banded], how: Judging) -> list[Verdict]:
    out = []
    for key, col in paper_cells(t):
        label = key[0]
        if label == CPU_SPEEDUP:
            b, src, alt = _inverted(bands.get(table2_label(8.0)), PAPER_CPU_MS, PAPER_HEADLINE["csd_vs_cpu"]), "cpu", ONE
        elif label.endswith("(%)"):
            b, src, alt = bands.get(label), "reduction", (0.0, "no reduction")
        else:
            b, src, alt = bands.get(label), "ratio", ONE
        out.append(judge(t, key, col, b, how, figure=label, paper_source=_HEADLINE_SOURCES[src], alternative=alt[0],
                         alternative_what=alt[1], no_band="not banded in this run"))
    return out


_WORKLOAD_SOURCES = {"FPGA compute per inference (s)": from_printed("Table 2's compute-bound plateau (1,055 ms at 16 GB/s)")}


def _workload_verdicts(t: Table, bands: Mapping[str, Banded], how: Judging) -> list[Verdict]:
    return [judge(t, key, col, bands.get(workload_label(key[0])), how, figure=f"workload: {key[0]}",
                  paper_source=_WORKLOAD_SOURCES.get(key[0], printed("section 4.4")), alternative=NONE[0],
                  alternative_what=NONE[1], no_band="not banded in this run")
            for key, col in paper_cells(t)]


def verdicts(setting: IscSetting, tables: Mapping[str, Table], bands: Mapping[str, Banded], how: Judging) -> list[Verdict]:
    """A verdict for every cell of the paper's program beside a paper value (``bands.py``
    bands them all; the fitted program's cells are fitted, not judged). Another program's
    tables say why their paper values are not judged (``Table.unjudged``)."""
    if not setting.paper_like:
        return []
    out = _table2_verdicts(setting, tables[TABLE2_ID], bands, how)
    for tid in ("table3_devices", "table3_fitted"):
        if tid in tables:
            out += _table3_verdicts(tables[tid], bands, how)
    if HEADLINE_ID in tables:
        out += _headline_verdicts(tables[HEADLINE_ID], bands, how)
    if "workload" in tables:
        out += _workload_verdicts(tables["workload"], bands, how)
    return out


def claims(head: Headline, judged: Sequence[Verdict], gap: list[isc_gap.GapRow]) -> list[Claim]:
    """The paper's headline claims, each with its verdict: 16 CSDs against 16 FPGA&SSD (latency,
    throughput) and one CSD at 8 GB/s against one CPU thread (the scoreboard counts the rest)."""
    by = {v.key[0]: v for v in judged if v.table == HEADLINE_ID}
    out = []
    lab_r, lab_t = device_ratio_labels(head.devices)
    why = ("" if not gap else "our predicted FPGA compute (per-op times of the assumed HEAX rates) is shorter than the "
           "paper's, so the compute-bound CSD gains more (table2_gap)")
    if lab_r in by:
        v = by[lab_r]
        out.append(Claim.of_verdict(v, paper=f"16 CSDs vs 16 FPGA&SSD: latency -{v.paper:g} %",
                                    ours=f"16 CSDs vs 16 FPGA&SSD: latency -{v.ours:.1f} %", why=why))
    if lab_t in by:
        v = by[lab_t]
        out.append(Claim.of_verdict(v, paper=f"16 CSDs vs 16 FPGA&SSD: throughput x{v.paper:.2f}",
                                    ours=f"16 CSDs vs 16 FPGA&SSD: throughput x{v.ours:.2f}", why=why))
    if CPU_SPEEDUP in by:
        v = by[CPU_SPEEDUP]
        out.append(Claim.of_verdict(v, paper=f"one CSD at 8 GB/s is {v.paper:g}x faster than one CPU thread (11,359 ms)",
                                    ours=f"one CSD at 8 GB/s: {v.ours:.1f}x the cited CPU time"))
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
    figures are claims of their own (``trace_claims.py``)."""
    prog = setting.program
    summ = prog.summary(setting.world.cost)
    return (f"Not the paper's program: {prog.name} ({prog.source}: weights {summ['weight_bytes'] / GB:.2f} GB, keys "
            f"{summ['key_bytes'] / GB:.2f} GB, FPGA compute {summ['compute_s']:.3f} s per inference; the paper's "
            f"{PAPER_SIZES['weights_gb']:g} GB, {PAPER_SIZES['keys_gb']:g} GB, {PAPER_SIZES['compute_s']:g} s) on the "
            "paper's platforms, so its numbers show scale, not a reproduction")


__all__ = ["Headline", "HeadlineRow", "claims", "device_ratio_labels", "cpu_speedup_provenance", "headline",
           "headline_table", "keys_note", "other_program_headline", "other_program_notes", "table2_notes", "table3_note",
           "verdicts"]
