"""The bootstrap: mod-raise, CoeffToSlot, EvalMod, SlotToCoeff -- written once against the CKKS
interface, so the RNS backends run it and the recording backend counts its ops and launches.

One bootstrap of a ciphertext ``ct`` (size 2; at level 0, or at any level when its scale must
first come down), with ``n`` slots (``n = N/2``: full; fewer: sparse, the values repeated):

1. *scale down* (only from a level >= 1): ``ct * 1`` encoded at the scale that takes it to
   ``q_0 / 2^r`` after one rescale, then down to level 0 -- ``r`` (``message_ratio_bits``)
   trades EvalMod's approximation error (``~(2 pi / 2^r)^2``) against the amplification of its
   noise (``2^r``);
2. *mod-raise* to the top (with the sparse-secret encapsulation: ``|I| <= 16``); sparse slots
   then sum ``log2(N / 2n)`` rotations by multiples of ``n`` (keeping the coefficients of
   ``X^(N/2n)``, times ``N / 2n``, as OpenFHE and Lattigo do);
3. *CoeffToSlot*: the plan's stages (:mod:`.dft`, :mod:`.lintrans`), their constants making the
   slots ``t / (q_0 K')`` (bit-reversed); full slots split real and imaginary parts into two
   ciphertexts by one conjugation (``w + conj w``, ``-i (w - conj w)``), sparse ones into one
   (the last stage's ``-i`` on the second half);
4. *EvalMod* (:mod:`.evalmod`) of each: ``sin(2 pi t / q_0)``;
5. *SlotToCoeff*: the stages with the constant ``q_0 / (2 pi scale)``, after ``a + i b`` (full)
   and before the fold ``+ rot(., n)`` (sparse); its last stage's plaintext scale returns the
   input's scale.

Every scale is chosen so that the ciphertexts' scales are the primes they will be divided by
(CoeffToSlot's output and EvalMod's series at the prime of the next level), so products keep
their scale; every phase is timed on the backend's device (:func:`~..timing.timed`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, TypeVar

import numpy as np

from cryptoffload.crypto.ckks.bootstrap import dft, evalmod, lintrans
from cryptoffload.crypto.ckks.bootstrap.chebyshev import at_level
from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan
from cryptoffload.crypto.ckks.bootstrap.scales import factor_for, prescale_for
from cryptoffload.crypto.ckks.bootstrap.schedule import Schedule, schedule
from cryptoffload.crypto.ckks.errors import CkksError
from cryptoffload.crypto.ckks.timing import timed
from cryptoffload.checks import JsonDict

if TYPE_CHECKING:
    from cryptoffload.crypto.ckks.backend import Ciphertext, CkksBackend, Plaintext

_A = TypeVar("_A")
_R = TypeVar("_R")

__all__ = ["PHASES", "BootstrapRun", "Bootstrapper", "StageEncoding", "StageRunner", "rotation_steps", "transforms"]

#: the phases a run is timed by, in order
PHASES = ("scale_down", "mod_raise", "CoeffToSlot", "EvalMod", "SlotToCoeff")
#: log2(q_0 / scale) the message enters EvalMod with, unless given
MESSAGE_RATIO_BITS = 8
#: the fewest bits of headroom under q_0 an input at level 0 may have
MIN_RATIO_BITS = 4


def _partial_sum_steps(n: int, ring_degree: int) -> list[int]:
    return [n << j for j in range(int(math.log2(ring_degree // (2 * n))))]


def transforms(plan: BootstrapPlan, ring_degree: int) -> tuple[int, list[dft.Stage], list[dft.Stage]]:
    """``(slots, CoeffToSlot's stages, SlotToCoeff's stages)`` of ``plan`` at ring degree
    ``ring_degree`` (unscaled matrices, :mod:`.dft`)."""
    n = plan.slots_for(ring_degree)
    sparse = n < ring_degree // 2
    cts = dft.stages(dft.COEFF_TO_SLOT, n, plan.level_budget[0], plan.dim1[0], sparse=sparse)
    stc = dft.stages(dft.SLOT_TO_COEFF, n, plan.level_budget[1], plan.dim1[1], sparse=sparse)
    return n, cts, stc


def rotation_steps(plan: BootstrapPlan, ring_degree: int) -> list[int]:
    """Every rotation step a bootstrap with ``plan`` at ring degree ``ring_degree`` uses (a key
    each): the stages' baby and giant steps, and for sparse slots the partial sums and the fold."""
    n, cts, stc = transforms(plan, ring_degree)
    steps: set[int] = set()
    for st in cts + stc:
        steps |= lintrans.grid(st).rotation_steps
    if n < ring_degree // 2:
        steps |= set(_partial_sum_steps(n, ring_degree)) | {n}
    return sorted(steps)


