"""Seconds per CKKS op on an FPGA, per level, derived as Suzuki and Yamana do from the HEAX
accelerator's Set-C figures (``profiles/heax_set_c.toml``).

Why a model of its own: the in-storage study's devices run programs whose ops sit at many
levels, and the paper gives HEAX's throughput at one; the rules that carry it to every level
and op (limbs, plain vs ciphertext products, key switching constant over levels) are the one
place the FPGA's speed enters, and the program steps, the gap table and the planner read it.
"""

from __future__ import annotations

from dataclasses import dataclass

from cryptoffload.crypto.ckks.params import CkksParams
from cryptoffload.errors import ConfigError
from cryptoffload.profiles import load_profile
from cryptoffload.sim.core import check_non_negative
from cryptoffload.workloads.he_program import HEOp

FPGA_PROFILE = "heax_set_c"
COST_FIELDS = ("ring.poly_modulus_degree", "ring.data_limbs", "ops.hadd_level0_s", "ops.hmult_top_s",
               "ops.keyswitch_s", "ops.ntt_limb_s", "ops.plain_factor", "ops.mod_switch_factor")


@dataclass(frozen=True)
class FpgaCostModel:
    """Seconds per CKKS op on the FPGA, derived per level as Suzuki and Yamana do from HEAX Set-C.

    * add/sub/negate: ``hadd_level0_s`` at level 0 (one limb), times the number of limbs;
      ``add_plain``/``sub_plain`` touch one polynomial instead of two (``plain_factor``).
    * mul (ciphertext x ciphertext, before relinearisation): ``hmult_top_s`` (= 1 / HEAX
      throughput) at the top level, scaled by limbs; ``mul_plain`` times ``plain_factor``
      (two dyadic products instead of four, SEAL 3.6).
    * relinearize/rotate: ``keyswitch_s``, constant over levels (HEAX's key switching is bound
      by its second INTT stage, whose count does not depend on the input's level).
    * rescale: per polynomial one INTT of the dropped limb and one NTT per remaining limb:
      ``2 * limbs * ntt_limb_s``. mod_switch drops a limb without transforms:
      ``mod_switch_factor`` of an add.
    * encode/encrypt/decrypt: host-side, zero on the device.

    For a ring other than the reference one, element-wise ops scale with ``N`` and key
    switching with ``N * (L / L_ref)**keyswitch_exponent``: 2 by default, our rule (its work is
    ``~L * (L + 1)`` limb transforms); 0 is the paper's (constant), which the study's bands move
    to (issue 26: the rule is ours, not the paper's).
    """

    ref_n: int
    ref_limbs: int
    hadd_level0_s: float
    hmult_top_s: float
    keyswitch_s: float
    ntt_limb_s: float
    plain_factor: float = 0.5
    mod_switch_factor: float = 0.5
    profile: str = ""
    kind: str = "derived"
    keyswitch_exponent: float = 2.0

    def __post_init__(self) -> None:
        for f in ("hadd_level0_s", "hmult_top_s", "keyswitch_s", "ntt_limb_s", "plain_factor", "mod_switch_factor"):
            check_non_negative(f, getattr(self, f))
        if self.ref_n < 1 or self.ref_limbs < 1:
            raise ConfigError("the cost model's reference ring must have N >= 1 and at least one limb")

    @classmethod
    def from_profile(cls, name: str = FPGA_PROFILE) -> FpgaCostModel:
        prof = load_profile(name, required=COST_FIELDS)
        v = prof.value
        return cls(int(v("ring.poly_modulus_degree")), int(v("ring.data_limbs")), v("ops.hadd_level0_s"),
                   v("ops.hmult_top_s"), v("ops.keyswitch_s"), v("ops.ntt_limb_s"), v("ops.plain_factor"),
                   v("ops.mod_switch_factor"), prof.path, prof.kind)

    @classmethod
    def uniform(cls, seconds: float) -> FpgaCostModel:
        """Every device op takes ``seconds`` at any level (tests, closed forms)."""
        return _UniformCost(1, 1, seconds, seconds, seconds, seconds, 1.0, 1.0, "uniform", "derived")

    def op_time(self, op: HEOp, params: CkksParams) -> float:
        name = op.op
        if name in ("encode", "encrypt", "decrypt"):
            return 0.0
        limbs = op.level + 1
        nscale = params.poly_modulus_degree / self.ref_n
        if name in ("add", "sub", "negate"):
            return self.hadd_level0_s * limbs * nscale
        if name in ("add_plain", "sub_plain"):
            return self.plain_factor * self.hadd_level0_s * limbs * nscale
        if name == "mul":
            return self.hmult_top_s * limbs / self.ref_limbs * nscale
        if name == "mul_plain":
            return self.plain_factor * self.hmult_top_s * limbs / self.ref_limbs * nscale
        if name in ("relinearize", "rotate"):
            return self.keyswitch_s * nscale * (params.data_primes / self.ref_limbs) ** self.keyswitch_exponent
        if name == "rescale":
            return 2 * limbs * self.ntt_limb_s * nscale
        if name == "mod_switch":
            return self.mod_switch_factor * self.hadd_level0_s * limbs * nscale
        raise ConfigError(f"the FPGA cost model has no cost for op {name!r}")

    def __call__(self, op: HEOp, params: CkksParams) -> float:
        return self.op_time(op, params)


class _UniformCost(FpgaCostModel):
    """The same time for every device op (:meth:`FpgaCostModel.uniform`)."""

    def op_time(self, op: HEOp, params: CkksParams) -> float:
        return 0.0 if op.op in ("encode", "encrypt", "decrypt") else self.hadd_level0_s


__all__ = ["COST_FIELDS", "FPGA_PROFILE", "FpgaCostModel"]
