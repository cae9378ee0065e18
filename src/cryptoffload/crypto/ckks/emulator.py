"""NOT ENCRYPTION: :class:`EmulatorBackend`, exact float64 slot arithmetic with SEAL's bookkeeping.

Why: packing logic (rotations, masks, level and scale management) can be tested in
milliseconds, and a program that runs here runs on SEAL. Without values (``values=False``) it
is the simulated backend the recording backend runs on when only a program's shape -- its ops,
levels, scales, sizes and keys -- is wanted.
"""

from __future__ import annotations

import math
import os
import struct
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from cryptoffload.crypto.ckks.backend import CheckedBackend, Ciphertext, Plaintext
from cryptoffload.crypto.ckks.bootstrap.driver import rotation_steps
from cryptoffload.crypto.ckks.bootstrap.plan import EPHEMERAL_WEIGHT, BootstrapPlan
from cryptoffload.crypto.ckks.constants import complex_slots
from cryptoffload.crypto.ckks.errors import CkksError
from cryptoffload.checks import JsonDict
from cryptoffload.crypto.ckks.framing import (
    KIND_CIPHERTEXT,
    KIND_NAMES,
    KIND_SECRET,
    galois_steps,
    load_context_header,
    pack_sections,
)
from cryptoffload.crypto.ckks.params import DEFAULT_PARAMS, CkksParams

__all__ = ["EmulatorBackend"]


@dataclass(frozen=True)
class _Emu:
    values: np.ndarray | None   # None: a shape-only emulator keeps no values
    level: int
    scale: float
    size: int = 2


def _apply(fn: Callable[..., np.ndarray], *values: np.ndarray | None) -> np.ndarray | None:
    """``fn(*values)``, or None (no values) when the emulator keeps none."""
    return None if any(v is None for v in values) else fn(*values)


