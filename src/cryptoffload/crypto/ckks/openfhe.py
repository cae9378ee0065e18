"""CKKS on OpenFHE: :class:`OpenFheBackend`, the optional second adapter of :class:`CkksBackend`.

Where it runs. OpenFHE's Python wheels (``openfhe==1.6.1.0.22.4``, BSD-2) import on Python
3.10 only on this machine (the 3.12 build needs a newer libstdc++ than Debian 12 has; there is
no 3.11 build), while the package itself targets 3.11. So OpenFHE lives in its own virtual
environment: ``make openfhe`` builds ``.venv-openfhe`` (Python 3.10) and runs
``tests/crypto/ckks/test_openfhe.py`` there with ``src/`` on ``PYTHONPATH`` (this package
avoids 3.11-only syntax and imports). Elsewhere :func:`openfhe_import_error` says
why it is missing and ``make_backend("openfhe", ...)`` raises :class:`BackendUnavailable`.
See ``docs/he-cnn-openfhe.md``.

How :class:`CkksParams` maps onto ``CCParams<CryptoContextCKKSRNS>``:

* ring dimension ``N`` = ``poly_modulus_degree``, batch size = ``slots`` = N/2 (rotations are
  cyclic over N/2 slots, as in SEAL);
* multiplicative depth = ``levels``, first modulus size = ``coeff_mod_bits[0]``, scaling
  modulus size = ``scale_bits``. OpenFHE gives every level prime the same size, so middle
  entries of ``coeff_mod_bits`` other than ``scale_bits`` are refused. SEAL's last (special)
  prime has no counterpart: OpenFHE picks the key-switching modulus P itself. Hybrid key
  switching with ``levels + 1`` digits (default) makes each RNS limb a digit, as SEAL does.
  OpenFHE's P is larger than one prime when the first prime is large, so its HE-standard
  check (on Q*P) refuses some sets SEAL accepts, e.g. N=8192 with a 60-bit first prime;
  ``insecure_study=True`` lifts both checks (``HEStd_NotSet``);
* ``FIXEDMANUAL`` rescaling: :meth:`rescale` is explicit, as in SEAL. The scale is Delta^d with
  Delta = 2^scale_bits and d OpenFHE's noise-scale degree; a rescale divides by the real prime
  q ~ 2^scale_bits but OpenFHE keeps calling the result Delta. Scales here are therefore always
  exact powers of Delta (SEAL's are Delta^2/q), which costs a relative error of about
  |q - Delta|/Delta per rescale (OpenFHE picks primes alternately above and below Delta so the
  drift does not accumulate). A plaintext can only be encoded at a scale Delta^d;
* ``level`` = remaining levels = depth - ``GetLevel()`` (OpenFHE counts levels used), so a fresh
  ciphertext is at ``levels`` and level 0 is the last data prime, as in SEAL.

The checks (levels, scales, sizes, key sets, rotation plans, serialised framing) are those of
:class:`CheckedBackend`, so OpenFHE refuses the same misuse as SEAL and the emulator with the
same messages (OpenFHE itself would silently adjust levels in an addition).

Rotations are hoisted in :meth:`rotate_many` (``EvalFastRotationPrecompute`` once, then
``EvalFastRotation`` per step with its own key). Bootstrapping (``EvalBootstrap``) is exposed
for a backend made with ``bootstrap_level_budget``: its depth is ``levels`` plus what
bootstrapping consumes, and :meth:`bootstrap` returns a ciphertext at ``levels`` remaining
(noise-scale degree 2: rescale it first).
"""

from __future__ import annotations

import math
import struct
import time
from types import ModuleType
from typing import TYPE_CHECKING, Callable, ContextManager, Sequence

import numpy as np
from numpy.typing import ArrayLike

from cryptoffload.crypto.ckks.backend import CheckedBackend, Ciphertext, Plaintext, library_errors
from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan
from cryptoffload.crypto.ckks.errors import CkksError
from cryptoffload.checks import JsonDict
from cryptoffload.crypto.ckks.framing import (
    KIND_CIPHERTEXT,
    KIND_NAMES,
    KIND_PLAINTEXT,
    KIND_SECRET,
    galois_steps,
    header_int,
    load_context_header,
    pack_sections,
)
from cryptoffload.crypto.ckks.params import DEFAULT_PARAMS, WORD_BYTES, CkksParams
from cryptoffload.errors import BackendUnavailable, ConfigError

if TYPE_CHECKING:
    import openfhe   # OpenFHE's bindings: untyped, so their classes are Any to mypy

