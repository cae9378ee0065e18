"""CKKS on Microsoft SEAL through ``tenseal.sealapi``: :class:`SealBackend`.

Why SEAL: it is the library the HE-CNN paper's EVA runtime uses, and the emulator reproduces
its bookkeeping (primes, levels, scales) exactly, so SEAL is the reference the other backends
are tested against. ``tenseal`` is imported when a backend is made, not when this module is.
"""

from __future__ import annotations

import atexit
import functools
import itertools
import json
import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Callable, ContextManager, Protocol, Sequence, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from cryptoffload.crypto.ckks.backend import MAX_CONTEXT_BYTES, CheckedBackend, Ciphertext, Plaintext, library_errors
from cryptoffload.crypto.ckks.errors import CkksError
from cryptoffload.checks import JsonDict
from cryptoffload.crypto.ckks.framing import (
    KIND_CIPHERTEXT,
    KIND_NAMES,
    KIND_PLAINTEXT,
    KIND_SECRET,
    galois_steps,
    load_context_header,
    pack_sections,
)
from cryptoffload.crypto.ckks.inflate import COMPR_NONE, inflated_size, parse_seal_header, uncompressed
from cryptoffload.crypto.ckks.keyfile import (KEY_FILE_WHAT, PLAINTEXT_FILE_WHAT, KeyFile, Region, frame_header,
                                               listed_sizes, open_key_file, read_region, write_key_file)
from cryptoffload.crypto.ckks.params import DEFAULT_PARAMS, MAX_PRIME_BITS, WORD_BYTES, CkksParams
from cryptoffload.errors import BackendUnavailable, ConfigError, CryptoffloadError
from cryptoffload.private_files import private_dir

__all__ = ["SEAL_SLACK", "SealBackend", "inflate_limits"]

#: SEAL's headers and metadata beyond an object's polynomials (a key has ~1 KB): generous
SEAL_SLACK = 1 << 16


def inflate_limits(params: CkksParams, galois_keys: int) -> dict[str, int]:
    """The most bytes each section of a SEAL context may inflate to, plus :data:`SEAL_SLACK` per
    key: a public key, 2 polynomials over all primes; a secret key, one. SEAL serialises the
    relinearisation key and each of ``galois_keys`` Galois keys *seeded* (one polynomial of each
    pair, the other regenerated from a seed on loading), so each may inflate to half of
    :attr:`~CkksParams.ksk_bytes`: bounding the seeded size bounds the keys SEAL builds by their
    in-memory size (zero-filled seeded keys, which compress to nothing, cannot be packed twice
    as many into the bound). Keys saved unseeded are refused here."""
    poly = params.poly_modulus_degree * (params.data_primes + 1) * WORD_BYTES
    key = params.ksk_bytes // 2 + SEAL_SLACK
    return {"public": 2 * poly + SEAL_SLACK, "relin": key, "galois": galois_keys * key + SEAL_SLACK,
            "secret": poly + SEAL_SLACK}


if TYPE_CHECKING:
    import tenseal.sealapi as sealapi   # SEAL's bindings: untyped, so their classes are Any to mypy


class _Saveable(Protocol):
    """A SEAL object the bindings save to a path (keys, ciphertexts)."""

    def save(self, path: str) -> None: ...


class _Loadable(Protocol):
    """A SEAL object the bindings load from a path, under a context."""

    def load(self, context: sealapi.SEALContext, path: str) -> None: ...


_L = TypeVar("_L", bound=_Loadable)


def _galois_count(header: JsonDict, params: CkksParams, what: str) -> int:
    steps = galois_steps(header, what)
    if len(steps) >= params.slots:
        raise CkksError(f"malformed {what}: its Galois key list")
    return len(steps)


def _check_inflation(sections: dict[str, bytes], limits: dict[str, int], what: str) -> None:
    """Every section measured (:func:`~cryptoffload.crypto.ckks.inflate.inflated_size`)
    against its limit before SEAL inflates anything."""
    for name, blob in sections.items():
        if name not in limits:
            raise CkksError(f"malformed {what}: unknown section {name!r}")
        inflated_size(blob, limits[name], f"{what} ({name} keys)")


