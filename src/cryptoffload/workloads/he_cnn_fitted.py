"""The paper-calibrated HE CNN program: the in-storage paper's totals spread over phases whose
shares are FITTED to its Table 2 (``profiles/he_cnn_paper.toml``).

Why it is kept: it matches Table 2 by construction, so it is shown only as a secondary row
labelled *fitted*, and as the last step of the gap decomposition (what remains once our
program's inputs are set to the paper's: when the paper's program needs its data). The
prediction is ``he_cnn_eva.paper_inputs_program``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from cryptoffload.crypto.ckks.params import CkksParams
from cryptoffload.errors import ProfileError
from cryptoffload.workloads.he_program import HEOp, HEProgram, OpTime
from cryptoffload.workloads.he_program_builder import ProgramBuilder

if TYPE_CHECKING:
    from cryptoffload.profiles.loader import Profile


PAPER_PROFILE = "he_cnn_paper"
PHASE_FIELDS = ("level", "width", "weights_share", "keys_share", "compute_share")


def paper_calibrated_program(op_time: OpTime, profile: str = PAPER_PROFILE) -> HEProgram:
    """Build the program of ``profiles/he_cnn_paper.toml``.

    The profile gives the paper's totals (weights, keys, FPGA compute) and how they are spread
    over the program's phases; each phase becomes ops at its level: ``width`` accumulator
    chains, each weight a ``mul_plain`` + ``add``, each new key first used by a
    ``rotate`` + ``add``, and further rotations (re-using the phase's keys) until the phase's share of the
    compute, costed with ``op_time`` (the FPGA model), is reached. Weights, keys and rotations
    are interleaved evenly inside a phase (a new key is first used at evenly spaced rotations), so
    data is needed at an even rate within it.
    """
    from cryptoffload.profiles import load_profile

    prof = load_profile(profile, required=("params.poly_modulus_degree", "params.data_limbs",
                                           "params.prime_bits", "totals.weights_gb", "totals.keys_gb",
                                           "totals.compute_s"))
    params = _params(prof)
    phases, names = _phases(prof)
    builder = _PhaseBuilder(prof, params, op_time)
    for ph in names:
        builder.phase(ph, phases[ph])
    return HEProgram("paper-calibrated CNN", "paper-calibrated", params, builder.b.ops,
                     input_bytes={"input": params.ciphertext_bytes(params.levels)},
                     notes=[f"built from {prof.path} ({prof.kind})"])


def _params(prof: "Profile") -> CkksParams:
    n = int(prof.value("params.poly_modulus_degree"))
    limbs = int(prof.value("params.data_limbs"))
    pbits = int(prof.value("params.prime_bits"))
    return CkksParams(n, tuple([pbits] * (limbs + 1)), int(prof.get("params.scale_bits", 30) or 30))


def _phases(prof: "Profile") -> tuple[dict[str, dict[str, float]], list[str]]:
    """The profile's phases and their names in program order; every field present and each
    kind of share adding up to 1."""
    phases = prof.section("phases")
    if not phases:
        raise ProfileError(f"{prof.path}: field 'phases' is missing")
    names = sorted(phases, key=lambda k: phases[k].get("order", 0.0))
    for ph in names:
        for f in PHASE_FIELDS:
            if f not in phases[ph]:
                raise ProfileError(f"{prof.path}: field 'phases.{ph}.{f}' is missing")
    for f in ("weights_share", "keys_share", "compute_share"):
        total = sum(phases[ph][f] for ph in names)
        if abs(total - 1.0) > 1e-3:
            raise ProfileError(f"{prof.path}: the phases' {f} add up to {total:.4f}, not 1; "
                               "change them so that they sum to 1")
    return phases, names


class _PhaseBuilder:
    """Builds the program phase by phase, carrying from one phase to the next: the ciphertexts
    the next phase starts from, the keys loaded so far, the weight and key counters, and the
    fraction of a key the rounding of earlier phases left over."""

    def __init__(self, prof: "Profile", params: CkksParams, op_time: OpTime) -> None:
        self.path = prof.path
        self.params = params
        self.op_time = op_time
        self.weights = prof.value("totals.weights_gb") * 1e9
        self.compute = prof.value("totals.compute_s")
        self.n_keys_total = max(1, round(prof.value("totals.keys_gb") * 1e9 / params.ksk_bytes))
        self.b = ProgramBuilder(params)
        self.srcs = [self.b.input("input")]
        self.key_pool: list[str] = []
        self.key_pool_prev: list[str] = []
        self.key_no = 0
        self.pt_no = 0
        self.carried_keys = 0.0

    def phase(self, ph: str, cfg: Mapping[str, float]) -> None:
        """One phase: switch to its level, its weights and rotations on ``width`` chains, then
        rescale each chain's result."""
        self.b.phase = ph
        level, width = self._level_and_width(ph, cfg)
        self.srcs = [self.b.mod_switch_to(s, level) for s in self.srcs]
        n_pt = round(cfg["weights_share"] * self.weights / self.params.plaintext_bytes(level))
        new_keys = self._new_keys(cfg)
        n_rot = self._rotations(ph, cfg, level, width, n_pt, new_keys)
        accs = self._interleave(level, width, n_pt, n_rot, new_keys)
        outs = [a if a is not None else self.srcs[i % len(self.srcs)] for i, a in enumerate(accs)]
        self.srcs = [self.b.rescale(a) if self.b.level[a] > 0 else a for a in outs]

    def _level_and_width(self, ph: str, cfg: Mapping[str, float]) -> tuple[int, int]:
        level = int(cfg["level"])
        width = int(cfg["width"])
        if not 0 <= level <= self.params.levels or width < 1:
            raise ProfileError(f"{self.path}: phase {ph}: level must be 0..{self.params.levels} and width >= 1 "
                               f"(got level {level}, width {width}); fix 'phases.{ph}.level' or 'width'")
        return level, width

    def _new_keys(self, cfg: Mapping[str, float]) -> list[str]:
        """The keys this phase loads (its share of all keys, the rounding carried over); they
        replace the pool of keys rotations re-use, the previous pool kept as a fallback."""
        self.carried_keys += cfg["keys_share"] * self.n_keys_total
        n_new = int(round(self.carried_keys))
        self.carried_keys -= n_new
        new_keys = [f"galois:{self.key_no + i + 1}" for i in range(n_new)]
        self.key_no += n_new
        self.key_pool_prev = self.key_pool
        if new_keys:
            self.key_pool = new_keys
        return new_keys

    def _rotations(self, ph: str, cfg: Mapping[str, float], level: int, width: int, n_pt: int,
                   new_keys: list[str]) -> int:
        """How many rotations fill the phase's share of the compute beside its weights (at
        least one per new key), costed with the FPGA model."""
        params, op_time = self.params, self.op_time
        budget = cfg["compute_share"] * self.compute
        probe = HEOp(0, "probe", "mul_plain", level, (), "", 0, 0)
        t_pt = op_time(probe, params) + op_time(_probe("add", level), params)
        t_rot = op_time(_probe("rotate", level), params) + op_time(_probe("add", level), params)
        t_end = width * op_time(_probe("rescale", level), params)
        spare = budget - n_pt * t_pt - t_end
        n_rot = max(len(new_keys), round(spare / t_rot)) if self.key_pool else 0
        if n_rot and not self.key_pool:
            raise ProfileError(f"{self.path}: phase {ph} needs rotations but no phase before it loads keys")
        if spare < len(new_keys) * t_rot - 0.5 * t_rot:
            raise ProfileError(f"{self.path}: phase {ph}: its compute share ({budget * 1e3:.1f} ms) is too small "
                               f"for its {n_pt} weights and {len(new_keys)} keys on this FPGA model")
        return n_rot

    def _interleave(self, level: int, width: int, n_pt: int, n_rot: int, new_keys: list[str]) -> list[str | None]:
        """Weights and rotations interleaved evenly (Bresenham) over ``width`` accumulator chains."""
        b = self.b
        accs: list[str | None] = [None] * width
        total_units = n_pt + n_rot
        done_pt = done_rot = 0
        for u in range(total_units):
            want_pt = n_pt * (u + 1) // total_units if total_units else 0
            chain = u % width
            acc = accs[chain]
            if done_pt < want_pt:
                t = b.mul_plain(self.srcs[chain % len(self.srcs)], f"w{self.pt_no}")
                self.pt_no += 1
                done_pt += 1
                accs[chain] = t if acc is None else b.add(acc, t)
            else:
                base = acc if acc is not None else self.srcs[chain % len(self.srcs)]
                key = self._rotation_key(new_keys, n_rot, done_rot)
                r = b._emit("rotate", (base,), level=b.level[base], out_level=b.level[base], keys=(key,))
                done_rot += 1
                accs[chain] = b.add(base, r)
        return accs

    def _rotation_key(self, new_keys: list[str], n_rot: int, done_rot: int) -> str:
        """New keys are first used at evenly spaced rotations; the others re-use loaded keys."""
        fresh = len(new_keys) * (done_rot + 1) // n_rot
        if fresh > len(new_keys) * done_rot // n_rot:
            return new_keys[fresh - 1]
        loaded = new_keys[:fresh] if fresh else []
        pool = loaded or self.key_pool_prev or self.key_pool
        return pool[done_rot % len(pool)]


def _probe(op: str, level: int) -> HEOp:
    return HEOp(0, "probe", op, level, (), "", 0, 0)


__all__ = ["PAPER_PROFILE", "PHASE_FIELDS", "paper_calibrated_program"]
