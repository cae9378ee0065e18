"""The paillier-offload study's headline figures with their bands (issue 26).

Why these inputs: QHCS2 against QHCS1 rests on the three values fitted to Table 1 (card latency,
driver cost, coroutines in flight), each over the range the paper's stated digits allow; the
card's ceiling on the cited 8950 rates that give how a modexp's cost grows with the modulus
(unverified: see the profile), over their stated digits; the ceiling's ratio to SW also on
``cpu.paper_sw_encryption_s``, which is *derived* from the paper's QHCS1 figures (110 x 0.042 /
1151), so that ratio is 110 x our ceiling / 27,400, not an independent figure.

Each band is the table's value plus the model's shift, simulated at :data:`BAND_ENCRYPTIONS`
encryptions per run (fewer than a full run's 30,000; same seed at every point, so the shift is
the inputs', not the sampling's).
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

from cryptoffload.profiles.loader import Profile, load_profile
from cryptoffload.profiles.sensitivity import Input, band, profile_input, with_values
from cryptoffload.sim.qat import model as qat
from cryptoffload.sim.qat.params import REQUIRED_PROFILE_FIELDS, load_qat_params
from cryptoffload.studies.bands import Banded, Memo

BAND_ENCRYPTIONS = 3_000
QUICK_BAND_ENCRYPTIONS = 1_000
LATENCY_RATIO, CEILING_OPS, CEILING_OVER_SW = "QHCS2 / QHCS1 mean latency", "QHCS1 ceiling enc/s", "QHCS1 ceiling / SW throughput"
FITTED = ("workload.qhcs_coroutines", "card.modexp_latency_s", "cpu.request_s")
CARD = ("card.reference_rsa1k_private_per_s", "card.reference_rsa2k_private_per_s")
SW = ("cpu.paper_sw_encryption_s",)


def _model(prof: Profile, scaling: str, seed: int, name: str, n: int) -> Callable[[Mapping[str, float]], float]:
    """One figure of the model, at the given overrides of the profile (SW's throughput, which
    only the SW figure moves, simulated once per value of it)."""
    sw_ops: dict[float | None, float] = {}

    def raw(overrides: Mapping[str, float]) -> float:
        p = load_qat_params(with_values(prof, overrides), scaling)
        if name == LATENCY_RATIO:
            q1, q2 = (qat.simulate_mode(m, p, n, seed=seed) for m in ("qhcs1", "qhcs2"))
            return q2.mean_latency_s / q1.mean_latency_s
        ceiling = p.card_modexp_per_s / 2.0
        if name == CEILING_OPS:
            return ceiling
        sw = overrides.get(SW[0])
        if sw not in sw_ops:
            sw_ops[sw] = qat.simulate_mode("sw", p, n, seed=seed).throughput_ops
        return ceiling / sw_ops[sw]
    return raw


def _shifted(raw: Callable[[Mapping[str, float]], float], name: str, ours: float) -> Memo:
    """``ours`` plus the model's shift from its nominal run."""
    base = raw({})
    return Memo(lambda ov: {name: ours + raw(ov) - base if ov else ours})


def _inputs(prof: Profile, fields: Sequence[str]) -> list[Input]:
    return [profile_input(prof, f) for f in fields]


def qat_bands(profile: str, scaling: str, seed: int, ours: dict[str, float], paper: dict[str, float],
              quick: bool = False, paper_ranges: Mapping[str, tuple[float, float]] | None = None) -> list[Banded]:
    """Bands of ``ours`` (by the figure names above) over the inputs each rests on; a quick run
    simulates :data:`QUICK_BAND_ENCRYPTIONS` per point. ``paper_ranges``: the paper's figures
    it states in words, at their stated precision (``qat_model.PAPER_STATED_RANGES``)."""
    n = QUICK_BAND_ENCRYPTIONS if quick else BAND_ENCRYPTIONS
    prof = load_profile(profile, required=REQUIRED_PROFILE_FIELDS)
    out = []
    for name, fields in ((LATENCY_RATIO, FITTED), (CEILING_OPS, CARD), (CEILING_OVER_SW, CARD + SW)):
        moving = _inputs(prof, fields)
        memo = _shifted(_model(prof, scaling, seed, name, n), name, ours[name])
        out.append(Banded(name, band(memo.figure(name), moving), paper.get(name), moving,
                          (paper_ranges or {}).get(name)))
    return out


def note(quick: bool) -> str:
    """The bands table's note: what moved, and how many encryptions each point simulated."""
    n = QUICK_BAND_ENCRYPTIONS if quick else BAND_ENCRYPTIONS
    return NOTE.replace("{n}", f"{n:,}") + (" (a quick run: fewer than a full run's 3,000)" if quick else "")


NOTE = ("Each input over its range in qat_dh8970.toml: the three fitted values over the paper's stated digits "
        "(coroutines, card latency, driver cost), the 8950 reference rates (unverified) over theirs, and "
        "cpu.paper_sw_encryption_s (derived: 110 x 0.042 / 1151) over the digits of 110 and 0.042; all corners. "
        "A band is the table's value plus the model's shift, simulated at {n} encryptions per point "
        "(the same seed at every point)")

__all__ = ["BAND_ENCRYPTIONS", "QUICK_BAND_ENCRYPTIONS", "note", "CEILING_OPS", "CEILING_OVER_SW", "LATENCY_RATIO", "NOTE", "qat_bands"]