def _key_file_regions(kf: KeyFile, header: JsonDict, params: CkksParams,
                      relin: bool) -> tuple[Region, Region, Region | None]:
    """The regions of a key file (:mod:`.keyfile`) -- the Galois keys whole and compact, the
    relinearisation key whole (``relin``: the frame has one) -- bounded by the parameters
    (each key's in-memory size), the whole ones checked against their digest and SEAL's header
    (uncompressed, as stated) before SEAL reads a byte."""
    what = f"the {KEY_FILE_WHAT} file {kf.path}"
    bulk, compact = kf.region(header, "galois"), kf.region(header, "galois-compact")
    limit = _galois_count(header, params, what) * (params.ksk_bytes + SEAL_SLACK) + SEAL_SLACK
    if bulk.offset != 0 or bulk.size > limit or compact.size > limit:
        raise CkksError(f"{what}: its Galois keys are not where or what its parameters allow; remove it")
    whole = [(bulk, "Galois")]
    rk = kf.region(header, "relin") if relin else None
    if rk is not None:
        if rk.size > params.ksk_bytes + SEAL_SLACK:
            raise CkksError(f"{what}: its relinearisation key is larger than its parameters allow; remove it")
        whole.append((rk, "relinearisation"))
    for region, name in whole:
        kf.check(region, name)
        head = parse_seal_header(kf.read(Region(region.offset, min(region.size, 16), "")), what, stored=region.size)
        if head.compr_mode != COMPR_NONE:
            raise CkksError(f"{what}: its {name} keys are compressed; a key file keeps them whole (remove it)")
    return bulk, compact, rk


def _sealapi() -> ModuleType:
    try:
        import tenseal.sealapi as sealapi  # noqa: PLC0415 -- optional native dependency
    except Exception as exc:  # ImportError, or an OSError loading the extension
        raise BackendUnavailable(f"the SEAL backend needs tenseal (tenseal.sealapi): {exc}") from None
    return sealapi


class _SealIO:
    """Byte (de)serialisation through files: the tenseal bindings only save/load to a path.

    Files live in a private directory (mode 0700), on ``/dev/shm`` when it exists so that key
    material never reaches a disk, and are removed at once.
    """

    _lock = threading.Lock()
    _dir: str | None = None
    _n = 0

    @classmethod
    def _path(cls) -> str:
        with cls._lock:
            if cls._dir is None or not os.path.isdir(cls._dir):
                base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
                cls._dir = tempfile.mkdtemp(prefix="cryptoffload-ckks-", dir=base)
                atexit.register(shutil.rmtree, cls._dir, True)
                private_dir(cls._dir, "CKKS key staging", create=False, error=CkksError)  # nobody else can swap it
            cls._n += 1
            return os.path.join(cls._dir, f"{os.getpid()}-{threading.get_ident()}-{cls._n}")

    @classmethod
    def dump(cls, obj: _Saveable) -> bytes:
        path = cls._path()
        try:
            obj.save(path)
            with open(path, "rb") as fh:
                return fh.read()
        finally:
            if os.path.exists(path):
                os.unlink(path)

    @classmethod
    def load(cls, obj: _L, context: sealapi.SEALContext, data: bytes | memoryview) -> _L:
        path = cls._path()
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            obj.load(context, path)
            return obj
        finally:
            if os.path.exists(path):
                os.unlink(path)


    @classmethod
    def load_each(cls, make: Callable[[], _L], context: sealapi.SEALContext, blobs: Sequence[memoryview]) -> list[_L]:
        """One new object (``make()``) loaded from each blob, through one staging file written
        over from its start each time: SEAL reads what an object's header says and stops, so
        what a longer blob left behind is never read, and the file's pages are made once."""
        path = cls._path()
        out = []
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            for blob in blobs:
                if os.pwrite(fd, blob, 0) != len(blob):
                    raise CkksError("load: could not stage a serialised object")
                obj = make()
                obj.load(context, path)
                out.append(obj)
        finally:
            os.close(fd)
            os.unlink(path)
        return out


def _seal_errors(op: str) -> ContextManager[None]:
    return library_errors(op, "SEAL")