@dataclass(frozen=True)
class StageEncoding:
    """How one stage is encoded: its matrix (``stage``), the level it runs at, the plaintext
    scale, the constant every diagonal is multiplied by and the factor actually applied (the
    constant, times the sparse transforms' half factors in a transform's last stage)."""

    stage: dft.Stage
    level: int
    scale: float
    constant: float
    factor: complex | np.ndarray = field(repr=False, compare=False)


#: How a caller evaluates one stage instead of :func:`.lintrans.apply` in this process (a split of
#: its giant steps over Dask workers, ``engines/bootstrap_run.py``): given the stage's encoding
#: (what another process needs to encode it), its plaintexts here and the input ciphertext, the
#: stage's rescaled output -- the same ciphertext :func:`.lintrans.apply` makes.
StageRunner = Callable[[StageEncoding, lintrans.EncodedStage, "Ciphertext"], "Ciphertext"]


@dataclass
class BootstrapRun:
    """One bootstrap: seconds per phase (:data:`PHASES`), the levels, the scale the message
    entered EvalMod with (``log2(q_0 / scale)``)."""

    seconds: dict[str, float] = field(default_factory=dict)
    level_in: int = 0
    level_out: int = 0
    message_ratio_bits: float = 0.0

    @property
    def total_s(self) -> float:
        return sum(self.seconds.values())

    def to_dict(self) -> JsonDict:
        return {"seconds": dict(self.seconds), "total_s": self.total_s, "level_in": self.level_in,
                "level_out": self.level_out, "message_ratio_bits": self.message_ratio_bits}


