"""The RNS-CKKS backends: ``gpu`` (CuPy) and its CPU twin ``gpu-twin`` -- one class, two array modules.

Both implement :class:`~cryptoffload.crypto.ckks.CkksBackend` with the checks of the SEAL
adapter (:class:`~cryptoffload.crypto.ckks.CheckedBackend`: ownership, levels, scales, keys,
the same refusals with the same messages), over :class:`~.scheme.RnsScheme`. A program that
runs on SEAL runs here unchanged; levels and (for levels of at most 31 bits) scales are SEAL's
exactly, since the primes are SEAL's (:mod:`.chain`).

Security: parameters must be within the bound for 128-bit security with a uniform ternary
secret (:data:`~cryptoffload.crypto.ckks.CKKS_SECURITY_BITS`: the Homomorphic Encryption
Standard's Table 1 to N = 32768 -- log QP <= 27, 54, 109, 218, 438, 881 bits -- and the security
guidelines' 1747 bits at N = 2^16), counting the special primes, unless ``insecure_study=True``.
The main secret is uniform ternary; a sparse one exists only for the mod-raise, under a key of
small modulus (:mod:`.sparse`). Secrets come from ``os.urandom`` (:mod:`.sampling`).

Bootstrapping's parts (issue 33): complex slots (``encode_complex``, ``encrypt_complex``,
``decrypt_complex``), constants at a chosen scale (``mul_const``, ``add_const``), conjugation,
``mod_raise`` with the sparse-secret encapsulation (``keygen(ephemeral_weight=32)``), and a
special modulus of several primes whose size sets the key-switching digits (``dnum``,
:func:`~.dnum.params_for_dnum`).

Interoperability: both backends write the same frame format (each with its own name in the
backend field) and each reads the other's, so a ciphertext or context made by the twin loads
on the GPU and back.

Sizes (``ciphertext_bytes`` etc.) count the in-memory representation: 8-byte words, one per
residue and physical prime (a 60-bit logical prime is two words). Serialised objects use
4-byte words.
"""

from __future__ import annotations

import math
from typing import Callable, Hashable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from cryptoffload.crypto.ckks.backend import CheckedBackend, Ciphertext, Plaintext
from cryptoffload.crypto.ckks.bootstrap.capable import Bootstraps
from cryptoffload.crypto.ckks.bootstrap.driver import rotation_steps
from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan
from cryptoffload.crypto.ckks.constants import complex_slots, constant_scale, rounded, slot_constant
from cryptoffload.crypto.ckks.errors import CkksError
from cryptoffload.crypto.ckks.framing import (
    KIND_CIPHERTEXT,
    KIND_NAMES,
    KIND_PLAINTEXT,
    KIND_PUBLIC,
    KIND_SECRET,
    pack_sections,
    peek_context,
    unpack_frame,
    unpack_sections,
)
from cryptoffload.crypto.ckks.params import DEFAULT_PARAMS, CkksParams
from cryptoffload.crypto.ckks.gpu import context, hoisted, modraise, serial, sparse
from cryptoffload.crypto.ckks.gpu.dnum import KEY_WORD, MEMORY_WORD, key_bytes
from cryptoffload.crypto.ckks.gpu.device import array_module
from cryptoffload.crypto.ckks.gpu.encoder import MAX_COEFF
from cryptoffload.crypto.ckks.gpu.chain import prime_chain
from cryptoffload.crypto.ckks.gpu.capture import Captured, capture
from cryptoffload.crypto.ckks.gpu.kernelset import Array
from cryptoffload.crypto.ckks.gpu.keystore import EvalKeys
from cryptoffload.crypto.ckks.gpu.scheme import RawCt, RawPt, RnsScheme, SecretKey
from cryptoffload.errors import ConfigError

#: The backends whose frames are the same format (each writes its own name, each reads both).
FRAME_NAMES = ("gpu-twin", "gpu")
#: ciphertexts per batched launch of the batched ops: a key switch's digits of 128 ciphertexts
#: at the HE-CNN's parameters are ~1 GB of device memory
BATCH = 128