class EmulatorBackend(CheckedBackend):
    """NOT ENCRYPTION. Exact float64 arithmetic on the slot vectors, with CKKS's bookkeeping.

    Why: packing logic (rotations, masks, level and scale management) can be tested in
    milliseconds, and a program that runs here runs on SEAL: levels, scales (the same primes,
    so rescaled scales are bit-identical), sizes, key requirements and refusals are SEAL's.
    Values are kept exactly (no noise), so a result is the ideal CKKS result; an
    :class:`EmulatorBackend` "ciphertext" holds its values in the clear, serialised ones too.
    Difference: the emulator refuses to decrypt a value whose polynomial coefficients overflow
    the modulus at its level (SEAL silently returns garbage there); noise is not modelled.

    ``values=False``: a shape-only emulator, every check and all bookkeeping but no slot
    values (nothing to decrypt, decode or serialise): a program of any size runs in the time
    its Python takes, for its op trace.
    """

    name = "emulator"
    hoists_rotations = False

    def __init__(self, params: CkksParams = DEFAULT_PARAMS, *, insecure_study: bool = False,
                 values: bool = True) -> None:
        super().__init__(params, insecure_study=insecure_study)
        self.keeps_values = bool(values)
        self._roots: np.ndarray | None = None
        self._has_conj = False
        self._ephemeral: int | None = None

    def coefficients(self, values: np.ndarray) -> np.ndarray:
        """The real polynomial whose canonical embedding is ``values`` (unscaled, real or complex):
        slot ``i`` is its value at the primitive ``2N``-th root ``zeta**(3**i mod 2N)``, the
        conjugate root carries the conjugate (SEAL's slot order: generator 3, as in its Galois
        elements). Why:
        overflow in CKKS is a property of these coefficients times the scale, not of the
        slot values (a sparse vector can hold values far larger than a dense one)."""
        n = self.params.poly_modulus_degree
        m = 2 * n
        if self._roots is None:
            roots = np.empty(self.slots, dtype=np.int64)
            r = 1
            for i in range(self.slots):
                roots[i] = r
                r = r * 3 % m
            self._roots = roots
        spectrum = np.zeros(m, dtype=np.complex128)
        spectrum[self._roots] = values
        spectrum[m - self._roots] = np.conj(values)
        return np.fft.fft(spectrum)[:n].real / n

    def _coeff_bits(self, values: np.ndarray, scale: float) -> float:
        peak = float(np.max(np.abs(self.coefficients(values)))) * scale
        return math.log2(peak) if peak > 0 else float("-inf")

    def keygen(self, rotations: Sequence[int] | None = None, relin: bool = True, *, conjugation: bool = False,
               ephemeral_weight: int | None = None) -> None:
        """The key bookkeeping the RNS backends' ``keygen`` makes (no keys: nothing is encrypted)."""
        if self._key_id is not None and not self._has_secret:
            raise CkksError("keygen: a backend from a public context cannot make keys (no secret key)")
        steps = self._normalise_steps(rotations)
        self._key_id = os.urandom(16)
        self._has_secret = True
        self._has_relin = bool(relin)
        self._galois = steps
        self._has_conj = bool(conjugation)
        self._ephemeral = None if ephemeral_weight is None else int(ephemeral_weight)

    @property
    def raise_weight(self) -> int | None:
        """The ephemeral secret's weight ``mod_raise`` would raise under (as the RNS backends')."""
        return self._ephemeral

    def bootstrap_keygen(self, plan: BootstrapPlan) -> None:
        """A shape-only emulator's bookkeeping of a bootstrap's keys (its rotations, conjugation,
        relinearisation, the encapsulation), so that the recording backend can trace a bootstrap
        on it; with values it cannot bootstrap (``mod_raise`` needs a secret key)."""
        if self.keeps_values:
            raise CkksError("bootstrap_setup: the emulator keeps slot values, not a secret key, and cannot bootstrap; "
                            "trace a bootstrap on an emulator with values=False, or run it on gpu-twin")
        self.add_rotation_keys(rotation_steps(plan, self.params.poly_modulus_degree))
        self._has_conj = self._has_relin = True
        if self._ephemeral is None:
            self._ephemeral = EPHEMERAL_WEIGHT

    def _meta(self, obj: Ciphertext | Plaintext) -> tuple[int, float, int]:
        e = obj.raw
        return e.level, e.scale, (e.size if isinstance(obj, Ciphertext) else 1)

    def _out(self, values: np.ndarray | None, level: int, scale: float, size: int = 2) -> Ciphertext:
        return Ciphertext(_Emu(values, level, scale, size), self.fingerprint)

    def _kept(self, e: _Emu, op: str) -> np.ndarray:
        if e.values is None:
            raise CkksError(f"{op}: this emulator keeps no values (values=False: levels, scales and keys only)")
        return e.values

    def encode(self, values: ArrayLike, *, like: Ciphertext | None = None, level: int | None = None,
               scale: float | None = None) -> Plaintext:
        self._need_public("encode")
        lv, sc = self._encode_target(like, level, scale)
        vals = self._values(values)
        # SEAL's encoder check: bits of the largest scaled coefficient vs the modulus bits
        if self.keeps_values and math.ceil(max(self._coeff_bits(vals, sc), 0.0)) >= self._level_bits[lv]:
            raise CkksError(f"encode: encoded values are too large for the {self._level_bits[lv]}-bit modulus "
                            f"at level {lv}")
        return Plaintext(_Emu(vals if self.keeps_values else None, lv, sc, 1), self.fingerprint)

    def encode_complex(self, values: ArrayLike, *, like: Ciphertext | None = None, level: int | None = None,
                       scale: float | None = None) -> Plaintext:
        self._need_public("encode_complex")
        lv, sc = self._encode_target(like, level, scale)
        vals = complex_slots("encode_complex", values, self.slots)
        if self.keeps_values and math.ceil(max(self._coeff_bits(vals, sc), 0.0)) >= self._level_bits[lv]:
            raise CkksError(f"encode_complex: encoded values are too large for the {self._level_bits[lv]}-bit "
                            f"modulus at level {lv}")
        return Plaintext(_Emu(vals if self.keeps_values else None, lv, sc, 1), self.fingerprint)

    def encrypt_complex(self, values: ArrayLike, *, level: int | None = None,
                        scale: float | None = None) -> Ciphertext:
        e = self._own(self.encode_complex(values, level=level, scale=scale), Plaintext, "encrypt")
        return self._out(_apply(np.copy, e.values), e.level, e.scale)

    def encrypt(self, values: ArrayLike, *, level: int | None = None, scale: float | None = None) -> Ciphertext:
        self._need_public("encrypt")
        pt = values if isinstance(values, Plaintext) else self.encode(values, level=level, scale=scale)
        e = self._own(pt, Plaintext, "encrypt")
        return self._out(_apply(np.copy, e.values), e.level, e.scale)

    def decrypt_complex(self, ct: Ciphertext) -> np.ndarray:
        e = self._own(ct, Ciphertext, "decrypt")
        self._need_secret("decrypt")
        values = self._kept(e, "decrypt")
        bits = self._coeff_bits(values, e.scale)
        if bits >= math.log2(math.prod(self.primes[: e.level + 1]) / 2):
            raise CkksError(f"decrypt: a coefficient of 2^{bits:.1f} (values x scale 2^{math.log2(e.scale):.1f}) "
                            f"overflows the {self._level_bits[e.level]}-bit modulus at level {e.level}; real CKKS "
                            "would return garbage: rescale earlier or keep values smaller")
        return values.astype(np.complex128)

    def decrypt(self, ct: Ciphertext) -> np.ndarray:
        return np.ascontiguousarray(self.decrypt_complex(ct).real)

    def decode(self, pt: Plaintext) -> np.ndarray:
        return np.ascontiguousarray(self._kept(self._own(pt, Plaintext, "decode"), "decode").real)

    def add(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        ea, eb = self._summands("add", a, b)
        return self._out(_apply(np.add, ea.values, eb.values), ea.level, ea.scale, max(ea.size, eb.size))

    def sub(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        ea, eb = self._summands("sub", a, b)
        return self._out(_apply(np.subtract, ea.values, eb.values), ea.level, ea.scale, max(ea.size, eb.size))

    def negate(self, a: Ciphertext) -> Ciphertext:
        e = self._own(a, Ciphertext, "negate")
        return self._out(_apply(np.negative, e.values), e.level, e.scale, e.size)

    def add_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        e, p = self._own(ct, Ciphertext, "add_plain"), self._own(pt, Plaintext, "add_plain")
        self._same_level("add_plain", ct, pt)
        self._same_scale("add_plain", ct, pt)
        return self._out(_apply(np.add, e.values, p.values), e.level, e.scale, e.size)

    def sub_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        e, p = self._own(ct, Ciphertext, "sub_plain"), self._own(pt, Plaintext, "sub_plain")
        self._same_level("sub_plain", ct, pt)
        self._same_scale("sub_plain", ct, pt)
        return self._out(_apply(np.subtract, e.values, p.values), e.level, e.scale, e.size)

    def mul_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        e, p = self._own(ct, Ciphertext, "mul_plain"), self._own(pt, Plaintext, "mul_plain")
        lv = self._same_level("mul_plain", ct, pt)
        self._scale_in_bounds("mul_plain", e.scale * p.scale, lv)
        return self._out(_apply(np.multiply, e.values, p.values), lv, e.scale * p.scale, e.size)

    def mul(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        ea, eb = self._own(a, Ciphertext, "mul"), self._own(b, Ciphertext, "mul")
        lv = self._same_level("mul", a, b)
        self._scale_in_bounds("mul", ea.scale * eb.scale, lv)
        return self._out(_apply(np.multiply, ea.values, eb.values), lv, ea.scale * eb.scale, ea.size + eb.size - 1)

    def relinearize(self, ct: Ciphertext) -> Ciphertext:
        e = self._own(ct, Ciphertext, "relinearize")
        self._need_relin("relinearize", ct)
        return self._out(_apply(np.copy, e.values), e.level, e.scale, 2)

    def rescale(self, ct: Ciphertext) -> Ciphertext:
        e = self._own(ct, Ciphertext, "rescale")
        lv = self._rescale_level(ct)
        return self._out(_apply(np.copy, e.values), lv - 1, e.scale / float(self.primes[lv]), e.size)

    def mod_switch_to(self, ct_or_pt: Ciphertext | Plaintext, level: int) -> Ciphertext | Plaintext:
        if isinstance(ct_or_pt, Plaintext):
            p = self._own(ct_or_pt, Plaintext, "mod_switch_to")
            lv = self._target_level(ct_or_pt, level)
            return Plaintext(_Emu(_apply(np.copy, p.values), lv, p.scale, 1), self.fingerprint)
        e = self._own(ct_or_pt, Ciphertext, "mod_switch_to")
        lv = self._target_level(ct_or_pt, level)
        self._scale_in_bounds("mod_switch_to", e.scale, lv)
        return self._out(_apply(np.copy, e.values), lv, e.scale, e.size)

    def rotate(self, ct: Ciphertext, steps: int) -> Ciphertext:
        e = self._own(ct, Ciphertext, "rotate")
        self.rotation_plan(steps)
        self._size2("rotate", ct)
        return self._out(_apply(lambda v: np.roll(v, -int(steps)), e.values), e.level, e.scale, e.size)

    def conjugate(self, ct: Ciphertext) -> Ciphertext:
        e = self._own(ct, Ciphertext, "conjugate")
        self._size2("conjugate", ct)
        if not self._has_conj:
            raise CkksError("conjugate: no conjugation key (keygen(conjugation=True))")
        return self._out(_apply(np.conj, e.values), e.level, e.scale, e.size)

    def mod_raise(self, ct: Ciphertext, level: int | None = None) -> Ciphertext:
        """Shape only: the level goes to ``level`` (default: the top), the scale stays. With
        values it is refused: the ``q_0 I`` a raise adds depends on the secret key and the
        ciphertext's randomness, which an emulator does not have."""
        e = self._own(ct, Ciphertext, "mod_raise")
        target = self._raise_target(ct, level)
        if self.keeps_values:
            raise CkksError("mod_raise: the emulator keeps slot values, not a secret key, and the q_0 I a raise "
                            "adds depends on both; run the program on gpu-twin, or on an emulator with "
                            "values=False for its shape")
        return self._out(None, target, e.scale, e.size)

    def mod_raise_keys(self) -> list[str]:
        return [] if self._ephemeral is None else ["encapsulation:to_sparse", "encapsulation:sparse_to_dense"]

    # -- serialisation ------------------------------------------------------------------------
    def serialize_ciphertext(self, ct: Ciphertext) -> bytes:
        e = self._own(ct, Ciphertext, "serialize_ciphertext")
        values = self._kept(e, "serialize_ciphertext")
        if np.iscomplexobj(values):
            raise CkksError("serialize_ciphertext: the emulator serialises real slot values only")
        return self._frame(KIND_CIPHERTEXT, struct.pack("<BdB", e.level, e.scale, e.size)
                           + values.astype("<f8").tobytes())

    def deserialize_ciphertext(self, data: bytes) -> Ciphertext:
        payload = self._unframe(data, KIND_CIPHERTEXT)
        if len(payload) != 10 + 8 * self.slots:
            raise CkksError("deserialize_ciphertext: malformed emulator ciphertext")
        lv, sc, size = struct.unpack_from("<BdB", payload)
        if lv > self.params.levels or size < 2:
            raise CkksError("deserialize_ciphertext: malformed emulator ciphertext")
        vals = np.frombuffer(payload, dtype="<f8", offset=10).astype(np.float64)
        return self._out(vals, lv, sc, size)

    def _context(self, kind: int) -> bytes:
        self._need_public("public_context")
        if kind == KIND_SECRET:
            self._need_secret("secret_context")
        header: JsonDict = {"params": self.params.to_dict(), "galois": sorted(self._galois.items()), "relin": self._has_relin,
                  "insecure_study": self.insecure_study, "values": self.keeps_values, "conj": self._has_conj,
                  "ephemeral_weight": self._ephemeral}
        return self._frame(kind, pack_sections(header, []))

    @classmethod
    def _from_context(cls, data: bytes, kind: int, insecure_study: bool) -> "EmulatorBackend":
        params, header, _sec, key_id = load_context_header(cls.name, data, kind)
        self = cls(params, insecure_study=insecure_study, values=bool(header.get("values", True)))
        self._key_id = key_id
        self._has_relin = bool(header.get("relin"))
        self._galois = dict(galois_steps(header, KIND_NAMES[kind]))
        self._has_conj = bool(header.get("conj"))
        weight = header.get("ephemeral_weight")
        self._ephemeral = weight if isinstance(weight, int) and not isinstance(weight, bool) else None
        self._has_secret = kind == KIND_SECRET
        return self