class Bootstrapper:
    """A bootstrap with ``plan`` on backend ``ev`` (keys made already: :func:`rotation_steps`,
    conjugation, relinearisation, the encapsulation): the stages' plaintexts are encoded here,
    once. ``message_ratio_bits``: ``r`` (see the module docstring); ``eval_mod``: EvalMod's
    parameters (default: :func:`.evalmod.choose` for the backend's raise bound)."""

    def __init__(self, ev: CkksBackend, plan: BootstrapPlan, *, message_ratio_bits: int = MESSAGE_RATIO_BITS,
                 eval_mod: evalmod.EvalModParams | None = None) -> None:
        self.ev, self.plan = ev, plan
        ring = ev.params.poly_modulus_degree
        self.n, self._cts, self._stc = transforms(plan, ring)
        self.sparse = self.n < ring // 2
        self.replication = ring // (2 * self.n)
        self.eval_mod = eval_mod or evalmod.choose(_overflow_bound(ev), message_ratio_bits=message_ratio_bits)
        self.schedule: Schedule = schedule(ev.params.levels, len(self._cts), self.eval_mod.depth, len(self._stc))
        self.q0 = float(ev.primes[0])
        self.input_scale = self.q0 / 2.0 ** self.eval_mod.message_ratio_bits
        self.stage_scale = float(ev.primes[self.schedule.eval_mod[0]])
        # the series comes out at the prime its first double angle divides by
        self.series_scale = float(ev.primes[self.schedule.eval_mod[0] - self.eval_mod_series_depth])
        self._encoded_cts: list[lintrans.EncodedStage] | None = None
        self._encoded_stc: list[lintrans.EncodedStage] | None = None
        self._encodings: dict[str, list[StageEncoding]] = {}
        self._prepared_for: tuple[float, float] | None = None
        self._cache: dict[tuple[str, int, float, float], lintrans.EncodedStage] = {}

    # -- constants and encoding -------------------------------------------------------------------
    def _factors(self, total: float, levels: tuple[int, ...], free: int) -> list[float]:
        """Per-stage value factors whose product is ``total``: every stage but ``free`` gets the
        factor that makes its encoded integers (factor x the level's prime) the same size as
        the others', ``free`` the rest -- so only that stage depends on ``total`` (which depends
        on the input's scale), and the others are encoded once."""
        logq = [math.log2(float(self.ev.primes[lv])) for lv in levels]
        each = (math.log2(total) + sum(logq)) / len(levels)
        out = [2.0 ** (each - lq) for lq in logq]
        out[free] = total / math.prod(f for i, f in enumerate(out) if i != free)
        return out

    def _half_factor(self, sign: complex, width: int) -> np.ndarray | float:
        """The sparse transforms' row scaling: 1 on the first copy, ``sign`` on the second."""
        if not self.sparse:
            return 1.0
        return np.concatenate([np.ones(width // 2), np.full(width // 2, sign)]).astype(np.complex128)

    def _stage_scales(self, levels: tuple[int, ...], scale_in: float, scale_out: float) -> list[float]:
        """Plaintext scales that bring the ciphertext's scale to ``scale_out`` after every stage."""
        ev, out, cur = self.ev, [], scale_in
        for lv in levels:
            p = factor_for(cur, prescale_for(scale_out, float(ev.primes[lv])))
            out.append(p)
            cur = cur * p / float(ev.primes[lv])
        return out

    def _specs(self, stages: list[dft.Stage], levels: tuple[int, ...], total: float, scales: tuple[float, float],
               free: int, sign: complex) -> list[StageEncoding]:
        plaintext_scales = self._stage_scales(levels, *scales)
        out = []
        for i, (st, lv, p, c) in enumerate(zip(stages, levels, plaintext_scales, self._factors(total, levels, free))):
            factor: complex | np.ndarray = c * self._half_factor(sign, st.width) if i == len(stages) - 1 else c
            out.append(StageEncoding(st, lv, p, c, factor))
        return out

    def _encode_all(self, name: str, specs: list[StageEncoding]) -> list[lintrans.EncodedStage]:
        """Each stage's plaintexts (from the cache when its level, scale and factor are the same)."""
        out = []
        for i, sp in enumerate(specs):
            key = (name, i, sp.scale, sp.constant)
            enc = self._cache.get(key)
            if enc is None:
                enc = self._cache[key] = lintrans.encode(self.ev, sp.stage, level=sp.level, scale=sp.scale,
                                                         factor=sp.factor)
            out.append(enc)
        self._cache = {k: v for k, v in self._cache.items() if any(v is e for e in out) or k[0] != name}
        return out

    def stage_encodings(self, transform: str, input_scale: float | None = None,
                        output_scale: float | None = None) -> list[StageEncoding]:
        """What each stage of ``transform`` (:data:`.dft.COEFF_TO_SLOT` or :data:`.dft.SLOT_TO_COEFF`)
        is encoded as: its matrix, level, plaintext scale and factor -- enough for another
        backend with this key set's public context (a Dask worker) to encode the stage itself
        (:func:`.lintrans.encode`) and evaluate a share of its giant steps
        (:func:`.lintrans.apply` with ``giants=`` and ``rescale=False``)."""
        input_scale = self.input_scale if input_scale is None else input_scale
        output_scale = float(self.ev.params.scale) if output_scale is None else output_scale
        if transform == dft.COEFF_TO_SLOT:
            total = input_scale / (2.0 * self.q0 * self.eval_mod.interval * self.replication * self.n)
            return self._specs(self._cts, self.schedule.coeff_to_slot, total, (input_scale, self.stage_scale), 0, -1j)
        total = self.q0 / (self.eval_mod.gain * input_scale)
        return self._specs(self._stc, self.schedule.slot_to_coeff, total, (self.eval_mod_output_scale(), output_scale),
                           len(self._stc) - 1, 1j)

    def prepare(self, input_scale: float | None = None, output_scale: float | None = None) -> None:
        """Encode both transforms for a raised ciphertext of ``input_scale`` (default: what
        :meth:`run` brings an input from level 1 to) and an output of ``output_scale``
        (default: the parameters' scale). Only CoeffToSlot's first stage depends on the input's
        scale and SlotToCoeff's last on both; the others are encoded once."""
        input_scale = self.input_scale if input_scale is None else input_scale
        output_scale = float(self.ev.params.scale) if output_scale is None else output_scale
        if self._prepared_for == (input_scale, output_scale):
            return
        self._encodings = {name: self.stage_encodings(transform, input_scale, output_scale)
                       for name, transform in (("cts", dft.COEFF_TO_SLOT), ("stc", dft.SLOT_TO_COEFF))}
        self._encoded_cts = self._encode_all("cts", self._encodings["cts"])
        self._encoded_stc = self._encode_all("stc", self._encodings["stc"])
        self._prepared_for = (input_scale, output_scale)

    def encoded(self, transform: str) -> list[lintrans.EncodedStage]:
        """The stages of ``transform`` as this backend runs them (after :meth:`prepare`)."""
        self.prepare(*(self._prepared_for or (None, None)))
        out = self._encoded_cts if transform == dft.COEFF_TO_SLOT else self._encoded_stc
        assert out is not None
        return out

    def eval_mod_output_scale(self) -> float:
        """The scale EvalMod's output has: the series' scale, squared and divided by the level's
        prime at each double angle, and the arcsine's two products (the backends' float
        arithmetic, replayed)."""
        s = self.series_scale
        lv = self.schedule.eval_mod[1] + self.eval_mod.depth - self.eval_mod_series_depth
        for _ in range(self.eval_mod.double_angles):
            s = (s * s) / float(self.ev.primes[lv])
            lv -= 1
        if self.eval_mod.arcsine:
            sq = (s * s) / float(self.ev.primes[lv])
            s = (s * sq) / float(self.ev.primes[lv - 1])
        return s

    @property
    def eval_mod_series_depth(self) -> int:
        return self.eval_mod.depth - self.eval_mod.double_angles - (2 if self.eval_mod.arcsine else 0)

    # -- the phases --------------------------------------------------------------------------------
    def _scale_down(self, ct: Ciphertext) -> Ciphertext:
        """``ct`` at level 0 with the scale EvalMod wants its message at (one of the program's
        levels spent if ``ct`` is above 0); an input at level 0 is taken as it is, unless its
        message is not at least 2^MIN_RATIO_BITS below ``q_0``."""
        ev = self.ev
        lv = ev.level(ct)
        if lv == 0:
            ratio = math.log2(self.q0 / ev.scale(ct))
            if ratio < MIN_RATIO_BITS:
                raise CkksError(f"bootstrap: the ciphertext's scale 2^{math.log2(ev.scale(ct)):.1f} at level 0 leaves "
                                f"{ratio:.1f} bits under q_0 (2^{math.log2(self.q0):.1f}); EvalMod needs at least "
                                f"{MIN_RATIO_BITS}: bootstrap it from level 1 or above, where its scale is brought down")
            return ct
        want = prescale_for(self.input_scale, float(ev.primes[lv]))
        low = ev.rescale(ev.mul_const(ct, 1.0, scale=factor_for(ev.scale(ct), want)))
        return at_level(ev, low, 0)

    def _raise(self, ct: Ciphertext) -> Ciphertext:
        ev = self.ev
        raised = ev.mod_raise(ct, self.schedule.top)
        if self.sparse:
            for step in _partial_sum_steps(self.n, ev.params.poly_modulus_degree):
                raised = ev.add(raised, ev.rotate(raised, step))
        return raised

    def _stages(self, name: str, ct: Ciphertext, key: str, stage: StageRunner | None) -> Ciphertext:
        encoded = self._encoded_cts if key == "cts" else self._encoded_stc
        assert encoded is not None
        for i, (spec, enc) in enumerate(zip(self._encodings[key], encoded)):
            self.ev.set_phase(f"{name}:{i}")
            ct = lintrans.apply(self.ev, ct, enc) if stage is None else stage(spec, enc, ct)
        return ct

    def _coeff_to_slot(self, ct: Ciphertext, stage: StageRunner | None = None) -> list[Ciphertext]:
        ev = self.ev
        w = self._stages("CoeffToSlot", ct, "cts", stage)
        ev.set_phase("CoeffToSlot:split")
        conj = ev.conjugate(w)
        if self.sparse:              # real parts in the first copy, imaginary parts in the second
            return [ev.add(w, conj)]
        return [ev.add(w, conj), ev.mul_const(ev.sub(w, conj), -1j, scale=1.0)]

    def _slot_to_coeff(self, parts: list[Ciphertext], stage: StageRunner | None = None) -> Ciphertext:
        ev = self.ev
        ev.set_phase("SlotToCoeff:join")
        ct = parts[0] if self.sparse else ev.add(parts[0], ev.mul_const(parts[1], 1j, scale=1.0))
        ct = self._stages("SlotToCoeff", ct, "stc", stage)
        if self.sparse:
            ev.set_phase("SlotToCoeff:fold")
            ct = ev.add(ct, ev.rotate(ct, self.n))
        return ct

    def run(self, ct: Ciphertext, *, stage: StageRunner | None = None) -> tuple[Ciphertext, BootstrapRun]:
        """The bootstrap of ``ct``: a ciphertext of the same values and scale at
        :attr:`Schedule.after`, and the run's timing. ``stage``: evaluates each CoeffToSlot and
        SlotToCoeff stage instead of this process (:data:`StageRunner`)."""
        ev = self.ev
        if ev.size(ct) != 2:
            raise CkksError(f"bootstrap: needs a size-2 ciphertext, got size {ev.size(ct)}; relinearize first")
        report = BootstrapRun(level_in=ev.level(ct))
        out_scale = ev.scale(ct)
        phase_before = getattr(ev, "phase", None)

        def step(name: str, fn: Callable[[_A], _R], arg: _A) -> _R:
            ev.set_phase(name)
            with timed(ev) as t:
                out = fn(arg)
            report.seconds[name] = t.seconds
            return out

        low = step("scale_down", self._scale_down, ct)
        raised = step("mod_raise", self._raise, low)
        self.prepare(ev.scale(raised), out_scale)
        report.message_ratio_bits = math.log2(self.q0 / ev.scale(raised))
        parts = step("CoeffToSlot", lambda c: self._coeff_to_slot(c, stage), raised)
        parts = step("EvalMod", lambda p: evalmod.eval_mod(ev, p, self.eval_mod, self.series_scale), parts)
        out = step("SlotToCoeff", lambda p: self._slot_to_coeff(p, stage), parts)
        ev.set_phase(phase_before)
        report.level_out = ev.level(out)
        return out, report


def _overflow_bound(ev: CkksBackend) -> int:
    """``K``: the bound on ``|I|`` after the backend's mod-raise, from the Hamming weight of the
    secret it raises under (``|I| <= (h + 1) / 2``)."""
    weight = getattr(ev, "raise_weight", None)
    if weight is None:
        raise CkksError(f"bootstrap: the {ev.name} backend raises under its dense secret (|I| unbounded in practice); "
                        "make the sparse-secret encapsulation keys first (keygen(ephemeral_weight=32) or "
                        "add_encapsulation_keys())")
    return (int(weight) + 1) // 2