class RnsCkksBackend(Bootstraps, CheckedBackend):
    """Leveled RNS-CKKS on NumPy (this class: the CPU twin, ``gpu-twin``) or CuPy
    (:class:`GpuCkksBackend`, ``gpu``). ``kernels`` picks the kernel set (:mod:`.arith`)."""

    name = "gpu-twin"
    hoists_rotations = True
    slot_generator = 5      # the encoder's rotation group (HEAAN's): gpu/encoder.py
    array_kind = "numpy"

    def __init__(self, params: CkksParams = DEFAULT_PARAMS, *, insecure_study: bool = False,
                 kernels: str | None = None) -> None:
        xp = array_module(self.array_kind)  # first: a missing GPU is the one-line reason
        super().__init__(params, insecure_study=insecure_study)
        self.chain = prime_chain(params.poly_modulus_degree, params.coeff_mod_bits)
        if self.chain.total_bits > params.total_bits:  # pragma: no cover - chain.py keeps each group below 2**bits
            raise ConfigError("the physical primes exceed the parameters' modulus bits")
        self.primes = self.chain.logical
        self._level_bits = [math.prod(self.primes[: lv + 1]).bit_length() for lv in range(params.levels + 1)]
        self.scheme = RnsScheme(self.chain, xp, kernels)
        self.xp = xp
        self._sk: SecretKey | None = None
        self._pk: Array | None = None
        #: relinearisation ("relin"), Galois (("galois", step)), conjugation ("conj") and the
        #: encapsulation's sparse_to_dense keys
        self._keys = EvalKeys(self.scheme.ar)
        self._encapsulation: sparse.Encapsulation | None = None

    @property
    def kernels(self) -> str:
        return self.scheme.ar.kernels

    @property
    def kernel_launches(self) -> int | None:
        """Kernel launches this backend has issued so far, on the GPU or -- with the ``cuda-host``
        kernel set, the twin's default -- the launches the GPU would issue for the same work
        (None for the numba and reference kernel sets)."""
        return self.scheme.ar.launches

    def capture(self, fn: Callable[..., object], *examples: Ciphertext) -> Captured:
        """``fn`` (ciphertexts -> ciphertext(s), run on this backend) captured once on
        ``examples`` and replayed for new inputs of the same level, scale and size: a CUDA graph
        on the GPU, the recorded launches on the twin (:mod:`.capture`)."""
        return capture(self, fn, examples)

    def synchronize(self) -> None:
        """Wait until the device has finished the work queued so far (GPU kernels run
        asynchronously: a timer must stop after this); nothing to wait for on the CPU."""
        if self.array_kind == "cupy":
            self.xp.cuda.get_current_stream().synchronize()

    # -- keys ----------------------------------------------------------------------------------
    def keygen(self, rotations: Sequence[int] | None = None, relin: bool = True, *,
               conjugation: bool = False, ephemeral_weight: int | None = None) -> None:
        """Secret, public, relinearisation and Galois keys (``None``: power-of-two steps), the
        conjugation key if asked, and the sparse-secret encapsulation's keys for an ephemeral
        secret of Hamming weight ``ephemeral_weight`` (:meth:`add_encapsulation_keys`); a new
        key id (ciphertexts of older keys are refused)."""
        if self._key_id is not None and not self._has_secret:
            raise CkksError("keygen: a backend from a public context cannot make keys (no secret key)")
        steps = self._normalise_steps(rotations)
        s = self.scheme
        self._wipe_secret()
        self._sk = s.gen_secret()
        pk = self._pk = s.gen_public(self._sk)
        self._key_id = self.key_set_id(serial.residues_to_bytes(s.ar.to_host(pk)))
        self._has_secret = True
        self._keys.clear()
        self._encapsulation = None
        if relin:
            self._keys.put("relin", s.gen_relin(self._sk))
        self._has_relin = bool(relin)
        self._galois = {}
        self._add_galois(steps)
        if conjugation:
            self._keys.put("conj", s.gen_galois(self._sk, s.conj_elt), s.conj_elt)
        if ephemeral_weight is not None:
            self.add_encapsulation_keys(ephemeral_weight)

    def add_encapsulation_keys(self, weight: int = sparse.EPHEMERAL_WEIGHT) -> None:
        """The sparse-secret encapsulation (:mod:`.sparse`): an ephemeral secret of Hamming
        weight ``weight``, its to_sparse key (level 0, small modulus) and sparse_to_dense key
        (the whole chain), after which the ephemeral secret is wiped. :meth:`mod_raise` then
        raises under it (``|I| <= (weight + 1) / 2``). Refused where the to_sparse key's modulus
        is beyond what a weight-32 secret is known to protect, unless ``insecure_study``."""
        self._need_secret("add_encapsulation_keys")
        assert self._sk is not None
        if isinstance(weight, bool) or not isinstance(weight, (int, np.integer)) or not 0 < weight <= self.slots:
            raise CkksError(f"add_encapsulation_keys: the ephemeral weight must be 1 to {self.slots}, got {weight!r}")
        ring = self.scheme.ring
        basis = sparse.encapsulation_basis(ring)
        if not self.insecure_study and not sparse.is_secure(ring, basis, int(weight)):
            raise CkksError(f"add_encapsulation_keys: a weight-{weight} secret under a "
                            f"{sparse.key_modulus_bits(ring, basis)}-bit key at N = {ring.n} is not known to be "
                            f"128-bit secure (needs weight >= {sparse.EPHEMERAL_WEIGHT}, N >= {sparse.SECURE_MIN_N} "
                            f"and at most {sparse.SECURE_KEY_BITS} bits: q_0 and one special prime); "
                            "pass insecure_study=True for a study")
        enc, back, ephemeral = sparse.gen_encapsulation(self.scheme, self._sk, int(weight))
        ephemeral.wipe()
        self._keys.put(sparse.SPARSE_TO_DENSE, back)
        self._encapsulation = enc

    def bootstrap_keygen(self, plan: BootstrapPlan) -> None:
        """The keys a bootstrap with ``plan`` uses that this key set lacks: its rotations
        (:func:`~cryptoffload.crypto.ckks.bootstrap.driver.rotation_steps`), conjugation,
        relinearisation and the sparse-secret encapsulation (weight 32)."""
        self._need_secret("bootstrap_setup")
        assert self._sk is not None
        steps = self._normalise_steps(rotation_steps(plan, self.params.poly_modulus_degree))
        new = [k for k in steps if k not in self._galois]
        more = len(new) + ("conj" not in self._keys) + (not self._has_relin) + (self._encapsulation is None)
        ring = self.scheme.ring
        self._keys.reserve(more, (len(ring.digits), 2, ring.rows, ring.n))   # no key held twice
        self._add_galois({k: steps[k] for k in new})
        if "conj" not in self._keys:
            self._keys.put("conj", self.scheme.gen_galois(self._sk, self.scheme.conj_elt), self.scheme.conj_elt)
        if not self._has_relin:
            self._keys.put("relin", self.scheme.gen_relin(self._sk))
            self._has_relin = True
        if self._encapsulation is None:
            self.add_encapsulation_keys()

    def _add_galois(self, steps: dict[int, str]) -> None:
        """A Galois key for each of ``steps``, put beside the keys already made."""
        assert self._sk is not None
        for step, name in steps.items():
            elt = self.scheme.galois_elt(step)
            self._keys.put(("galois", step), self.scheme.gen_galois(self._sk, elt), elt)
            self._galois[step] = name

    # -- the secret key's lifetime ------------------------------------------------------------------
    def _wipe_secret(self) -> None:
        sk, self._sk = getattr(self, "_sk", None), None
        if sk is not None:
            sk.wipe()

    def close(self) -> None:
        """Overwrite the secret key (its host coefficients and its device copy) with zeros and
        drop it: decryption is refused afterwards; public keys and evaluation still work. Also
        done when the backend is collected, and by ``with``."""
        self._wipe_secret()
        self._has_secret = False

    def __enter__(self) -> "RnsCkksBackend":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self._wipe_secret()
        except Exception:  # noqa: BLE001 - at interpreter exit the device may be gone already
            pass

    # -- bookkeeping -----------------------------------------------------------------------------
    def _meta(self, obj: Ciphertext | Plaintext) -> tuple[int, float, int]:
        raw = obj.raw
        return raw.level, raw.scale, (raw.size if isinstance(obj, Ciphertext) else 1)

    def _ct(self, raw: RawCt) -> Ciphertext:
        return Ciphertext(raw, self.fingerprint)

    def ciphertext_bytes(self, ct: Ciphertext) -> int:
        self._own(ct, Ciphertext, "ciphertext_bytes")
        lv, _, size = self._meta(ct)
        return size * self.chain.limbs(lv) * self.params.poly_modulus_degree * MEMORY_WORD

    def plaintext_bytes(self, pt: Plaintext) -> int:
        self._own(pt, Plaintext, "plaintext_bytes")
        return self.chain.limbs(self._meta(pt)[0]) * self.params.poly_modulus_degree * MEMORY_WORD

    def key_bytes(self) -> dict[str, int]:
        """In-memory sizes of the evaluation keys (digits x 2 x all rows x N words of 4 bytes; the
        compact to_sparse key over its own rows)."""
        one = key_bytes(self.chain)
        out: dict[str, int] = {}
        if self._has_relin:
            out["relin"] = one
        for name in self._galois.values():
            out[name] = one
        if "conj" in self._keys:
            out["conj"] = one
        enc = self._encapsulation
        if enc is not None:
            out["encapsulation:to_sparse"] = int(enc.to_sparse.size) * KEY_WORD
            out["encapsulation:sparse_to_dense"] = one
        return out

    @property
    def dnum(self) -> int:
        """Key-switching digits at the top level (:mod:`.dnum`)."""
        return len(self.chain.digits())

    @property
    def raise_weight(self) -> int | None:
        """Hamming weight of the secret :meth:`mod_raise` raises under: the ephemeral one's
        (``|I| <= (h + 1) / 2``), or None for the dense main secret (uniform ternary)."""
        return None if self._encapsulation is None else self._encapsulation.weight

    # -- encoding --------------------------------------------------------------------------------
    def _encode_raw_check(self, coeffs: np.ndarray, level: int) -> None:
        peak = float(np.max(np.abs(coeffs))) if coeffs.size else 0.0
        bits = math.log2(peak) if peak >= 1 else 0.0
        if not peak < MAX_COEFF or math.ceil(bits) >= self._level_bits[level]:
            raise CkksError(f"encode: encoded values are too large for the {self._level_bits[level]}-bit modulus "
                            f"at level {level}")

    def _encode_raw(self, vals: np.ndarray, level: int, scale: float) -> RawPt:
        coeffs = self.scheme.coefficients(vals, scale)
        self._encode_raw_check(coeffs, level)
        return self.scheme.encode_coefficients(coeffs, level, scale)

    def encode(self, values: ArrayLike, *, like: Ciphertext | None = None, level: int | None = None,
               scale: float | None = None) -> Plaintext:
        self._need_public("encode")
        lv, sc = self._encode_target(like, level, scale)
        return Plaintext(self._encode_raw(self._values(values), lv, sc), self.fingerprint)

    def encrypt(self, values: ArrayLike, *, level: int | None = None, scale: float | None = None) -> Ciphertext:
        """Public-key encryption of ``values`` (or of a :class:`Plaintext`)."""
        self._need_public("encrypt")
        pt = values if isinstance(values, Plaintext) else self.encode(values, level=level, scale=scale)
        raw = self._own(pt, Plaintext, "encrypt")
        return self._ct(self.scheme.encrypt(raw, self._public_key()))

    def decrypt(self, ct: Ciphertext) -> np.ndarray:
        raw = self._own(ct, Ciphertext, "decrypt")
        self._need_secret("decrypt")
        assert self._sk is not None
        return np.ascontiguousarray(self.scheme.decrypt(raw, self._sk).real)

    def decrypt_complex(self, ct: Ciphertext) -> np.ndarray:
        """The complex slots (conjugation acts on their imaginary parts)."""
        raw = self._own(ct, Ciphertext, "decrypt")
        self._need_secret("decrypt")
        assert self._sk is not None
        return self.scheme.decrypt(raw, self._sk)

    def encode_complex(self, values: ArrayLike, *, like: Ciphertext | None = None, level: int | None = None,
                       scale: float | None = None) -> Plaintext:
        """Complex slot values at any level and scale (a scalar fills every slot)."""
        self._need_public("encode_complex")
        lv, sc = self._encode_target(like, level, scale)
        return Plaintext(self._encode_raw(complex_slots("encode_complex", values, self.slots), lv, sc),
                         self.fingerprint)

    def encode_for_rotations(self, values: ArrayLike, *, level: int, scale: float) -> Plaintext:
        """Complex slot values over the level's rows and ``P``'s, as 32-bit words: a plaintext
        :meth:`baby_giant_sums` multiplies rotations by before their ModDown (:mod:`.hoisted`)."""
        self._need_public("encode_for_rotations")
        lv, sc = self._encode_target(None, level, scale)
        coeffs = self.scheme.coefficients(complex_slots("encode_for_rotations", values, self.slots), sc)
        self._encode_raw_check(coeffs, lv)
        return Plaintext(hoisted.extended_plaintext(self.scheme, coeffs, lv, sc), self.fingerprint)

    def baby_giant_sums(self, ct: Ciphertext, steps: Sequence[int],
                        rows: Sequence[Sequence[Plaintext | None]]) -> list[Ciphertext]:
        """The inner sums of a BSGS product with one decomposition of ``ct`` and one ModDown per
        row (double hoisting, :mod:`.hoisted`), when every plaintext is from
        :meth:`encode_for_rotations` and every step has a key of its own; else the interface's."""
        raw = self._own(ct, Ciphertext, "rotate_many")
        self._size2("rotate_many", ct)
        plans = [self.rotation_plan(s) for s in steps]
        groups = [[(j, pt) for j, pt in enumerate(row) if pt is not None] for row in rows]
        raws = [[(j, self._with_plain("mul_plain", ct, pt, False)[1]) for j, pt in g] for g in groups]
        if any(len(p) > 1 for p in plans) or not all(hoisted.is_extended(self.scheme, p) for g in raws for _, p in g):
            return super().baby_giant_sums(ct, steps, rows)
        for g in raws:
            for _, p in g[1:]:
                self._scales_agree("add", g[0][1].scale, p.scale)
        elts_keys = [self._key_of(p[0]) if p else None for p in plans]
        return [self._ct(r) for r in hoisted.product_sums(self.scheme, raw, elts_keys, raws, self._keys)]

    def encrypt_complex(self, values: ArrayLike, *, level: int | None = None, scale: float | None = None) -> Ciphertext:
        """Encrypt complex slot values (the interface's ``encrypt`` takes real ones)."""
        self._need_public("encrypt")
        pt = self.encode_complex(values, level=level, scale=scale)
        return self._ct(self.scheme.encrypt(pt.raw, self._public_key()))

    def decode(self, pt: Plaintext) -> np.ndarray:
        raw = self._own(pt, Plaintext, "decode")
        return np.ascontiguousarray(self.scheme.decode_poly(raw.data, raw.level, raw.scale).real)

    # -- arithmetic ------------------------------------------------------------------------------
    def add(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        return self._ct(self.scheme.add(*self._summands("add", a, b)))

    def sub(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        return self._ct(self.scheme.sub(*self._summands("sub", a, b)))

    def negate(self, a: Ciphertext) -> Ciphertext:
        return self._ct(self.scheme.negate(self._own(a, Ciphertext, "negate")))

    def _with_plain(self, op: str, ct: Ciphertext, pt: Plaintext, same_scale: bool) -> tuple[RawCt, RawPt]:
        rc, rp = self._own(ct, Ciphertext, op), self._own(pt, Plaintext, op)
        lv = self._same_level(op, ct, pt)
        if same_scale:
            self._same_scale(op, ct, pt)
        else:
            self._scale_in_bounds(op, rc.scale * rp.scale, lv)
        return rc, rp

    def add_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        return self._ct(self.scheme.add_plain(*self._with_plain("add_plain", ct, pt, True)))

    def sub_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        return self._ct(self.scheme.sub_plain(*self._with_plain("sub_plain", ct, pt, True)))

    def mul_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        return self._ct(self.scheme.mul_plain(*self._with_plain("mul_plain", ct, pt, False)))

    def mul(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        ra, rb = self._own(a, Ciphertext, "mul"), self._own(b, Ciphertext, "mul")
        lv = self._same_level("mul", a, b)
        self._scale_in_bounds("mul", ra.scale * rb.scale, lv)
        self._size2("mul", a)
        self._size2("mul", b)
        return self._ct(self.scheme.mul(ra, rb))

    # -- constants and mod-raise: bootstrapping's parts -------------------------------------------
    def mul_const(self, ct: Ciphertext, value: complex, *, scale: float | None = None) -> Ciphertext:
        """``ct`` times ``value`` encoded at ``scale`` (see the interface): one constant per prime
        for the real part, and a product with the NTT form of ``X**(N/2)`` for the imaginary part,
        with no plaintext made."""
        raw = self._own(ct, Ciphertext, "mul_const")
        c = slot_constant("mul_const", value)
        sc = constant_scale("mul_const", scale, self.params.scale)
        self._scale_in_bounds("mul_const", raw.scale * sc, raw.level)
        re, im = rounded("mul_const", c, sc, self._level_bits[raw.level])
        return self._ct(self.scheme.mul_const(raw, re, im, sc))

    def add_const(self, ct: Ciphertext, value: complex) -> Ciphertext:
        """``ct`` plus ``value`` in every slot, at the ciphertext's scale."""
        raw = self._own(ct, Ciphertext, "add_const")
        c = slot_constant("add_const", value)
        re, im = rounded("add_const", c, raw.scale, self._level_bits[raw.level])
        return self._ct(self.scheme.add_const(raw, re, im))

    def mod_raise(self, ct: Ciphertext, level: int | None = None) -> Ciphertext:
        """Bootstrapping's first step (see the interface; :mod:`.modraise`). With encapsulation
        keys (:meth:`add_encapsulation_keys`): switch to the sparse secret at level 0, raise,
        switch back at ``level``, so ``|I| <= (h + 1) / 2`` for the ephemeral weight ``h``;
        without: raised under the main secret (``|I|`` about ``sqrt(N / 18)`` typically, at
        most ``(h + 1) / 2`` for its ~2N/3 non-zero coefficients)."""
        raw = self._own(ct, Ciphertext, "mod_raise")
        target = self._raise_target(ct, level)
        enc = self._encapsulation
        if enc is None:
            return self._ct(modraise.mod_raise(self.scheme, raw, target))
        raised = modraise.mod_raise(self.scheme, sparse.to_sparse(self.scheme, raw, enc), target)
        return self._ct(sparse.to_dense(self.scheme, raised, self._keys))

    def mod_raise_keys(self) -> list[str]:
        return [] if self._encapsulation is None else ["encapsulation:to_sparse", "encapsulation:sparse_to_dense"]

    # -- batched ops: one launch per step for the whole batch (crypto/ckks/batched.py) -------------
    def mul_plain_sum(self, terms: Sequence[tuple[Ciphertext, Plaintext]]) -> Ciphertext:
        """``sum_i ct_i * pt_i`` in one pass (one launch per 16 terms): each term checked as
        ``mul_plain`` checks it, and the products' levels and scales as ``add`` does."""
        terms = list(terms)
        if not terms:
            raise CkksError("mul_plain_sum: no terms")
        raws = [self._with_plain("mul_plain", ct, pt, False) for ct, pt in terms]
        first_ct, (rc0, rp0) = terms[0][0], raws[0]
        for (ct, _), (rc, rp) in zip(terms, raws):
            self._same_level("add", first_ct, ct)
            self._scales_agree("add", rc0.scale * rp0.scale, rc.scale * rp.scale)
            if rc.size != rc0.size:
                return super().mul_plain_sum(terms)
        return self._ct(self.scheme.mul_plain_sum(raws))

    def rescale_many(self, cts: Sequence[Ciphertext]) -> list[Ciphertext]:
        """Ciphertexts of one level and size rescaled in batches of :data:`BATCH` (others one by one)."""
        raws = [self._own(c, Ciphertext, "rescale") for c in cts]
        levels = [self._rescale_level(c) for c in cts]
        if not raws or len({(r.level, r.size) for r in raws}) > 1:
            return super().rescale_many(cts)
        divisors = [float(self.primes[lv]) for lv in levels]
        out: list[Ciphertext] = []
        for i in range(0, len(raws), BATCH):
            out += [self._ct(r) for r in self.scheme.rescale_many(raws[i:i + BATCH], divisors[i:i + BATCH])]
        return out

    def squares(self, cts: Sequence[Ciphertext]) -> list[Ciphertext]:
        """The square activation, :data:`BATCH` ciphertexts at a time: their products, one batched
        relinearisation, one batched rescale."""
        cts = list(cts)
        out: list[Ciphertext] = []
        for i in range(0, len(cts), BATCH):
            out += self.rescale_many(self.relinearize_many([self.mul(c, c) for c in cts[i:i + BATCH]]))
        return out

    def relinearize_many(self, cts: Sequence[Ciphertext]) -> list[Ciphertext]:
        """Size-3 ciphertexts of one level relinearised in batches of :data:`BATCH` (one batched
        key switch each); others one by one."""
        raws = [self._own(c, Ciphertext, "relinearize") for c in cts]
        for c in cts:
            self._need_relin("relinearize", c)
        if not raws or len({r.level for r in raws}) > 1:
            return super().relinearize_many(cts)
        out: list[Ciphertext] = []
        for i in range(0, len(raws), BATCH):
            out += [self._ct(r) for r in self.scheme.relinearize_many(raws[i:i + BATCH], self._keys)]
        return out

    def rotate_each(self, cts: Sequence[Ciphertext], steps: Sequence[int]) -> list[Ciphertext]:
        """Each ciphertext rotated by its own step; the steps with a key of their own (at one
        level) in one batched key switch, a composed step key by key, a step of 0 unchanged."""
        cts, steps = list(cts), list(steps)
        raws = [self._own(c, Ciphertext, "rotate") for c in cts]
        plans = [self.rotation_plan(s) for s in steps]
        for c in cts:
            self._size2("rotate", c)
        out: list[Ciphertext] = list(cts)
        batch = [i for i, p in enumerate(plans) if len(p) == 1 and raws[i].level == raws[0].level]
        if batch:
            done = self.scheme.automorphisms_each([raws[i] for i in batch], [self._key_of(plans[i][0]) for i in batch],
                                                  self._keys)
            for i, r in zip(batch, done):
                out[i] = self._ct(r)
        for i, p in enumerate(plans):
            if p and i not in batch:
                out[i] = self.rotate(cts[i], steps[i])
        return out

    def mul_scalar_sums(self, cts: Sequence[Ciphertext], weights: ArrayLike,
                        name: str = "w") -> list[Ciphertext | None]:
        """A dense layer of scalar weights in one launch: the constants are what encoding each
        weight at the default scale gives (see the interface), without encoding 10^5 of them on
        the host. Inputs of several levels, scales or sizes, or weights too large to encode,
        go the interface's way (one by one, with its refusals)."""
        cts = list(cts)
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim != 2 or w.shape[1] != len(cts) or not cts or not np.all(np.isfinite(w)):
            raise CkksError(f"mul_scalar_sums: weights must be a finite matrix with {len(cts)} columns (one per "
                            f"ciphertext), got shape {w.shape}")
        raws = [self._own(c, Ciphertext, "mul_plain") for c in cts]
        lv, sc = raws[0].level, self.params.scale
        peak = float(np.max(np.abs(w))) * sc
        if len({(r.level, r.size, r.scale) for r in raws}) > 1 or (peak >= 1 and math.ceil(math.log2(peak)) >=
                                                                    self._level_bits[lv]) or peak >= 2.0 ** 62:
            return super().mul_scalar_sums(cts, weights, name)
        self._encode_target(None, lv, None)
        self._scale_in_bounds("mul_plain", raws[0].scale * sc, lv)
        done = self.scheme.mul_scalar_sums(raws, w, sc)
        return [self._ct(d) if np.any(row != 0) else None for row, d in zip(w, done)]

    def add_many(self, cts: Sequence[Ciphertext]) -> Ciphertext:
        """The sum of ciphertexts of one level, scale and size in one pass (one launch per 16)."""
        cts = list(cts)
        raws = [self._own(c, Ciphertext, "add") for c in cts]
        for c in cts[1:]:
            self._same_level("add", cts[0], c)
            self._same_scale("add", cts[0], c)
        if len({r.size for r in raws}) > 1:
            return super().add_many(cts)
        return self._ct(self.scheme.add_many(raws))

    def relinearize(self, ct: Ciphertext) -> Ciphertext:
        raw = self._own(ct, Ciphertext, "relinearize")
        self._need_relin("relinearize", ct)
        return self._ct(self.scheme.relinearize(raw, self._keys))

    def rescale(self, ct: Ciphertext) -> Ciphertext:
        raw = self._own(ct, Ciphertext, "rescale")
        lv = self._rescale_level(ct)
        return self._ct(self.scheme.rescale(raw, float(self.primes[lv])))

    def mod_switch_to(self, ct_or_pt: Ciphertext | Plaintext, level: int) -> Ciphertext | Plaintext:
        if isinstance(ct_or_pt, Plaintext):
            raw_pt = self._own(ct_or_pt, Plaintext, "mod_switch_to")
            return Plaintext(self.scheme.drop_to(raw_pt, self._target_level(ct_or_pt, level)), self.fingerprint)
        raw = self._own(ct_or_pt, Ciphertext, "mod_switch_to")
        lv = self._target_level(ct_or_pt, level)
        self._scale_in_bounds("mod_switch_to", raw.scale, lv)
        return self._ct(self.scheme.drop_to(raw, lv))

    # -- rotations -------------------------------------------------------------------------------
    def _public_key(self) -> Array:
        """The public key (keygen or a context made it; the ops that encrypt check that first)."""
        if self._pk is None:
            raise CkksError("encrypt: no keys yet; call keygen() first")
        return self._pk

    def _key_of(self, name: str) -> tuple[int, Hashable]:
        """(Galois element, key-store name) of the Galois key ``name`` (``galois:<step>``)."""
        step = int(name.split(":", 1)[1]) % self.slots
        return self.scheme.galois_elt(step), ("galois", step)

    def rotate(self, ct: Ciphertext, steps: int) -> Ciphertext:
        raw = self._own(ct, Ciphertext, "rotate")
        plan = self.rotation_plan(steps)
        self._size2("rotate", ct)
        if not plan:
            return self._ct(RawCt(raw.data.copy(), raw.level, raw.scale))
        for name in plan:
            raw = self.scheme.automorphism(raw, *self._key_of(name), self._keys)
        return self._ct(raw)

    def rotate_many(self, ct: Ciphertext, steps: Sequence[int]) -> list[Ciphertext]:
        """Hoisted: the steps with a key of their own share one decomposition of the input;
        a composed step (no key of its own) is rotated key by key."""
        raw = self._own(ct, Ciphertext, "rotate_many")
        steps = list(steps)
        plans = [self.rotation_plan(s) for s in steps]
        self._size2("rotate_many", ct)
        direct = [i for i, p in enumerate(plans) if len(p) == 1]
        out: list[Ciphertext | None] = [None] * len(steps)
        if direct:
            rots = self.scheme.automorphisms_hoisted(raw, [self._key_of(plans[i][0]) for i in direct], self._keys)
            for i, r in zip(direct, rots):
                out[i] = self._ct(r)
        for i, s in enumerate(steps):
            if out[i] is None:
                out[i] = self.rotate(ct, s)
        return [c for c in out if c is not None]

    def conjugate(self, ct: Ciphertext) -> Ciphertext:
        """Complex conjugation of the slots (the identity on real values)."""
        raw = self._own(ct, Ciphertext, "conjugate")
        self._size2("conjugate", ct)
        if "conj" not in self._keys:
            raise CkksError("conjugate: no conjugation key (keygen(conjugation=True))")
        return self._ct(self.scheme.automorphism(raw, self.scheme.conj_elt, "conj", self._keys))

    # -- serialisation ---------------------------------------------------------------------------
    @classmethod
    def _writer(cls, data: bytes) -> str:
        """The frame's backend name if it is one of :data:`FRAME_NAMES` (read as ours), else
        our own name (so the frame check names the foreign backend)."""
        try:
            name = peek_context(data)[0]
        except CkksError:
            return cls.name
        return name if name in FRAME_NAMES else cls.name

    def _unframe(self, data: bytes, kind: int) -> bytes:
        return unpack_frame(data, kind, self._writer(data), self.params.digest(), self.key_id)[0]

    def _host(self, a: Array) -> np.ndarray:
        return self.scheme.ar.to_host(a)

    def serialize_ciphertext(self, ct: Ciphertext) -> bytes:
        raw = self._own(ct, Ciphertext, "serialize_ciphertext")
        return self._frame(KIND_CIPHERTEXT, serial.pack_object(raw.level, raw.scale, self._host(raw.data)))

    def _load_object(self, data: bytes, kind: int, what: str, sizes: tuple[int, ...]) -> tuple[int, float, Array]:
        payload = self._unframe(data, kind)
        lv, sc, arr = serial.unpack_object(payload, what, self.params.poly_modulus_degree, self.params.levels,
                                           self.chain.limbs, self.scheme.ring.q, sizes)
        return lv, sc, self.xp.asarray(arr)

    def deserialize_ciphertext(self, data: bytes) -> Ciphertext:
        lv, sc, arr = self._load_object(data, KIND_CIPHERTEXT, "ciphertext", (2, 3))
        return self._ct(RawCt(arr, lv, sc))

    def serialize_plaintext(self, pt: Plaintext) -> bytes:
        raw = self._own(pt, Plaintext, "serialize_plaintext")
        return self._frame(KIND_PLAINTEXT, serial.pack_object(raw.level, raw.scale, self._host(raw.data)))

    def deserialize_plaintext(self, data: bytes) -> Plaintext:
        lv, sc, arr = self._load_object(data, KIND_PLAINTEXT, "plaintext", (1,))
        return Plaintext(RawPt(arr[0], lv, sc), self.fingerprint)

    def _context(self, kind: int) -> bytes:
        self._need_public("public_context")
        header, sections = context.sections(self, kind)
        return self._frame(kind, pack_sections(header, sections))

    @classmethod
    def _from_context(cls, data: bytes, kind: int, insecure_study: bool,
                      kernels: str | None = None) -> "RnsCkksBackend":
        """Rebuild from a context frame; every key is checked (lengths, residues below their
        primes, the key id against the public key, the secret key against the public key)."""
        payload, key_id, pd = unpack_frame(data, kind, cls._writer(data), None, None)
        what = KIND_NAMES[kind]
        header, sec = unpack_sections(payload, what)
        params = CkksParams.from_dict(header.get("params"))
        if params.digest() != pd:
            raise CkksError(f"serialised {what}: its parameters do not match its header")
        self = cls(params, insecure_study=insecure_study, kernels=kernels)
        if "public" not in sec or (kind == KIND_SECRET and "secret" not in sec):
            raise CkksError(f"serialised {what} lacks its keys")
        if cls.key_set_id(sec["public"]) != key_id:
            raise CkksError(f"serialised {what}: the public key does not match the key id")
        context.load_keys(self, header, sec, what)
        self._key_id = key_id
        if kind == KIND_SECRET:
            context.load_secret(self, sec["secret"], what)
        return self

    @classmethod
    def from_public_context(cls, data: bytes, *, insecure_study: bool = False,
                            kernels: str | None = None) -> "RnsCkksBackend":
        """A server-side backend: evaluates and encrypts, cannot decrypt."""
        return cls._from_context(data, KIND_PUBLIC, insecure_study, kernels)

    @classmethod
    def from_secret_context(cls, data: bytes, *, insecure_study: bool = False,
                            kernels: str | None = None) -> "RnsCkksBackend":
        return cls._from_context(data, KIND_SECRET, insecure_study, kernels)


class GpuCkksBackend(RnsCkksBackend):
    """The same scheme on a CUDA GPU through CuPy (kernels in ``kernels.cu``)."""

    name = "gpu"
    array_kind = "cupy"
