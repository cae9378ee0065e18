"""The ridge study's phase times and accuracy with their bands (issue 26).

Why these bands: every phase time of the study is measured on this machine, and nothing of ours
models the paper's QAT card, K80 or garbled circuit, so the only uncertainty a phase time has
is its run-to-run noise -- computed from this run's own numbers, never a chosen percentage. The
per-record upload runs in chunks (``apps/ridge/bulk.py``), each timed on its own
(:class:`~cryptoffload.apps.ridge.bulk.ChunkTiming`), so the per-ciphertext time of each chunk
is one sample of the rate; over the run's ``k`` chunks its relative standard error is
``stdev / sqrt(k) / mean``, and the phase time at 1,000,000 records (the rate times the
ciphertexts, scaled linearly where the run had fewer records) carries ``+-2`` of them. With
fewer than two chunks the noise cannot be estimated, and none is claimed: the band is the value
alone, and its method says so. The solve runs once per run, so its band is always the value
alone. A run is cut into at least :data:`NOISE_CHUNKS` chunks (:func:`noise_chunk`) so a quick
run has samples to estimate from.

The accuracy claim's band is in its own unit, ``z`` (an error over its expected standard
deviation): ``[0, Z_MARGIN]``, the range a correct protocol's largest ``z`` stays in with the
probability ``apps/ridge/accuracy.py`` states. The paper gives no accuracy figure to judge.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, replace
from typing import Mapping, Sequence

from cryptoffload.apps.ridge.accuracy import Z_MARGIN
from cryptoffload.apps.ridge.bulk import ChunkTiming
from cryptoffload.profiles.sensitivity import CONFIDENCE, Band, Input, band, interval_text, t_multiplier
from cryptoffload.report.provenance import printed
from cryptoffload.report.result import Table
from cryptoffload.report.rows import table_of
from cryptoffload.studies.bands import BANDS_ID, TORNADO_ID, Banded, BandRow, TornadoRow, band_rows, tornado_rows

#: a run is cut into at least this many chunks (where it has the records), so the spread of the
#: chunks' rates estimates the run-to-run noise; smaller chunks cost a quick run nothing
#: measurable (the fixed-base table is built once per worker, not per chunk)
NOISE_CHUNKS = 8

#: the rates the chunks give: encryption (encode + pack + encrypt), aggregation, and the two
#: together (the pipeline the total is made of)
RATES = ("encryption", "aggregation", "pipeline")


def noise_chunk(records: int, chunk: int) -> int:
    """``chunk``, or less where it would leave fewer than :data:`NOISE_CHUNKS` chunks."""
    return max(1, min(chunk, -(-records // NOISE_CHUNKS)))


@dataclass(frozen=True)
class RateNoise:
    """The run-to-run noise of one per-ciphertext rate over a run's chunks: ``rel_se`` is the
    standard error of the mean rate over the mean (``None``: not estimated, ``why`` says why)."""

    what: str
    samples: int
    rel_se: float | None
    why: str = ""
    label: str = ""  # the input's name where the default does not fit

    @property
    def input_name(self) -> str:
        plural = "s" if self.samples != 1 else ""
        return self.label or f"run-to-run noise of the {self.what} chunk times ({self.samples} chunk{plural})"

    def as_input(self) -> Input:
        """The noise as a factor on the phase time: ``1 +- t rel_se``, a t-interval at the stated
        confidence over the chunks (not below 0); fixed at 1 where it cannot be estimated."""
        k = t_multiplier(self.samples)
        if self.rel_se is None or k is None:
            return Input(self.input_name, 1.0, 1.0, 1.0, self.why or interval_text(self.samples), "measured")
        half = k * self.rel_se
        return Input(self.input_name, 1.0, max(0.0, 1.0 - half), 1.0 + half,
                     f"measured: {interval_text(self.samples)} x the relative standard error of the per-ciphertext "
                     f"{self.what} time over this run's {self.samples} chunks ({self.rel_se:.2%})", "measured")

    def method(self) -> str:
        if self.rel_se is None or t_multiplier(self.samples) is None:
            return f"{self.why or interval_text(self.samples)}: no noise band"
        return (f"{interval_text(self.samples)} x the relative standard error of the per-ciphertext {self.what} time "
                f"over this run's {self.samples} chunks ({self.rel_se:.2%}), times the phase time")


def rate_noise(what: str, seconds: Sequence[float], ciphertexts: Sequence[int]) -> RateNoise:
    """The noise of the per-ciphertext rate ``seconds[i] / ciphertexts[i]`` over the chunks."""
    rates = [s / c for s, c in zip(seconds, ciphertexts) if c > 0]
    k = len(rates)
    if k < 2:
        return RateNoise(what, k, None, f"the noise cannot be estimated from {k} chunk{'s' if k != 1 else ''}")
    mean = statistics.fmean(rates)
    if mean <= 0:
        return RateNoise(what, k, None, f"no {what} time was recorded per chunk")
    return RateNoise(what, k, statistics.stdev(rates) / math.sqrt(k) / mean)


def chunk_noise(chunks: Sequence[ChunkTiming]) -> dict[str, RateNoise]:
    """Each rate of :data:`RATES` over the run's chunks."""
    cts = [c.ciphertexts for c in chunks]
    enc = [c.encode_s + c.encrypt_s for c in chunks]
    agg = [c.aggregate_s for c in chunks]
    return {"encryption": rate_noise("encryption", enc, cts), "aggregation": rate_noise("aggregation", agg, cts),
            "pipeline": rate_noise("encryption + aggregation", [e + a for e, a in zip(enc, agg)], cts)}