__all__ = ["OPENFHE_PIN", "SECRET_DISTRIBUTIONS", "OpenFheBackend", "openfhe_import_error"]

OPENFHE_PIN = "openfhe==1.6.1.0.22.4"
#: ``secret=`` option -> OpenFHE's ``SecretKeyDist``
SECRET_DISTRIBUTIONS = {"uniform_ternary": "UNIFORM_TERNARY", "sparse_ternary": "SPARSE_TERNARY",
                        "sparse_encapsulated": "SPARSE_ENCAPSULATED"}

_openfhe: ModuleType | None = None
_import_error: str | None = None


def _load() -> ModuleType:
    """The ``openfhe`` module (imported once), or :class:`BackendUnavailable` saying why not."""
    global _openfhe, _import_error
    if _openfhe is None and _import_error is None:
        try:
            import openfhe  # noqa: PLC0415 -- optional native dependency
        except (ImportError, OSError) as exc:  # OSError: the extension's libstdc++ too new
            _import_error = f"{type(exc).__name__}: {exc}"
        else:
            _openfhe = openfhe
    if _openfhe is None:
        raise BackendUnavailable(
            f"the OpenFHE CKKS backend needs the 'openfhe' package ({OPENFHE_PIN}; wheels import on "
            f"Python 3.10 here, `make openfhe` sets up .venv-openfhe): {_import_error}")
    return _openfhe


def openfhe_import_error() -> str | None:
    """None when ``openfhe`` imports, else why it does not (for test skips and messages)."""
    try:
        _load()
    except BackendUnavailable:
        return _import_error
    return None


def _short(exc: BaseException) -> str:
    """OpenFHE's messages start with the C++ source path and line; keep the message."""
    text = str(exc).strip()
    if "):" in text:
        text = text.split("):", 1)[1].strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _has_mult_key(cc: openfhe.CryptoContext, tag: str) -> bool:
    try:
        return len(cc.GetEvalMultKeyVector(tag)) > 0
    except RuntimeError:
        return False


def _fhe_errors(op: str) -> ContextManager[None]:
    """OpenFHE's exceptions (``RuntimeError`` from ``OPENFHE_THROW``) as :class:`CkksError`."""
    return library_errors(op, "OpenFHE", _short)


