"""The numbers the QAT Paillier model runs on, derived from cited hardware figures, CPU costs
measured on this project's machine, and -- where nothing could be found -- values fitted to the
paper's Table 1 and labelled so.

Why a derivation rather than a table of model inputs: the paper (Zhou and Hua, QHCS) gives no
card or CPU cost, only ratios between its five designs. Every input here has a source of its own,
so the paper's ratios become predictions:

* **The card.** Its Paillier modexp rate (2048-bit modulus n^2, 1024-bit exponents) is derived
  from a *measured RSA-2048 rate on the same adapter* (wolfSSL's benchmark of an Intel QuickAssist
  Adapter 8970: 44,259 private-key ops/s, 8 threads; a lower bound of what the card can do) and
  *Intel's RSA-1024/RSA-2048 rates for the previous adapter* (8950: 190,000 and 40,000 ops/s),
  which say how a QAT modexp's cost grows with the modulus: doubling both modulus and exponent
  costs 4.75x, the exponent alone 2x, so the modulus 2^beta = 2.375x (beta = 1.25). A Paillier
  modexp is then 2^beta / 2 = 1.19 RSA-2048 operations (an RSA-2048 private op with CRT is two
  1024-bit modexps). The schoolbook reading (beta = 2, two RSA-2048 operations per modexp) is
  the ``quadratic`` alternative. Nothing public gives a single request's latency on the card, so
  it is *fitted* to the paper's QAT+S1 throughput; the engine count follows (rate x latency).
* **The CPU.** Thread switches among 1,000 synchronous callers, an OpenSSL ASYNC_JOB
  resume-and-pause, the Paillier work around the modexps and a GMP modexp are *measured* on one
  core of this project's machine (``benchmarks/qat_cpu_costs.py``, results stored with the
  machine), then scaled to the paper's Xeon D-1541 by one factor: the paper's own software
  encryption time (its SW row, QHCS1 / 110 = 249 enc/s, *cited*) over this machine's GMP
  encryption. The driver's per-request cost (building, submitting and retiring a QAT request)
  has no public figure and cannot be measured without a card: it is *fitted* to the paper's
  QAT+S2 throughput. How many coroutines QHCS keeps in flight is not stated either: *fitted* to
  the paper's QHCS1 latency.

Everything else -- QHCS1's and QHCS2's throughput, QHCS2's latency, S2's latency, QHCS1 / SW --
is predicted. :data:`PROVENANCE` records which paper figure each mode's numbers depend on.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, fields
from typing import Any, Union

from cryptoffload.errors import ConfigError, ProfileError
from cryptoffload.profiles.loader import Profile, load_profile
from cryptoffload.sim.core import check_count, check_positive

__all__ = ["QatParams", "CARD_SCALINGS", "PROFILE_NAME", "REQUIRED_PROFILE_FIELDS", "load_qat_params",
           "card_modexp_rate", "cpu_scale"]

PROFILE_NAME = "qat_dh8970"
CARD_SCALINGS = ("qat-measured", "quadratic")
"""How a card modexp's cost grows with the modulus: the exponent read off Intel's RSA-1024 and
RSA-2048 rates (default), or the schoolbook square."""

# profile field of every input
_INPUTS: dict[str, str] = {
    "key_bits": "paillier.key_bits",
    "encryptions": "workload.encryptions",
    "s2_threads": "workload.s2_threads",
    "qhcs_coroutines": "workload.qhcs_coroutines",
    "rsa2k_per_s": "card.rsa2k_private_per_s",
    "ref_rsa1k_per_s": "card.reference_rsa1k_private_per_s",
    "ref_rsa2k_per_s": "card.reference_rsa2k_private_per_s",
    "modexp_latency_s": "card.modexp_latency_s",
    "ring_capacity": "card.ring_capacity",
    "reference_modulus_bits": "card.reference_modulus_bits",
    "reference_exponent_bits": "card.reference_exponent_bits",
    "paper_sw_encryption_s": "cpu.paper_sw_encryption_s",
    "gmp_powm_s": "cpu.measured_gmp_powm_s",
    "thread_switch_s": "cpu.measured_thread_switch_s",
    "coroutine_run_s": "cpu.measured_coroutine_run_s",
    "paillier_pre_s": "cpu.measured_paillier_pre_s",
    "paillier_post_s": "cpu.measured_paillier_post_s",
    "poll_s": "cpu.measured_poll_s",
    "callback_s": "cpu.measured_callback_s",
    "request_s": "cpu.request_s",
}
_INTS = frozenset({"key_bits", "encryptions", "s2_threads", "qhcs_coroutines", "ring_capacity",
                   "reference_modulus_bits", "reference_exponent_bits"})
REQUIRED_PROFILE_FIELDS: tuple[str, ...] = tuple(_INPUTS.values())


def card_modexp_rate(rsa2k_per_s: float, ref_rsa1k_per_s: float, ref_rsa2k_per_s: float,
                     scaling: str = "qat-measured") -> float:
    """Paillier modexps per second (2048-bit modulus, 1024-bit exponent) of a card that does
    ``rsa2k_per_s`` RSA-2048 private-key operations per second (see the module docstring)."""
    if scaling not in CARD_SCALINGS:
        raise ConfigError(f"unknown card scaling {scaling!r} (choose from {', '.join(CARD_SCALINGS)})")
    beta = 2.0 if scaling == "quadratic" else math.log2(ref_rsa1k_per_s / ref_rsa2k_per_s) - 1.0
    if not beta > 0:
        raise ConfigError("the reference RSA-1024 rate must exceed twice the RSA-2048 rate")
    rsa_ops_per_modexp = 2.0**beta / 2.0
    return rsa2k_per_s / rsa_ops_per_modexp


def cpu_scale(paper_sw_encryption_s: float, gmp_powm_s: float, pre_s: float, post_s: float) -> float:
    """Paper CPU seconds per measured CPU second: the paper's software encryption (two modexps and
    the work around them, on its Xeon D-1541) over the same work measured here."""
    return paper_sw_encryption_s / (2.0 * gmp_powm_s + pre_s + post_s)


@dataclass(frozen=True)
class QatParams:
    """Every number the model uses, in the paper's machine's seconds, typed and validated.

    A dataclass rather than raw profile lookups so that a study or a test can change one cost
    with :func:`dataclasses.replace` (e.g. set CPU costs to nearly zero for a closed-form check)
    and still get the same validation. ``modexp_s`` and ``sw_modexp_s`` are for the reference
    sizes (2048-bit modulus, 1024-bit exponent) and are scaled by :meth:`modexp_time`.
    """

    engines: int
    modexp_s: float
    reference_modulus_bits: int
    reference_exponent_bits: int
    ring_capacity: int
    key_bits: int
    sw_modexp_s: float
    request_s: float
    poll_s: float
    callback_s: float
    thread_switch_s: float
    coroutine_switch_s: float
    paillier_pre_s: float
    paillier_post_s: float
    encryptions: int
    s2_threads: int
    qhcs_coroutines: int
    card_modexp_per_s: float = 0.0
    cpu_scale: float = 1.0
    card_scaling: str = "qat-measured"

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "card_scaling":
                if v not in CARD_SCALINGS:
                    raise ConfigError(f"unknown card scaling {v!r} (choose from {', '.join(CARD_SCALINGS)})")
            elif f.name in _INTS or f.name == "engines":
                check_count(f.name, v)
            elif f.name not in ("card_modexp_per_s",):
                check_positive(f.name, v)

    @classmethod
    def from_profile(cls, profile: Profile, card_scaling: str = "qat-measured") -> QatParams:
        """Derive the model's inputs from the profile's cited, measured and fitted values."""
        raw: dict[str, Any] = {}
        for name, dotted in _INPUTS.items():
            v = profile.value(dotted)
            if name in _INTS:
                if not float(v).is_integer():
                    raise ProfileError(f"{profile.path}: field '{dotted}' must be a whole number, got {v!r}")
                v = int(v)
            raw[name] = v
        try:
            rate = card_modexp_rate(raw["rsa2k_per_s"], raw["ref_rsa1k_per_s"], raw["ref_rsa2k_per_s"], card_scaling)
            k = cpu_scale(raw["paper_sw_encryption_s"], raw["gmp_powm_s"], raw["paillier_pre_s"], raw["paillier_post_s"])
            return cls(
                engines=max(1, round(rate * raw["modexp_latency_s"])), modexp_s=raw["modexp_latency_s"],
                reference_modulus_bits=raw["reference_modulus_bits"], reference_exponent_bits=raw["reference_exponent_bits"],
                ring_capacity=raw["ring_capacity"], key_bits=raw["key_bits"], sw_modexp_s=k * raw["gmp_powm_s"],
                request_s=raw["request_s"], poll_s=k * raw["poll_s"], callback_s=k * raw["callback_s"],
                thread_switch_s=k * raw["thread_switch_s"], coroutine_switch_s=k * raw["coroutine_run_s"] / 2.0,
                paillier_pre_s=k * raw["paillier_pre_s"], paillier_post_s=k * raw["paillier_post_s"],
                encryptions=raw["encryptions"], s2_threads=raw["s2_threads"], qhcs_coroutines=raw["qhcs_coroutines"],
                card_modexp_per_s=rate, cpu_scale=k, card_scaling=card_scaling)
        except ConfigError as exc:
            raise ProfileError(f"{profile.path}: {exc}") from None

    def modexp_time(self, base_s: float, modulus_bits: float, exponent_bits: float) -> float:
        """Scale a reference-size modexp time to other sizes: linear in the exponent's bits
        (square-and-multiply), quadratic in the modulus's (a fixed-width multiplier)."""
        return (base_s * (exponent_bits / self.reference_exponent_bits)
                * (modulus_bits / self.reference_modulus_bits) ** 2)


ProfileLike = Union[Profile, QatParams, str, "os.PathLike[str]", None]


def load_qat_params(profile: ProfileLike = None, card_scaling: str = "qat-measured") -> QatParams:
    """Accept params, a loaded profile, a profile name/path, or ``None`` (built-in DH8970).

    A missing field is reported by the loader with the file and dotted field name.
    """
    if isinstance(profile, QatParams):
        return profile
    if profile is None:
        profile = PROFILE_NAME
    if not isinstance(profile, Profile):
        profile = load_profile(profile, required=REQUIRED_PROFILE_FIELDS)
    else:
        for dotted in REQUIRED_PROFILE_FIELDS:
            profile.value(dotted)  # raises ProfileError naming the missing field
    return QatParams.from_profile(profile, card_scaling)