#: the solve runs once per run: no noise estimate
SOLVE_NOISE = RateNoise("solve", 1, None, "one solve per run: its noise cannot be estimated from one measurement",
                        "run-to-run noise of the solve (one per run: not estimated)")


@dataclass(frozen=True)
class PhaseFigures:
    """Our phase times at 1,000,000 records (seconds): the figures the claims quote."""

    encryption: float
    aggregation: float
    pipeline: float
    solve: float


def _banded(figure: str, terms: Sequence[tuple[float, RateNoise]], paper: float | None, method: str) -> Banded:
    """``sum(value * factor)`` over the terms, each factor its noise (at every corner)."""
    inputs = [n.as_input() for _, n in terms]
    values = [(v, i.name) for (v, _), i in zip(terms, inputs)]
    b = band(lambda ov: sum(v * ov.get(name, 1.0) for v, name in values), inputs)
    return Banded(figure, replace(b, method=method), paper, inputs)


def phase_bands(f: PhaseFigures, noise: Mapping[str, RateNoise], paper: Mapping[str, float | None]
                ) -> dict[str, Banded]:
    """The band of each phase the paper times, keyed like ``table2_phases``' rows: a phase over
    its rate's noise; the total (pipeline + solve) over the pipeline's, the solve as measured."""
    enc, agg, pipe = noise["encryption"], noise["aggregation"], noise["pipeline"]
    return {
        "encryption": _banded("encryption at 1,000,000 records (s)", [(f.encryption, enc)], paper.get("encryption"),
                              enc.method()),
        "aggregation": _banded("aggregation at 1,000,000 records (s)", [(f.aggregation, agg)],
                               paper.get("aggregation"), agg.method()),
        "solve": _banded("solve (s)", [(f.solve, SOLVE_NOISE)], paper.get("solve"), SOLVE_NOISE.method()),
        "total": _banded("total at 1,000,000 records (s)", [(f.pipeline, pipe), (f.solve, SOLVE_NOISE)],
                         paper.get("total"), f"the pipeline: {pipe.method()}; plus the solve ({SOLVE_NOISE.why})"),
    }