class OpenFheBackend(CheckedBackend):
    """CKKS through OpenFHE's ``CryptoContextCKKSRNS`` (mapping in the module docstring).

    Options: ``insecure_study`` (as for SEAL; also turns OpenFHE's own HE-standard check off),
    ``num_large_digits`` (hybrid key-switching digits, default ``levels + 1``),
    ``bootstrap_level_budget`` (a pair ``(coeffs-to-slots, slots-to-coeffs)``: adds the
    bootstrapping depth to the context so :meth:`bootstrap_setup`/:meth:`bootstrap` work;
    OpenFHE wants ``scale_bits`` near 59 and a 60-bit first prime for it), ``secret`` (the secret
    key's distribution, :data:`SECRET_DISTRIBUTIONS`: ``uniform_ternary``, the default and the only
    one the security table certifies; ``sparse_encapsulated`` is OpenFHE's for bootstrapping with
    ``|I| <= 16`` -- its main secret has Hamming weight 192, the raise's 32).
    """

    name = "openfhe"
    hoists_rotations = True
    slot_generator = 5

    def __init__(self, params: CkksParams = DEFAULT_PARAMS, *, insecure_study: bool = False,
                 num_large_digits: int | None = None, bootstrap_level_budget: Sequence[int] | None = None,
                 secret: str = "uniform_ternary", _context: openfhe.CryptoContext | None = None) -> None:
        fhe = self._fhe = _load()
        super().__init__(params, insecure_study=insecure_study)
        bits = params.coeff_mod_bits
        if len(bits) < 3:
            raise ConfigError(f"the OpenFHE backend needs at least one level (3 primes), got {list(bits)}")
        odd = sorted({b for b in bits[1:-1] if b != params.scale_bits})
        if odd:
            raise ConfigError(f"OpenFHE gives every level prime scale_bits = {params.scale_bits} bits; "
                              f"coeff_mod_bits {list(bits)} has middle primes of {odd} bits")
        self._n = params.poly_modulus_degree
        if secret not in SECRET_DISTRIBUTIONS:
            raise ConfigError(f"secret must be one of {', '.join(SECRET_DISTRIBUTIONS)}, got {secret!r}")
        self.secret = secret
        self._dist = getattr(fhe, SECRET_DISTRIBUTIONS[secret])
        self._budget = None if bootstrap_level_budget is None else tuple(int(b) for b in bootstrap_level_budget)
        self._boot_depth = 0
        if self._budget is not None:
            if len(self._budget) != 2 or min(self._budget) < 1:
                raise ConfigError("bootstrap_level_budget is a pair of positive integers, "
                                  f"got {bootstrap_level_budget!r}")
            self._boot_depth = int(fhe.CryptoContext.GetBootstrapDepth(list(self._budget), self._dist))
        self._depth = params.levels + self._boot_depth
        self._dnum = int(num_large_digits) if num_large_digits else self._depth + 1
        if self._boot_depth:  # bootstrapping's levels: scale-sized primes above params' chain
            self._chain = CkksParams(self._n, bits[:1] + (params.scale_bits,) * self._depth + bits[-1:],
                                     params.scale_bits)
            # SEAL's table covers params.levels; extend it
            self._level_bits = self._level_bits + [self._level_bits[-1] + params.scale_bits * k
                                                   for k in range(1, self._boot_depth + 1)]
        self._cc = _context if _context is not None else self._make_context()
        self._m = int(self._cc.GetCyclotomicOrder())
        self._pk: openfhe.PublicKey = None
        self._sk: openfhe.PrivateKey = None
        self._tag = ""
        self._blobs: dict[str, bytes] = {}
        self._ksk_cache: int | None = None
        self._boot_ready = False
        #: slots of every encoding: N/2, or a bootstrap plan's fewer (sparse packing)
        self._packing = self.slots

    def _make_context(self) -> openfhe.CryptoContext:
        fhe, params = self._fhe, self.params
        p = fhe.CCParamsCKKSRNS()
        p.SetRingDim(self._n)
        p.SetBatchSize(self.slots)
        p.SetMultiplicativeDepth(self._depth)
        p.SetScalingModSize(params.scale_bits)
        p.SetFirstModSize(params.coeff_mod_bits[0])
        p.SetScalingTechnique(fhe.FIXEDMANUAL)
        p.SetNumLargeDigits(self._dnum)
        p.SetSecretKeyDist(self._dist)
        p.SetSecurityLevel(fhe.HEStd_NotSet if self.insecure_study else fhe.HEStd_128_classic)
        try:
            cc = fhe.GenCryptoContext(p)
        except RuntimeError as exc:
            raise ConfigError(f"OpenFHE refuses the parameters N = {self._n}, coeff_mod_bits "
                              f"{list(params.coeff_mod_bits)}, scale_bits {params.scale_bits} (depth {self._depth}): "
                              f"{_short(exc).rstrip('.')}. Its key-switching modulus P is larger than SEAL's special prime "
                              "when the first prime is large; use a smaller first prime, a larger N, or "
                              "insecure_study=True for a study only") from None
        features = [fhe.PKE, fhe.KEYSWITCH, fhe.LEVELEDSHE]
        if self._budget is not None:
            features += [fhe.ADVANCEDSHE, fhe.FHE]
        for feature in features:
            cc.Enable(feature)
        return cc

    # -- OpenFHE specifics ------------------------------------------------------------------
    @property
    def depth(self) -> int:
        """Levels of a fresh ciphertext: ``params.levels`` plus bootstrapping's, if enabled."""
        return self._depth

    @property
    def crypto_context(self) -> openfhe.CryptoContext:
        """The ``openfhe.CryptoContext`` (for OpenFHE-only calls)."""
        return self._cc

    def _delta_bits(self, deg: int) -> float:
        return float(2.0 ** (self.params.scale_bits * deg))

    # -- keys --------------------------------------------------------------------------------
    def keygen(self, rotations: Sequence[int] | None = None, relin: bool = True) -> None:
        """A fresh key set: key pair, relinearisation key (``relin``), rotation keys for
        ``rotations`` (``None``: power-of-two steps). A new key id: older ciphertexts are refused."""
        if self._key_id is not None and not self._has_secret:
            raise CkksError("keygen: a backend from a public context cannot make keys (no secret key)")
        fhe, cc = self._fhe, self._cc
        steps = self._normalise_steps(rotations)
        with _fhe_errors("keygen"):
            kp = cc.KeyGen()
            self._pk, self._sk = kp.publicKey, kp.secretKey
            self._tag = self._sk.GetKeyTag()
            if relin:
                cc.EvalMultKeyGen(self._sk)
        self._blobs = {"public": bytes(fhe.Serialize(self._pk, fhe.BINARY))}
        self._key_id = self.key_set_id(self._blobs["public"])
        self._has_secret = True
        self._has_relin = bool(relin)
        self._galois = {}
        self._ksk_cache = None
        self._boot_ready = False
        self._add_galois(steps)

    def _add_galois(self, steps: dict[int, str]) -> None:
        """Rotation keys for ``steps``, added to the key map of the current key set."""
        if not steps:
            return
        with _fhe_errors("keygen"):
            self._cc.EvalRotateKeyGen(self._sk, [self._key_step(name) for name in steps.values()])
        self._galois.update(steps)

    @staticmethod
    def _key_step(name: str) -> int:
        return int(name.split(":", 1)[1])

    # -- meta ----------------------------------------------------------------------------------
    def _meta(self, obj: Ciphertext | Plaintext) -> tuple[int, float, int]:
        raw = obj.raw
        lv = self._depth - int(raw.GetLevel())
        # OpenFHE's GetScalingFactor() is wrong after ct x pt products at degree > 1 (its decoding
        # uses the degree), so the scale is Delta^degree
        sc = self._delta_bits(int(raw.GetNoiseScaleDeg()))
        return lv, sc, (int(raw.NumberCiphertextElements()) if isinstance(obj, Ciphertext) else 1)

    def _ct_out(self, raw: openfhe.Ciphertext) -> Ciphertext:
        return Ciphertext(raw, self.fingerprint)

    def _degree(self, scale: float, op: str) -> int:
        """Scale Delta^d -> d (FIXEDMANUAL knows no other scales)."""
        sb = self.params.scale_bits
        lg = math.log2(scale)
        deg = int(round(lg / sb))
        if deg < 1 or abs(lg - deg * sb) > 1e-9:
            raise CkksError(f"{op}: OpenFHE (FIXEDMANUAL) encodes at scales (2^{sb})^d only, not 2^{lg:.4f}")
        return deg

    # -- encoding --------------------------------------------------------------------------
    def _encode_target(self, like: Ciphertext | None, level: int | None, scale: float | None) -> tuple[int, float]:
        if like is not None or not self._boot_depth:
            return super()._encode_target(like, level, scale)
        lv = self._depth if level is None else level
        if isinstance(lv, bool) or not isinstance(lv, (int, np.integer)) or not 0 <= lv <= self._depth:
            raise CkksError(f"encode: level {level!r} must be between 0 and {self._depth}")
        sc = self.params.scale if scale is None else float(scale)
        if not sc > 0 or int(math.log2(sc)) + 1 >= self._level_bits[int(lv)]:
            raise CkksError(f"encode: scale {sc!r} is out of bounds at level {lv}")
        return int(lv), sc

    def _make_plain(self, vals: np.ndarray, level: int, deg: int, op: str) -> Plaintext:
        vals = self._packed(np.ascontiguousarray(vals, dtype=np.float64), op)
        with _fhe_errors(op):
            try:
                raw = self._cc.MakeCKKSPackedPlaintext(vals, deg, self._depth - level, None, self._packing)
            except RuntimeError as exc:
                # OpenFHE refuses a nonzero vector whose scaled coefficients are all below 1 (e.g.
                # one slot of 1e-9 at Delta = 2^40); they round to the zero polynomial, which is
                # what SEAL encodes for it, so encode zeros
                if "Scaling factor too small" not in str(exc) or np.max(np.abs(vals)) * self._delta_bits(deg) > 1e6:
                    raise
                raw = self._cc.MakeCKKSPackedPlaintext(np.zeros_like(vals), deg, self._depth - level, None,
                                                       self._packing)
        return Plaintext(raw, self.fingerprint)

    def _packed(self, vals: np.ndarray, op: str) -> np.ndarray:
        """The first ``packing`` slots of a slot vector that repeats them (sparse packing: OpenFHE
        encodes them once, and every slot of the ring holds one of them)."""
        if self._packing == self.slots:
            return vals
        head = vals[: self._packing]
        if not np.array_equal(np.tile(head, self.slots // self._packing), vals):
            raise CkksError(f"{op}: with a bootstrap plan of {self._packing} slots the values must repeat every "
                            f"{self._packing} slots (sparse packing)")
        return head

    def encode(self, values: ArrayLike, *, like: Ciphertext | None = None, level: int | None = None,
               scale: float | None = None) -> Plaintext:
        self._need_public("encode")
        lv, sc = self._encode_target(like, level, scale)
        return self._make_plain(self._values(values), lv, self._degree(sc, "encode"), "encode")

    def encrypt(self, values: ArrayLike, *, level: int | None = None, scale: float | None = None) -> Ciphertext:
        """Public-key encryption of ``values`` (or of a :class:`Plaintext`)."""
        self._need_public("encrypt")
        pt = values if isinstance(values, Plaintext) else self.encode(values, level=level, scale=scale)
        raw_pt = self._own(pt, Plaintext, "encrypt")
        with _fhe_errors("encrypt"):
            return self._ct_out(self._cc.Encrypt(self._pk, raw_pt))

    def decrypt(self, ct: Ciphertext) -> np.ndarray:
        raw = self._own(ct, Ciphertext, "decrypt")
        self._need_secret("decrypt")
        with _fhe_errors("decrypt"):
            pt = self._cc.Decrypt(raw, self._sk)
            pt.SetLength(self._packing)
            vals = np.array(pt.GetRealPackedValueArray(), dtype=np.float64)
        return np.tile(vals[: self._packing], self.slots // self._packing)

    def decode(self, pt: Plaintext) -> np.ndarray:
        """The values an encoded plaintext holds (OpenFHE keeps them next to the polynomial)."""
        raw = self._own(pt, Plaintext, "decode")
        with _fhe_errors("decode"):
            vals = np.array(raw.GetRealPackedValueArray(), dtype=np.float64)
        if vals.size < self.slots:
            vals = np.concatenate([vals, np.zeros(self.slots - vals.size)])
        return vals[: self.slots]

    # -- arithmetic ----------------------------------------------------------------------------
    def _binary(self, op: str, fn: Callable[[openfhe.Ciphertext, openfhe.Ciphertext], openfhe.Ciphertext],
                a: Ciphertext, b: Ciphertext) -> Ciphertext:
        ra, rb = self._summands(op, a, b)
        with _fhe_errors(op):
            return self._ct_out(fn(ra, rb))

    def add(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        return self._binary("add", self._cc.EvalAdd, a, b)

    def sub(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        return self._binary("sub", self._cc.EvalSub, a, b)

    def negate(self, a: Ciphertext) -> Ciphertext:
        ra = self._own(a, Ciphertext, "negate")
        with _fhe_errors("negate"):
            return self._ct_out(self._cc.EvalNegate(ra))

    def _plain_op(self, op: str, fn: Callable[[openfhe.Ciphertext, openfhe.Plaintext], openfhe.Ciphertext],
                  ct: Ciphertext, pt: Plaintext, same_scale: bool) -> Ciphertext:
        rc, rp = self._own(ct, Ciphertext, op), self._own(pt, Plaintext, op)
        lv = self._same_level(op, ct, pt)
        if same_scale:
            self._same_scale(op, ct, pt)
        else:
            self._scale_in_bounds(op, self._meta(ct)[1] * self._meta(pt)[1], lv)
        with _fhe_errors(op):
            return self._ct_out(fn(rc, rp))

    def add_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        return self._plain_op("add_plain", self._cc.EvalAdd, ct, pt, True)

    def sub_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        return self._plain_op("sub_plain", self._cc.EvalSub, ct, pt, True)

    def mul_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        return self._plain_op("mul_plain", self._cc.EvalMult, ct, pt, False)

    def mul(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """Product without relinearisation (``EvalMultNoRelin``: size 3)."""
        ra, rb = self._own(a, Ciphertext, "mul"), self._own(b, Ciphertext, "mul")
        lv = self._same_level("mul", a, b)
        self._scale_in_bounds("mul", self._meta(a)[1] * self._meta(b)[1], lv)
        with _fhe_errors("mul"):
            return self._ct_out(self._cc.EvalMultNoRelin(ra, rb))

    def relinearize(self, ct: Ciphertext) -> Ciphertext:
        raw = self._own(ct, Ciphertext, "relinearize")
        self._need_relin("relinearize", ct)
        with _fhe_errors("relinearize"):
            return self._ct_out(self._cc.Relinearize(raw))

    def rescale(self, ct: Ciphertext) -> Ciphertext:
        """``Rescale`` (FIXEDMANUAL): one limb dropped, the scale degree lowered by one."""
        raw = self._own(ct, Ciphertext, "rescale")
        self._rescale_level(ct)
        with _fhe_errors("rescale"):
            return self._ct_out(self._cc.Rescale(raw))

    def mod_switch_to(self, ct_or_pt: Ciphertext | Plaintext, level: int) -> Ciphertext | Plaintext:
        """``LevelReduce`` (limbs dropped, scale kept); a plaintext is re-encoded at ``level``."""
        if isinstance(ct_or_pt, Plaintext):
            raw = self._own(ct_or_pt, Plaintext, "mod_switch_to")
            lv = self._target_level(ct_or_pt, level)
            return self._make_plain(self.decode(ct_or_pt), lv, int(raw.GetNoiseScaleDeg()), "mod_switch_to")
        raw = self._own(ct_or_pt, Ciphertext, "mod_switch_to")
        lv = self._target_level(ct_or_pt, level)
        self._scale_in_bounds("mod_switch_to", self._meta(ct_or_pt)[1], lv)
        drop = self._meta(ct_or_pt)[0] - lv
        with _fhe_errors("mod_switch_to"):
            return self._ct_out(raw.Clone() if drop == 0 else self._cc.LevelReduce(raw, None, drop))

    # -- rotations -----------------------------------------------------------------------------
    def rotate(self, ct: Ciphertext, steps: int) -> Ciphertext:
        """Left rotation; a step without its own key is composed as :meth:`rotation_plan` says
        (one ``EvalRotate`` per key, the same key switches as SEAL)."""
        raw = self._own(ct, Ciphertext, "rotate")
        plan = self.rotation_plan(steps)
        self._size2("rotate", ct)
        with _fhe_errors("rotate"):
            out = raw.Clone() if not plan else raw
            for key in plan:
                out = self._cc.EvalRotate(out, self._key_step(key))
        return self._ct_out(out)

    def rotate_many(self, ct: Ciphertext, steps: Sequence[int]) -> list[Ciphertext]:
        """Hoisted: the key-switch digit decomposition of ``ct`` is computed once
        (``EvalFastRotationPrecompute``) and reused by every step that has its own key
        (``EvalFastRotation``); composed steps go through :meth:`rotate`."""
        raw = self._own(ct, Ciphertext, "rotate_many")
        steps = list(steps)
        plans = [self.rotation_plan(s) for s in steps]  # refuse a missing key before any work
        self._size2("rotate_many", ct)
        digits = None
        out: list[Ciphertext] = []
        with _fhe_errors("rotate_many"):
            for s, plan in zip(steps, plans):
                if not plan:
                    out.append(self._ct_out(raw.Clone()))
                elif len(plan) == 1:
                    if digits is None:
                        digits = self._cc.EvalFastRotationPrecompute(raw)
                    out.append(self._ct_out(self._cc.EvalFastRotation(raw, self._key_step(plan[0]), self._m, digits)))
                else:
                    out.append(self.rotate(ct, s))
        return out

    # -- sizes -----------------------------------------------------------------------------------
    def _ksk_polys(self) -> int:
        """RNS limbs (Q and P) x polynomials of one key-switching key, from a serialised key."""
        if self._ksk_cache is None:
            fhe = self._fhe
            if self._has_relin:
                blob, count = fhe.SerializeEvalMultKeyString(fhe.BINARY, self._tag), 1
            elif self._galois:   # every automorphism key of the tag (bootstrapping's too)
                blob = fhe.SerializeEvalAutomorphismKeyString(fhe.BINARY, self._tag)
                count = max(1, len(self._cc.GetExistingEvalAutomorphismKeyIndices(self._tag)))
            else:
                return 0
            self._ksk_cache = int(len(blob) / count // (self._n * WORD_BYTES))
        return self._ksk_cache

    def key_bytes(self) -> dict[str, int]:
        """In-memory sizes of the evaluation keys in OpenFHE's layout (``dnum`` RLWE pairs over
        Q*P per key; with the default ``dnum = levels + 1`` and a one-prime P, SEAL's size)."""
        self._need_public("key_bytes")
        size = self._ksk_polys() * self._n * WORD_BYTES
        out: dict[str, int] = {}
        if self._has_relin:
            out["relin"] = size
        for name in self._galois.values():
            out[name] = size
        return out

    def serialized_key_bytes(self) -> dict[str, int]:
        """Sizes of OpenFHE's binary serialisations (public key, all relin/rotation keys)."""
        self._need_public("serialized_key_bytes")
        fhe = self._fhe
        out = {"public": len(self._blobs["public"])}
        if self._has_relin:
            out["relin"] = len(fhe.SerializeEvalMultKeyString(fhe.BINARY, self._tag))
        if self._galois:
            out["galois"] = len(fhe.SerializeEvalAutomorphismKeyString(fhe.BINARY, self._tag))
        return out

    # -- serialisation ---------------------------------------------------------------------------
    def serialize_ciphertext(self, ct: Ciphertext) -> bytes:
        raw = self._own(ct, Ciphertext, "serialize_ciphertext")
        with _fhe_errors("serialize_ciphertext"):
            return self._frame(KIND_CIPHERTEXT, bytes(self._fhe.Serialize(raw, self._fhe.BINARY)))

    def deserialize_ciphertext(self, data: bytes) -> Ciphertext:
        payload = self._unframe(data, KIND_CIPHERTEXT)
        with _fhe_errors("deserialize_ciphertext"):
            raw = self._fhe.DeserializeCiphertextString(payload, self._fhe.BINARY)
        if int(raw.GetCryptoContext().GetRingDimension()) != self._n or not 0 <= int(raw.GetLevel()) <= self._depth:
            raise CkksError("deserialize_ciphertext: the ciphertext does not belong to this context")
        return self._ct_out(raw)

    def serialize_plaintext(self, pt: Plaintext) -> bytes:
        """OpenFHE has no plaintext serialisation: the values, level and scale degree (re-encoded
        on load, which is deterministic)."""
        raw = self._own(pt, Plaintext, "serialize_plaintext")
        lv = self._meta(pt)[0]
        return self._frame(KIND_PLAINTEXT, struct.pack("<II", lv, int(raw.GetNoiseScaleDeg()))
                           + self.decode(pt).astype("<f8").tobytes())

    def deserialize_plaintext(self, data: bytes) -> Plaintext:
        payload = self._unframe(data, KIND_PLAINTEXT)
        if len(payload) != 8 + 8 * self.slots:
            raise CkksError("deserialize_plaintext: malformed OpenFHE plaintext record")
        lv, deg = struct.unpack_from("<II", payload)
        if lv > self._depth or deg < 1:
            raise CkksError("deserialize_plaintext: malformed OpenFHE plaintext record")
        return self._make_plain(np.frombuffer(payload, dtype="<f8", offset=8).astype(np.float64), lv, deg,
                                "deserialize_plaintext")

    def _context(self, kind: int) -> bytes:
        self._need_public("public_context")
        fhe = self._fhe
        with _fhe_errors("public_context"):
            sections = [("context", bytes(fhe.Serialize(self._cc, fhe.BINARY))), ("public", self._blobs["public"])]
            if self._has_relin:
                sections.append(("relin", bytes(fhe.SerializeEvalMultKeyString(fhe.BINARY, self._tag))))
            if self._galois or self._boot_ready:
                sections.append(("galois", bytes(fhe.SerializeEvalAutomorphismKeyString(fhe.BINARY, self._tag))))
            if kind == KIND_SECRET:
                self._need_secret("secret_context")
                sections.append(("secret", bytes(fhe.Serialize(self._sk, fhe.BINARY))))
        header: JsonDict = {"params": self.params.to_dict(), "galois": sorted(self._galois.items()),
                  "insecure_study": self.insecure_study, "depth": self._depth, "dnum": self._dnum,
                  "bootstrap_level_budget": list(self._budget) if self._budget else None, "secret": self.secret}
        return self._frame(kind, pack_sections(header, sections))

    @classmethod
    def _from_context(cls, data: bytes, kind: int, insecure_study: bool) -> "OpenFheBackend":
        fhe = _load()
        params, header, sec, key_id = load_context_header(cls.name, data, kind)
        if "context" not in sec or "public" not in sec or (kind == KIND_SECRET and "secret" not in sec):
            raise CkksError(f"serialised {KIND_NAMES[kind]} lacks its context or keys")
        if cls.key_set_id(sec["public"]) != key_id:
            raise CkksError("the context's public key does not match its key id")
        with _fhe_errors("load context"):
            cc = fhe.DeserializeCryptoContextString(sec["context"], fhe.BINARY)
            pk = fhe.DeserializePublicKeyString(sec["public"], fhe.BINARY)
            if "relin" in sec and not _has_mult_key(cc, pk.GetKeyTag()):
                # OpenFHE keeps evaluation keys in process-wide maps by key tag and refuses to
                # replace a relinearisation key (the key owner's, when loaded in its process)
                fhe.DeserializeEvalMultKeyString(sec["relin"], fhe.BINARY)
            if "galois" in sec:
                fhe.DeserializeEvalAutomorphismKeyString(sec["galois"], fhe.BINARY)
            sk = fhe.DeserializePrivateKeyString(sec["secret"], fhe.BINARY) if kind == KIND_SECRET else None
        try:
            budget = header.get("bootstrap_level_budget")
            if budget is not None and not (isinstance(budget, list) and all(isinstance(b, int) for b in budget)):
                raise ValueError(f"bootstrap_level_budget {budget!r} is not a list of integers")
            self = cls(params, insecure_study=insecure_study or bool(header.get("insecure_study")),
                       num_large_digits=header_int(header, "dnum", KIND_NAMES[kind]), bootstrap_level_budget=budget,
                       secret=str(header.get("secret", "uniform_ternary")), _context=cc)
        except (KeyError, TypeError, ValueError) as exc:
            raise CkksError(f"malformed {KIND_NAMES[kind]}: {exc}") from None
        if self._depth != header_int(header, "depth", KIND_NAMES[kind], -1) or int(cc.GetRingDimension()) != params.poly_modulus_degree:
            raise CkksError(f"serialised {KIND_NAMES[kind]}: OpenFHE context does not match its parameters")
        self._pk, self._sk, self._tag = pk, sk, pk.GetKeyTag()
        self._blobs = {"public": sec["public"]}
        self._key_id = key_id
        self._has_relin = "relin" in sec
        self._galois = dict(galois_steps(header, KIND_NAMES[kind]))
        self._has_secret = kind == KIND_SECRET
        return self

    # -- bootstrapping -----------------------------------------------------------------------------
    def bootstrap_setup(self, plan: BootstrapPlan | Sequence[int] | None = None,
                        dim1: Sequence[int] = (0, 0)) -> dict[str, float]:
        """``EvalBootstrapSetup`` + ``EvalBootstrapKeyGen`` (secret key needed; the backend must be
        made with ``bootstrap_level_budget``). ``plan``: a :class:`BootstrapPlan` (level budget,
        dim1, slots -- fewer than N/2: encodings from then on pack that many slots), or a level
        budget pair with ``dim1`` beside it (OpenFHE's order; ``None``: the backend's budget).
        ``dim1`` is the baby-step count (hoisted rotations) of CoeffToSlot and SlotToCoeff, 0 for
        OpenFHE's default. Returns the wall-clock seconds of each call: ``{"setup_s", "keygen_s"}``."""
        self._need_secret("bootstrap_setup")
        if self._budget is None:
            raise CkksError("bootstrap_setup: make the backend with bootstrap_level_budget=(a, b), so that "
                            "its depth includes bootstrapping's")
        if isinstance(plan, BootstrapPlan):
            budget, dim1, slots = list(plan.level_budget), list(plan.dim1), plan.slots_for(self._n)
        else:
            budget, slots = list(self._budget if plan is None else plan), self.slots
        need = int(self._fhe.CryptoContext.GetBootstrapDepth(budget, self._dist))
        if need > self._boot_depth:
            raise CkksError(f"bootstrap_setup: level budget {tuple(budget)} needs depth {need}, the backend "
                            f"reserved {self._boot_depth} (bootstrap_level_budget={self._budget})")
        dim1 = [int(d) for d in dim1]
        if len(dim1) != 2 or min(dim1) < 0:   # OpenFHE reads dim1[1] unchecked (a crash, not an error)
            raise CkksError(f"bootstrap_setup: dim1 is a pair of integers >= 0, got {dim1!r}")
        with _fhe_errors("bootstrap_setup"):
            t0 = time.perf_counter()
            self._cc.EvalBootstrapSetup(budget, dim1, slots)
            t1 = time.perf_counter()
            self._cc.EvalBootstrapKeyGen(self._sk, slots)
            t2 = time.perf_counter()
        self._boot_ready = True
        self._packing = slots
        return {"setup_s": t1 - t0, "keygen_s": t2 - t1}

    def rotation_key_steps(self) -> list[int]:
        """Slot rotation steps ``0 < s < slots`` this key set holds a key for, bootstrapping's
        included (OpenFHE stores automorphism indices ``5^s mod 2N``; the conjugation key has
        no step and is left out). For checking which rotations a transform really uses."""
        self._need_public("rotation_key_steps")
        cc = self._cc
        with _fhe_errors("rotation_key_steps"):
            held = set(int(i) for i in cc.GetExistingEvalAutomorphismKeyIndices(self._tag))
            return [s for s in range(1, self.slots) if int(cc.FindAutomorphismIndex(s)) in held]

    def bootstrap(self, ct: Ciphertext) -> Ciphertext:
        """``EvalBootstrap``: a fresh-noise ciphertext of the same values with ``levels`` levels
        left (scale Delta^2: rescale before multiplying)."""
        raw = self._own(ct, Ciphertext, "bootstrap")
        if not self._boot_ready:
            raise CkksError("bootstrap: call bootstrap_setup() first")
        self._size2("bootstrap", ct)
        with _fhe_errors("bootstrap"):
            return self._ct_out(self._cc.EvalBootstrap(raw))