class SealBackend(CheckedBackend):
    """CKKS on Microsoft SEAL (through ``tenseal.sealapi``), single-threaded as SEAL is.

    SEAL throws when an op's result would be *transparent* (not encrypted at all: a product
    with an all-zero plaintext, or ``a - a``). Zero weights and masks are legitimate in packed
    networks, so such a result is replaced by a fresh public-key encryption of zero with the
    level, scale and size the op would have produced.
    """

    name = "seal"
    hoists_rotations = False
    keeps_plaintexts = True

    def __init__(self, params: CkksParams = DEFAULT_PARAMS, *, insecure_study: bool = False) -> None:
        s = self._s = _sealapi()  # first: a missing library is reported before bad parameters
        self.library = f"SEAL through tenseal {getattr(sys.modules.get('tenseal'), '__version__', '?')}"
        if not params.single_special_prime:
            raise ConfigError(f"SEAL's special modulus is one prime of at most {MAX_PRIME_BITS} bits, got "
                              f"{params.special_bits} (a special modulus of several primes is the gpu backends'); "
                              "use a smaller last entry of coeff_mod_bits")
        super().__init__(params, insecure_study=insecure_study)
        ep = s.EncryptionParameters(s.SCHEME_TYPE.CKKS)
        ep.set_poly_modulus_degree(params.poly_modulus_degree)
        with _seal_errors("parameters"):
            ep.set_coeff_modulus(s.CoeffModulus.Create(params.poly_modulus_degree, list(params.coeff_mod_bits)))
            sec = s.SEC_LEVEL_TYPE.NONE if insecure_study else s.SEC_LEVEL_TYPE.TC128
            self._ctx = s.SEALContext(ep, True, sec)
        if not self._ctx.parameters_set():
            raise ConfigError(f"SEAL refuses the parameters: {self._ctx.parameters_error_message()}")
        got = tuple(m.value() for m in ep.coeff_modulus())
        if got != self.primes:  # the emulator's bookkeeping relies on this
            raise CkksError(f"SEAL picked primes {got}, expected {self.primes}")
        self._parms_ids: list[sealapi.ParmsId | None] = [None] * (params.levels + 1)
        self._level_of: dict[tuple[int, ...], int] = {}
        cd = self._ctx.first_context_data()
        while cd is not None:
            lv = cd.chain_index()
            pid = cd.parms_id()
            self._parms_ids[lv] = pid
            self._level_of[tuple(pid)] = lv
            cd = cd.next_context_data()
        self._encoder = s.CKKSEncoder(self._ctx)
        self._ev = s.Evaluator(self._ctx)
        # SEAL objects (the binding is untyped), None until keygen or a context sets them; every
        # use is behind _need_public / _need_secret, which the key state guarantees
        self._sk: sealapi.SecretKey = None
        self._pk: sealapi.PublicKey = None
        self._rk: sealapi.RelinKeys | None = None
        self._gk: sealapi.GaloisKeys | None = None
        self._kg: sealapi.KeyGenerator = None
        self._encryptor: sealapi.Encryptor = None
        self._decryptor: sealapi.Decryptor = None
        self._blobs: dict[str, bytes] = {}  # compact serialised keys, for contexts
        #: where the compact Galois keys lie when the keys came from a key file (read on use)
        self._compact_source: tuple[Path, tuple[int, int], Region] | None = None

    # -- keys ------------------------------------------------------------------------------
    def keygen(self, rotations: Sequence[int] | None = None, relin: bool = True) -> None:
        """A fresh key set (a new key id: ciphertexts of the previous key set are refused)."""
        if self._key_id is not None and not self._has_secret:
            raise CkksError("keygen: a backend from a public context cannot make keys (no secret key)")
        s = self._s
        steps = self._normalise_steps(rotations)
        with _seal_errors("keygen"):
            kg = s.KeyGenerator(self._ctx)
            sk = kg.secret_key()
            pk = s.PublicKey()
            kg.create_public_key(pk)
        self._sk, self._pk = sk, pk
        self._blobs = {"public": _SealIO.dump(pk)}
        self._key_id = self.key_set_id(self._blobs["public"])
        self._has_secret = True
        self._encryptor = s.Encryptor(self._ctx, pk)
        self._decryptor = s.Decryptor(self._ctx, sk)
        self._rk = self._gk = None
        self._has_relin = False
        self._galois = {}
        if relin:
            with _seal_errors("keygen"):
                blob = _SealIO.dump(kg.create_relin_keys())  # seeded: half the size
                self._rk = _SealIO.load(s.RelinKeys(), self._ctx, blob)
            self._blobs["relin"] = blob
            self._has_relin = True
        self._kg = kg
        self._make_galois(steps)

    def _add_galois(self, steps: dict[int, str]) -> None:
        """SEAL's Galois keys are one object: it is made again for the old steps and the new."""
        self._make_galois({**self._galois, **steps})

    def _make_galois(self, steps: dict[int, str]) -> None:
        self._galois = dict(steps)
        self._gk = None
        self._blobs.pop("galois", None)
        self._compact_source = None
        if not steps:
            return
        # Galois elements, not steps: the binding's first overload takes a list of non-negative
        # ints as *elements*, so a list of positive steps would silently make the wrong keys
        elts = [self._galois_elt(step) for step in steps]
        with _seal_errors("keygen"):
            blob = _SealIO.dump(self._kg.create_galois_keys(elts))
            self._gk = _SealIO.load(self._s.GaloisKeys(), self._ctx, blob)
        self._blobs["galois"] = blob

    def _galois_elt(self, step: int) -> int:
        """SEAL's ``GaloisTool::get_elt_from_step`` for a left rotation by ``step`` (mod slots):
        ``3**step mod 2N``."""
        return pow(3, step % self.slots, 2 * self.params.poly_modulus_degree)

    # -- meta ------------------------------------------------------------------------------
    def _meta(self, obj: Ciphertext | Plaintext) -> tuple[int, float, int]:
        raw = obj.raw
        lv = self._level_of[tuple(raw.parms_id())]
        return lv, raw.scale, (raw.size() if isinstance(obj, Ciphertext) else 1)

    def _ct_out(self, raw: sealapi.Ciphertext) -> Ciphertext:
        return Ciphertext(raw, self.fingerprint)

    # -- encoding ---------------------------------------------------------------------------
    def encode(self, values: ArrayLike, *, like: Ciphertext | None = None, level: int | None = None,
               scale: float | None = None) -> Plaintext:
        self._need_public("encode")
        lv, sc = self._encode_target(like, level, scale)
        vals = self._values(values)
        pt = self._s.Plaintext()
        with _seal_errors("encode"):
            self._encoder.encode(vals.tolist(), self._parms_ids[lv], sc, pt)
        return Plaintext(pt, self.fingerprint)

    def encrypt(self, values: ArrayLike, *, level: int | None = None, scale: float | None = None) -> Ciphertext:
        """Public-key encryption of ``values`` (or of a :class:`Plaintext`)."""
        self._need_public("encrypt")
        pt = values if isinstance(values, Plaintext) else self.encode(values, level=level, scale=scale)
        raw_pt = self._own(pt, Plaintext, "encrypt")
        ct = self._s.Ciphertext()
        with _seal_errors("encrypt"):
            self._encryptor.encrypt(raw_pt, ct)
        return self._ct_out(ct)

    def decrypt(self, ct: Ciphertext) -> np.ndarray:
        raw = self._own(ct, Ciphertext, "decrypt")
        self._need_secret("decrypt")
        pt = self._s.Plaintext()
        with _seal_errors("decrypt"):
            self._decryptor.decrypt(raw, pt)
            return np.asarray(self._encoder.decode_double(pt), dtype=np.float64)

    def decode(self, pt: Plaintext) -> np.ndarray:
        raw = self._own(pt, Plaintext, "decode")
        with _seal_errors("decode"):
            return np.asarray(self._encoder.decode_double(raw), dtype=np.float64)

    # -- arithmetic -------------------------------------------------------------------------
    def _binary(self, op: str, fn: str, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        ra, rb = self._summands(op, a, b)
        out = self._s.Ciphertext()
        with _seal_errors(op):
            if not self._transparent_safe(getattr(self._ev, fn), ra, rb, out):
                la, sa, za = self._meta(a)
                return self._zero(la, sa, max(za, self._meta(b)[2]))
        return self._ct_out(out)

    @staticmethod
    def _transparent_safe(fn: Callable[..., object], *args: sealapi.Ciphertext) -> bool:
        """Run a SEAL op; False when SEAL refuses its result as *transparent* (not encrypted:
        ``ct * 0`` or ``a - a``), which SEAL is built to throw on."""
        try:
            fn(*args)
        except RuntimeError as exc:
            if "transparent" in str(exc):
                return False
            raise
        return True

    def _zero(self, level: int, scale: float, size: int) -> Ciphertext:
        """A fresh public-key encryption of zero standing for a transparent result, with the
        level, scale and size the op would have produced (so the bookkeeping matches the
        emulator's), instead of an unencrypted ciphertext or an error on legitimate zero
        weights and masks."""
        out = self._s.Ciphertext()
        with _seal_errors("encrypt zero"):
            self._encryptor.encrypt_zero(self._parms_ids[level], out)
            out.scale = scale
            if size > 2:
                out.resize(size)
        return self._ct_out(out)

    def add(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        return self._binary("add", "add", a, b)

    def sub(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        return self._binary("sub", "sub", a, b)

    def negate(self, a: Ciphertext) -> Ciphertext:
        ra = self._own(a, Ciphertext, "negate")
        out = self._s.Ciphertext()
        with _seal_errors("negate"):
            self._ev.negate(ra, out)
        return self._ct_out(out)

    def _plain(self, op: str, fn: str, ct: Ciphertext, pt: Plaintext, same_scale: bool) -> Ciphertext:
        rc, rp = self._own(ct, Ciphertext, op), self._own(pt, Plaintext, op)
        lv = self._same_level(op, ct, pt)
        _, sc, size = self._meta(ct)
        if same_scale:
            self._same_scale(op, ct, pt)
        else:
            sc *= self._meta(pt)[1]
            self._scale_in_bounds(op, sc, lv)
        out = self._s.Ciphertext()
        with _seal_errors(op):
            if not self._transparent_safe(getattr(self._ev, fn), rc, rp, out):
                return self._zero(lv, sc, size)
        return self._ct_out(out)

    def add_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        return self._plain("add_plain", "add_plain", ct, pt, True)

    def sub_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        return self._plain("sub_plain", "sub_plain", ct, pt, True)

    def mul_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        return self._plain("mul_plain", "multiply_plain", ct, pt, False)

    def mul(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        ra, rb = self._own(a, Ciphertext, "mul"), self._own(b, Ciphertext, "mul")
        lv = self._same_level("mul", a, b)
        self._scale_in_bounds("mul", self._meta(a)[1] * self._meta(b)[1], lv)
        out = self._s.Ciphertext()
        with _seal_errors("mul"):
            self._ev.multiply(ra, rb, out)
        return self._ct_out(out)

    def relinearize(self, ct: Ciphertext) -> Ciphertext:
        raw = self._own(ct, Ciphertext, "relinearize")
        self._need_relin("relinearize", ct)
        out = self._s.Ciphertext()
        with _seal_errors("relinearize"):
            self._ev.relinearize(raw, self._rk, out)
        return self._ct_out(out)

    def rescale(self, ct: Ciphertext) -> Ciphertext:
        raw = self._own(ct, Ciphertext, "rescale")
        self._rescale_level(ct)
        out = self._s.Ciphertext()
        with _seal_errors("rescale"):
            self._ev.rescale_to_next(raw, out)
        return self._ct_out(out)

    def mod_switch_to(self, ct_or_pt: Ciphertext | Plaintext, level: int) -> Ciphertext | Plaintext:
        if isinstance(ct_or_pt, Plaintext):
            raw = self._own(ct_or_pt, Plaintext, "mod_switch_to")
            lv = self._target_level(ct_or_pt, level)
            out_pt = self._s.Plaintext()
            with _seal_errors("mod_switch_to"):
                self._ev.mod_switch_to(raw, self._parms_ids[lv], out_pt)
            return Plaintext(out_pt, self.fingerprint)
        raw = self._own(ct_or_pt, Ciphertext, "mod_switch_to")
        lv = self._target_level(ct_or_pt, level)
        self._scale_in_bounds("mod_switch_to", self._meta(ct_or_pt)[1], lv)
        out = self._s.Ciphertext()
        with _seal_errors("mod_switch_to"):
            self._ev.mod_switch_to(raw, self._parms_ids[lv], out)
        return self._ct_out(out)

    def rotate(self, ct: Ciphertext, steps: int) -> Ciphertext:
        raw = self._own(ct, Ciphertext, "rotate")
        plan = self.rotation_plan(steps)  # refuses a missing key with the same message as the emulator
        self._size2("rotate", ct)
        out = self._s.Ciphertext()
        with _seal_errors("rotate"):
            if not plan:
                self._ev.mod_switch_to(raw, raw.parms_id(), out)  # a copy
            else:
                self._ev.rotate_vector(raw, int(steps), self._gk, out)
        return self._ct_out(out)

    # -- serialisation -------------------------------------------------------------------------
    def serialize_ciphertext(self, ct: Ciphertext) -> bytes:
        raw = self._own(ct, Ciphertext, "serialize_ciphertext")
        with _seal_errors("serialize_ciphertext"):
            return self._frame(KIND_CIPHERTEXT, _SealIO.dump(raw))

    def deserialize_ciphertext(self, data: bytes) -> Ciphertext:
        payload = self._unframe(data, KIND_CIPHERTEXT)
        inflated_size(payload, self.params.ciphertext_bytes(self.params.levels, 3) + SEAL_SLACK,
                      "deserialize_ciphertext: the ciphertext")
        with _seal_errors("deserialize_ciphertext"):
            raw = _SealIO.load(self._s.Ciphertext(), self._ctx, payload)
        if tuple(raw.parms_id()) not in self._level_of:
            raise CkksError("deserialize_ciphertext: the ciphertext is not at a data level of this context")
        return self._ct_out(raw)

    def serialize_plaintext(self, pt: Plaintext) -> bytes:
        raw = self._own(pt, Plaintext, "serialize_plaintext")
        return self._frame(KIND_PLAINTEXT, _SealIO.dump(raw))

    def deserialize_plaintext(self, data: bytes) -> Plaintext:
        payload = self._unframe(data, KIND_PLAINTEXT)
        inflated_size(payload, self.params.plaintext_bytes(self.params.levels) + SEAL_SLACK,
                      "deserialize_plaintext: the plaintext")
        with _seal_errors("deserialize_plaintext"):
            raw = _SealIO.load(self._s.Plaintext(), self._ctx, payload)
        return Plaintext(raw, self.fingerprint)

    def _context_parts(self, kind: int, *, galois: bool = True) -> tuple[JsonDict, list[tuple[str, bytes]]]:
        """The JSON header and the sections of a context of ``kind`` (``galois``: with the
        compact Galois keys)."""
        self._need_public("public_context")
        sections = [("public", self._blobs["public"])]
        if "relin" in self._blobs:
            sections.append(("relin", self._blobs["relin"]))
        if galois and self._galois:
            sections.append(("galois", self._compact_galois()))
        if kind == KIND_SECRET:
            self._need_secret("secret_context")
            sections.append(("secret", _SealIO.dump(self._sk)))
        header: JsonDict = {"params": self.params.to_dict(), "galois": sorted(self._galois.items()),
                  "insecure_study": self.insecure_study}
        return header, sections

    def _context(self, kind: int) -> bytes:
        header, sections = self._context_parts(kind)
        return self._frame(kind, pack_sections(header, sections))

    def _compact_galois(self) -> bytes:
        """The Galois keys as a context carries them (seeded, compressed): kept since keygen,
        or read from the key file the keys came from (:meth:`load_key_file`)."""
        if "galois" not in self._blobs:
            if self._compact_source is None:
                raise CkksError("public_context: the compact Galois keys are missing")  # not reached: keygen keeps them
            path, identity, region = self._compact_source
            self._blobs["galois"] = read_region(path, identity, region, KEY_FILE_WHAT, max_bytes=MAX_CONTEXT_BYTES)
        return self._blobs["galois"]

    @classmethod
    def _from_context(cls, data: bytes, kind: int, insecure_study: bool) -> "SealBackend":
        params, header, sec, key_id = load_context_header(cls.name, data, kind)
        return cls._rebuild(params, header, sec, key_id, kind, insecure_study)

    @classmethod
    def _rebuild(cls, params: CkksParams, header: JsonDict, sec: dict[str, bytes], key_id: bytes, kind: int,
                 insecure_study: bool, galois: Callable[["SealBackend"], "sealapi.GaloisKeys"] | None = None,
                 relin: Callable[["SealBackend"], "sealapi.RelinKeys"] | None = None) -> "SealBackend":
        """A backend from a context's checked header and sections; ``galois`` loads the Galois
        keys from elsewhere (a key file) when the sections do not hold them, ``relin`` the
        relinearisation key (the sections keep its compact form, for contexts)."""
        what = f"serialised {KIND_NAMES[kind]}"
        if "public" not in sec or (kind == KIND_SECRET and "secret" not in sec):
            raise CkksError(f"{what} lacks its keys")
        _check_inflation(sec, inflate_limits(params, _galois_count(header, params, what)), what)
        self = cls(params, insecure_study=insecure_study)
        s = self._s
        with _seal_errors("load context"):
            self._pk = _SealIO.load(s.PublicKey(), self._ctx, sec["public"])
            if "relin" in sec:
                self._rk = relin(self) if relin is not None else _SealIO.load(s.RelinKeys(), self._ctx, sec["relin"])
            if "galois" in sec:
                self._gk = _SealIO.load(s.GaloisKeys(), self._ctx, sec["galois"])
            elif galois is not None:
                self._gk = galois(self)
            if kind == KIND_SECRET:
                self._sk = _SealIO.load(s.SecretKey(), self._ctx, sec["secret"])
        if self.key_set_id(sec["public"]) != key_id:
            raise CkksError("the context's public key does not match its key id")
        self._blobs = {k: v for k, v in sec.items() if k != "secret"}
        self._key_id = key_id
        self._has_relin = "relin" in sec
        self._galois = dict(galois_steps(header, KIND_NAMES[kind]))
        self._encryptor = s.Encryptor(self._ctx, self._pk)
        if kind == KIND_SECRET:
            self._has_secret = True
            self._decryptor = s.Decryptor(self._ctx, self._sk)
            self._kg = s.KeyGenerator(self._ctx, self._sk)
        return self

    # -- key files (:mod:`.keyfile`) -------------------------------------------------------------
    def save_key_file(self, path: str | os.PathLike[str]) -> Path:
        """Every key as a key file: the Galois keys whole and uncompressed from byte 0 (SEAL
        reads them back at the speed of a copy), their compact form beside them (read only for
        a context), the rest framed. Without Galois keys, the secret context itself."""
        self._need_secret("save_key_file")
        if self._gk is None:
            return super().save_key_file(path)
        compact = self._compact_galois()
        whole = _SealIO.dump(self._gk)  # SEAL's own save: the whole keys, compressed
        limit = len(self._galois) * (self.params.ksk_bytes + SEAL_SLACK) + SEAL_SLACK
        regions = [("galois", uncompressed(whole, limit, "save_key_file: the Galois keys")), ("galois-compact", [compact])]
        if self._rk is not None:  # whole too: SEAL reads it 3.5 times faster than the seeded form
            regions.append(("relin", uncompressed(_SealIO.dump(self._rk), self.params.ksk_bytes + SEAL_SLACK,
                                                  "save_key_file: the relinearisation key")))

        def frame_for(spec: JsonDict) -> bytes:
            header, sections = self._context_parts(KIND_SECRET, galois=False)
            return self._frame(KIND_SECRET, pack_sections({**header, "regions": spec}, sections))

        return write_key_file(path, regions, frame_for, KEY_FILE_WHAT)

    @classmethod
    def load_key_file(cls, path: str | os.PathLike[str], *, error: type[CryptoffloadError] = CkksError,
                      insecure_study: bool = False) -> "SealBackend":
        """The keys :meth:`save_key_file` wrote (or a secret context saved as a file), from a
        private file only; ``error``: the class of a refusal by the rule for secrets, any other
        refusal (garbled, corrupted, another backend) a :class:`CkksError`."""
        with open_key_file(path, KEY_FILE_WHAT, max_bytes=MAX_CONTEXT_BYTES, error=error) as kf:
            if not kf.is_key_file:
                return cls._from_context(kf.whole(), KIND_SECRET, insecure_study)
            params, header, sec, key_id = load_context_header(cls.name, kf.frame(), KIND_SECRET)
            bulk, compact, relin = _key_file_regions(kf, header, params, "relin" in sec)

            def galois(be: "SealBackend") -> "sealapi.GaloisKeys":
                gk = be._s.GaloisKeys()
                where = kf.library_path(bulk)
                if where is not None:
                    gk.load(be._ctx, where)  # straight from the checked descriptor: no copy
                    return gk
                return _SealIO.load(gk, be._ctx, kf.read(bulk))

            def relin_keys(be: "SealBackend", region: Region) -> "sealapi.RelinKeys":
                view = kf.view(region)
                try:
                    return _SealIO.load(be._s.RelinKeys(), be._ctx, view)
                finally:
                    view.release()

            be = cls._rebuild(params, header, sec, key_id, KIND_SECRET, insecure_study, galois,
                              None if relin is None else functools.partial(relin_keys, region=relin))
            be._compact_source = (kf.path, kf.identity, compact)
        return be

    # -- encoded plaintexts kept in a file (:mod:`.keyfile`'s layout) ----------------------------
    def save_plaintext_file(self, path: str | os.PathLike[str], plaintexts: Sequence[Plaintext]) -> Path:
        """``plaintexts`` as one private file, uncompressed one after another (read back at the
        speed of a copy, where encoding them again costs 2 ms each), bound to this key set."""
        self._need_public("save_plaintext_file")
        limit = self.params.plaintext_bytes(self.params.levels) + SEAL_SLACK
        blobs = [b"".join(uncompressed(_SealIO.dump(self._own(pt, Plaintext, "save_plaintext_file")), limit,
                                       "save_plaintext_file")) for pt in plaintexts]

        def frame_for(spec: JsonDict) -> bytes:
            return self._frame(KIND_PLAINTEXT, json.dumps({"regions": spec, "sizes": [len(b) for b in blobs]}).encode())

        return write_key_file(path, [("plaintexts", blobs)], frame_for, PLAINTEXT_FILE_WHAT)

    def load_plaintext_file(self, path: str | os.PathLike[str], *,
                            error: type[CryptoffloadError] = CkksError) -> list[Plaintext]:
        """The plaintexts :meth:`save_plaintext_file` wrote, from a private file only, refused
        (:class:`CkksError`) when garbled, corrupted, or made for another key set or parameters."""
        self._need_public("load_plaintext_file")
        what = f"the {PLAINTEXT_FILE_WHAT} file {path}"
        with open_key_file(path, PLAINTEXT_FILE_WHAT, max_bytes=MAX_CONTEXT_BYTES, error=error) as kf:
            if not kf.is_key_file:
                raise CkksError(f"{what} is not a plaintext file; remove it")
            header = frame_header(self._unframe(kf.frame(), KIND_PLAINTEXT), what)
            region = kf.region(header, "plaintexts")
            sizes = listed_sizes(header, region.size, self.params.plaintext_bytes(self.params.levels) + SEAL_SLACK, what)
            kf.check(region, "plaintext")
            data = kf.view(region)  # in place: staged for SEAL straight from the page cache
            try:
                blobs = [data[at - n: at] for n, at in zip(sizes, itertools.accumulate(sizes))]
                if any(parse_seal_header(b, what).compr_mode != COMPR_NONE for b in blobs):
                    raise CkksError(f"{what}: a plaintext is compressed; the file keeps them whole (remove it)")
                with _seal_errors("load_plaintext_file"):
                    raws = _SealIO.load_each(self._s.Plaintext, self._ctx, blobs)
            finally:
                for b in blobs:
                    b.release()
                data.release()
        if any(tuple(raw.parms_id()) not in self._level_of for raw in raws):
            raise CkksError(f"{what}: a plaintext is not at a data level of this context (remove it)")
        return [Plaintext(raw, self.fingerprint) for raw in raws]

    def measured_key_bytes(self) -> dict[str, int]:
        """Key sizes counted from SEAL's key objects (checks :meth:`key_bytes`' formula)."""
        out: dict[str, int] = {}

        def size(keys: Sequence[sealapi.PublicKey]) -> int:
            return sum(pk.data().size() * pk.data().coeff_modulus_size() * self.params.poly_modulus_degree
                       * WORD_BYTES for pk in keys)

        if self._rk is not None:
            out["relin"] = sum(size(v) for v in self._rk.data())
        if self._gk is not None:
            for step, name in self._galois.items():
                out[name] = size(self._gk.key(self._galois_elt(step)))
        return out

    def serialized_key_bytes(self) -> dict[str, int]:
        """Sizes of the compact (seeded, compressed) serialised keys, as shipped in contexts."""
        return {k: len(v) for k, v in self._blobs.items()}