def most_sensitive(b: Banded) -> str:
    """The input that moves the figure most; the first input where none moves it (a noise that
    could not be estimated is still what the figure rests on)."""
    return b.band.most_sensitive or b.inputs[0].name


@dataclass(frozen=True)
class AccuracyBand:
    """The accuracy claim's band in ``z``: ``[0, Z_MARGIN]``, what drives the error, and why."""

    max_z: float
    low: float
    high: float
    most_sensitive: str
    method: str


def accuracy_band(max_z: float, frac_bits: int, d: int) -> AccuracyBand:
    """The band a correct protocol's largest ``z`` stays in, for coefficients rounded at
    ``2^-frac_bits`` (``apps/ridge/accuracy.py``)."""
    sensitive = (f"the fixed-point scale 2^-{frac_bits} (frac_bits = {frac_bits}): each record's x_j x_k and y x_j "
                 f"are rounded to it, so the expected error grows as sqrt(records) / 2^{frac_bits} (the unpack "
                 "masks' stat_bits do not enter: the masks are removed exactly)")
    method = (f"not a spread of ours: the range a correct protocol's max_z stays in. Each coefficient's error is "
              f"close to normal with the standard deviation of apps/ridge/accuracy.py (independent roundings to "
              f"2^-{frac_bits}, exact rational solve), so one of d = {d} exceeds {Z_MARGIN:g} with probability below "
              f"d x 6.3e-5 ({d * 6.3e-5:.2%})")
    return AccuracyBand(max_z, 0.0, Z_MARGIN, sensitive, method)


ACCURACY_FIGURE = "accuracy: max z of this run's coefficients"


def band_tables(phases: Sequence[Banded], accuracy: AccuracyBand, provenance: str) -> tuple[Table, Table]:
    """``headline_bands`` and ``headline_tornado`` (the layout of ``studies/bands.py``),
    labelled as what they are: our figures ``provenance`` (measured, or derived when scaled),
    their bands derived from this run's measured chunk times, the paper's cited."""
    acc = BandRow(ACCURACY_FIGURE, accuracy.max_z, accuracy.low, accuracy.high, None, None, accuracy.most_sensitive,
                  accuracy.method)
    rows = [replace(r, most_sensitive=most_sensitive(f)) for r, f in zip(band_rows(phases), phases)]
    bands = table_of(BandRow, rows + [acc], id=BANDS_ID, provenance="mixed", inputs=[],
                     column_provenance={"ours": provenance, "band_low": "derived", "band_high": "derived",
                                        "paper": printed(), "paper_inside": "derived"},
                     title="Headline figures with their bands: each phase time over this run's own run-to-run noise",
                     note=f"Phase times at 1,000,000 records, each over a {CONFIDENCE * 100:g} % t-interval of its "
                          "per-ciphertext rate over this run's chunks (none where it cannot be estimated: the "
                          "solve runs once); nothing of ours models the paper's QAT card, K80 or garbled circuit. "
                          f"The accuracy row is in z, its band the [0, {Z_MARGIN:g}] a correct protocol stays in.")
    derived = ("input_low", "input_nominal", "input_high", "ours_at_low", "ours_at_high", "swing")
    tornado = table_of(TornadoRow, tornado_rows(phases), id=TORNADO_ID, provenance="mixed", inputs=[],
                       column_provenance=dict.fromkeys(derived, "derived"),
                       title="Tornado: each noise alone at its low and high end, the others nominal (largest swing "
                             "first)",
                       note="input_low/input_high: the factor the noise puts on the phase time (1 +- t relative "
                            "standard errors, a t-interval); range_why: how it was measured.")
    return bands, tornado


__all__ = ["ACCURACY_FIGURE", "NOISE_CHUNKS", "RATES", "SOLVE_NOISE", "AccuracyBand", "PhaseFigures", "RateNoise",
           "accuracy_band", "band_tables", "chunk_noise", "most_sensitive", "noise_chunk", "phase_bands", "rate_noise"]
