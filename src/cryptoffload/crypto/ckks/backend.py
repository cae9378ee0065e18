"""The CKKS interface every backend implements, the checks the adapters share, and the handles.

Why one interface: the HE-CNN application must run on real encryption (Microsoft SEAL, OpenFHE
where installed, a GPU), on a fast exact emulator for packing tests and on the recording
backend that writes its op trace, so it is written once against :class:`CkksBackend`.
:class:`CheckedBackend` holds the checks (levels, scales, sizes, key sets, rotation plans) so
that every adapter refuses the same misuse with the same :class:`CkksError` message -- CKKS
libraries refuse mixed levels, and a silent scale mismatch gives wrong numbers.

Handles: :class:`Ciphertext` and :class:`Plaintext` wrap the library's object together with
the fingerprint of the key set that made it. Why: SEAL gives two key sets with the same
parameters the same ``parms_id``, so it would add a ciphertext of another key set (or decrypt
it) without complaint, producing garbage; the owner lets every op refuse it.
"""

from __future__ import annotations

import hashlib
import math
import os
from abc import ABC, abstractmethod
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from cryptoffload.crypto.ckks.batched import BatchedOps
from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan
from cryptoffload.crypto.ckks.constants import constant_scale, slot_constant
from cryptoffload.crypto.ckks.errors import CkksError
from cryptoffload.crypto.ckks.framing import KIND_PUBLIC, KIND_SECRET, pack_frame, unpack_frame
from cryptoffload.crypto.ckks.params import CkksParams
from cryptoffload.crypto.ckks.primes import coeff_modulus_primes
from cryptoffload.crypto.ckks.rotations import power_of_two_steps, rotation_plan
from cryptoffload.errors import ConfigError, CryptoffloadError
from cryptoffload.private_files import read_private, write_private

MAX_CONTEXT_BYTES = 4 * 1024**3  # a secret context with every rotation key at N = 2^16

__all__ = ["CheckedBackend", "Ciphertext", "CkksBackend", "Handle", "Plaintext", "library_errors"]


class _Handle:
    """The library's object (``raw``, whatever the library gives: Any) and the fingerprint of
    the key set that made it (``owner``); see the module docstring for why both."""

    __slots__ = ("raw", "owner", "__weakref__")

    def __init__(self, raw: Any, owner: bytes) -> None:
        self.raw = raw
        self.owner = owner

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {type(self.raw).__name__} key set {self.owner.hex()[:8]}>"


class Ciphertext(_Handle):
    """An encrypted vector: the library's object (``raw``) and the fingerprint of its key set.

    Opaque to applications: ask the backend for ``level``/``scale``/sizes. Adapters create it
    with ``Ciphertext(raw, backend.fingerprint)``.
    """

    __slots__ = ()


class Plaintext(_Handle):
    """An encoded (not encrypted) vector at a level and scale, bound to its context like a ciphertext."""

    __slots__ = ()


#: a ciphertext or a plaintext, given back as the same type (``label``)
Handle = TypeVar("Handle", Ciphertext, Plaintext)


@contextmanager
def library_errors(op: str, library: str, describe: Callable[[BaseException], str] = str) -> Iterator[None]:
    """Turn what a native library raises for a refused call (C++ ``std::invalid_argument`` and
    ``logic_error`` arrive as ``ValueError``/``RuntimeError``) into a :class:`CkksError` naming
    the op and the library; our own errors pass unchanged."""
    try:
        yield
    except CryptoffloadError:
        raise
    except (RuntimeError, ValueError, TypeError, IndexError) as exc:
        raise CkksError(f"{op}: {library} refused: {describe(exc)}") from exc


def _are_close(a: float, b: float) -> bool:
    """SEAL's ``util::are_close``: how strictly two scales must agree for an addition."""
    return bool(abs(a - b) < np.finfo(float).eps * max(abs(a), abs(b), 1.0))


class CkksBackend(BatchedOps["Ciphertext", "Plaintext"], ABC):
    """CKKS on real-valued slot vectors. Every method returns new objects (inputs are not changed).

    The abstract methods are the contract other code is written against; the concrete ones
    (``sub_plain``, ``rotation_plan``, contexts to disk, ...) have defaults an adapter may
    improve.
    """

    name: str = "abstract"
    params: CkksParams
    #: The data primes of the modulus chain, level 0 first (SEAL's: :class:`CheckedBackend`
    #: sets them; a recording backend reads its inner backend's).
    primes: tuple[int, ...]
    #: True when ``rotate_many`` shares the key-switch decomposition across steps (hoisting).
    hoists_rotations: bool = False
    #: Slot ``j`` is the plaintext polynomial's value at ``zeta**(g**j)`` (``zeta`` a primitive
    #: 2N-th root of unity) for this generator ``g``: 3 in SEAL (and the emulator, which follows
    #: it), 5 in HEAAN, OpenFHE and the RNS backends. Rotations shift the slots alike either way;
    #: what depends on it is the map between slots and coefficients -- the DFT matrices of a
    #: bootstrap's CoeffToSlot and SlotToCoeff.
    slot_generator: int = 3

    @property
    def slots(self) -> int:
        return self.params.slots

    @property
    def can_decrypt(self) -> bool:
        """False for a server-side backend built from a public context."""
        return True

    # -- keys ----------------------------------------------------------------------------
    @abstractmethod
    def keygen(self, rotations: Sequence[int] | None = None, relin: bool = True) -> None:
        """Make secret, public, relinearisation and Galois keys (``None``: power-of-two steps)."""

    # -- encoding and encryption -----------------------------------------------------------
    @abstractmethod
    def encode(self, values: ArrayLike, *, like: Ciphertext | None = None, level: int | None = None,
               scale: float | None = None) -> Plaintext: ...

    @abstractmethod
    def encrypt(self, values: ArrayLike) -> Ciphertext: ...

    @abstractmethod
    def decrypt(self, ct: Ciphertext) -> np.ndarray: ...

    # -- arithmetic ---------------------------------------------------------------------
    @abstractmethod
    def add(self, a: Ciphertext, b: Ciphertext) -> Ciphertext: ...

    @abstractmethod
    def sub(self, a: Ciphertext, b: Ciphertext) -> Ciphertext: ...

    @abstractmethod
    def negate(self, a: Ciphertext) -> Ciphertext: ...

    @abstractmethod
    def add_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext: ...

    @abstractmethod
    def mul_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext: ...

    @abstractmethod
    def mul(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """Ciphertext product *without* relinearisation (size 3)."""

    @abstractmethod
    def relinearize(self, ct: Ciphertext) -> Ciphertext: ...

    @abstractmethod
    def rescale(self, ct: Ciphertext) -> Ciphertext:
        """Drop the last prime of the level, dividing the scale by it."""

    @abstractmethod
    def mod_switch_to(self, ct_or_pt: Ciphertext | Plaintext, level: int) -> Ciphertext | Plaintext:
        """Drop limbs down to ``level`` without rescaling."""

    @abstractmethod
    def rotate(self, ct: Ciphertext, steps: int) -> Ciphertext:
        """Left rotation by ``steps`` (negative: right)."""

    @abstractmethod
    def rotate_many(self, ct: Ciphertext, steps: Sequence[int]) -> list[Ciphertext]: ...

    # -- bookkeeping ---------------------------------------------------------------------
    @abstractmethod
    def level(self, ct: Ciphertext | Plaintext) -> int: ...

    @abstractmethod
    def scale(self, ct: Ciphertext | Plaintext) -> float: ...

    @abstractmethod
    def size(self, ct: Ciphertext) -> int:
        """Number of polynomials (2, or 3 after ``mul``)."""

    @abstractmethod
    def ciphertext_bytes(self, ct: Ciphertext) -> int: ...

    @abstractmethod
    def plaintext_bytes(self, pt: Plaintext) -> int: ...

    @abstractmethod
    def key_bytes(self) -> dict[str, int]: ...

    # -- serialisation -------------------------------------------------------------------
    @abstractmethod
    def serialize_ciphertext(self, ct: Ciphertext) -> bytes: ...

    @abstractmethod
    def deserialize_ciphertext(self, data: bytes) -> Ciphertext: ...

    @abstractmethod
    def public_context(self) -> bytes: ...

    @classmethod
    @abstractmethod
    def from_public_context(cls, data: bytes) -> "CkksBackend": ...

    # -- program annotations: a recording backend keeps them, every other backend ignores them
    def set_phase(self, name: str | None) -> None:
        """Label the ops that follow (a layer such as ``conv1``), so an algorithm annotates its
        trace without asking whether it is being recorded."""

    def label(self, obj: Handle, name: str) -> Handle:
        """Name a value (a stored weight, the client's image) and return it unchanged."""
        return obj

    def encode_at(self, value: float, like: Ciphertext, name: str) -> Plaintext:
        """The constant ``value`` encoded at ``like``'s level (default scale), labelled ``name``."""
        return self.label(self.encode(value, level=self.level(like)), name)

    # -- asynchronous devices ----------------------------------------------------------------
    def synchronize(self) -> None:
        """Wait until the work queued so far has finished. Why: a device backend (a GPU) queues
        its kernels and returns before they ran, so a timer stopped right after an op measures
        the launch, and the unfinished work lands in whatever is timed next; every timer of
        CKKS work therefore waits here before starting and before stopping
        (:func:`~cryptoffload.crypto.ckks.timing.timed`). The CPU backends finish each op
        before returning: nothing to wait for (this default)."""

    # -- optional, with defaults -----------------------------------------------------------
    def sub_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        """``ct - pt``; default: add the negated encoding (adapters may use the library's op)."""
        return self.add_plain(ct, self.encode(-self._pt_values(pt), like=ct))

    def _pt_values(self, pt: Plaintext) -> np.ndarray:
        raise CkksError(f"{self.name}: sub_plain is not supported")

    # -- bootstrapping's parts (complex slots, constants, conjugation, mod-raise) -------------
    # Defaults for a library without them: the constant ops go through encode and a plaintext
    # op (what SEAL would do anyway); the others refuse, naming the backend.
    def encode_complex(self, values: ArrayLike, *, like: Ciphertext | None = None, level: int | None = None,
                       scale: float | None = None) -> Plaintext:
        """Complex slot values (a scalar fills every slot) at a level and scale."""
        raise CkksError(f"encode_complex: the {self.name} backend encodes real slot values only "
                        "(complex slots: gpu, gpu-twin, emulator)")

    def encrypt_complex(self, values: ArrayLike, *, level: int | None = None,
                        scale: float | None = None) -> Ciphertext:
        raise CkksError(f"encrypt_complex: the {self.name} backend encrypts real slot values only")

    def encode_for_rotations(self, values: ArrayLike, *, level: int, scale: float) -> Plaintext:
        """Complex slot values encoded for :meth:`baby_giant_sums` (a backend that sums products
        of rotations in its extended basis encodes them there); default: :meth:`encode_complex`."""
        return self.encode_complex(values, level=level, scale=scale)

    def decrypt_complex(self, ct: Ciphertext) -> np.ndarray:
        """The complex slots (``decrypt`` gives their real parts)."""
        raise CkksError(f"decrypt_complex: the {self.name} backend decrypts real slot values only")

    def mul_const(self, ct: Ciphertext, value: complex, *, scale: float | None = None) -> Ciphertext:
        """``ct`` times ``value`` in every slot, the constant encoded at ``scale`` (default: the
        parameters' scale) as ``round(value * scale)``: the result's scale is ``scale(ct) *
        scale`` at the same level (``scale=1`` multiplies exactly by an integer). Default: encode
        the constant at the ciphertext's level, then ``mul_plain``."""
        c = slot_constant("mul_const", value)
        sc = constant_scale("mul_const", scale, self.params.scale)
        lv = self.level(ct)
        pt = (self.encode(c.real, level=lv, scale=sc) if c.imag == 0
              else self.encode_complex(c, level=lv, scale=sc))
        return self.mul_plain(ct, pt)

    def add_const(self, ct: Ciphertext, value: complex) -> Ciphertext:
        """``ct`` plus ``value`` in every slot (encoded at the ciphertext's scale). Default:
        ``add_plain`` of the encoded constant."""
        c = slot_constant("add_const", value)
        return self.add_plain(ct, self.encode(c.real, like=ct) if c.imag == 0 else self.encode_complex(c, like=ct))

    def conjugate(self, ct: Ciphertext) -> Ciphertext:
        """Complex conjugation of the slots (a Galois automorphism with its own key)."""
        raise CkksError(f"conjugate: the {self.name} backend has no conjugation (gpu, gpu-twin, emulator do)")

    def mod_raise(self, ct: Ciphertext, level: int | None = None) -> Ciphertext:
        """Bootstrapping's first step: a size-2 ciphertext at level 0, its coefficients read
        modulo the level's modulus ``q_0`` and lifted to ``level`` (default: the top), so that
        it decrypts to ``m + q_0 I`` for a small integer polynomial ``I``; same scale."""
        raise CkksError(f"mod_raise: the {self.name} backend cannot raise a ciphertext's modulus "
                        "(bootstrapping's parts are the gpu backends')")

    def mod_raise_keys(self) -> list[str]:
        """Names of the keys :meth:`mod_raise` uses (as in :meth:`key_bytes`; none by default)."""
        return []

    # -- bootstrapping: the RNS backends run crypto/ckks/bootstrap/ on themselves, OpenFHE its own
    def bootstrap_setup(self, plan: BootstrapPlan | None = None) -> dict[str, float]:
        """Make the keys and precompute what a bootstrap with ``plan`` (default:
        :class:`~.bootstrap.plan.BootstrapPlan`'s) needs; the seconds each part took."""
        raise CkksError(f"bootstrap_setup: the {self.name} backend cannot bootstrap (gpu, gpu-twin and openfhe can)")

    def bootstrap(self, ct: Ciphertext) -> Ciphertext:
        """A ciphertext of the same values with fresh levels (after :meth:`bootstrap_setup`)."""
        raise CkksError(f"bootstrap: the {self.name} backend cannot bootstrap (gpu, gpu-twin and openfhe can)")

    def rotation_plan(self, steps: int) -> list[str]:
        """Names (``galois:<step>``) of the keys a rotation by ``steps`` applies, in order."""
        return [] if steps % self.slots == 0 else [f"galois:{steps}"]

    def secret_context(self) -> bytes:
        raise CkksError(f"the {self.name} backend cannot export its secret context")

    @classmethod
    def from_secret_context(cls, data: bytes) -> "CkksBackend":
        raise CkksError(f"the {cls.name} backend cannot import a secret context")

    def save_secret_context(self, path: str | os.PathLike[str]) -> Path:
        """Persist the client's keys as a private file (:mod:`cryptoffload.private_files`):
        readable by the owner only (0600 from creation, so the secret key is never briefly
        world-readable), atomically (never half a key file), never through a link, only into a
        folder no other user can write."""
        return write_private(path, self.secret_context(), "CKKS secret context", overwrite=True)

    @classmethod
    def load_secret_context(cls, path: str | os.PathLike[str]) -> "CkksBackend":
        """The client's keys back, from a private file only (ours, 0600, not a link, in folders
        only we or root can write): a planted context would encrypt under its planter's key."""
        data = read_private(path, "CKKS secret context", max_bytes=MAX_CONTEXT_BYTES, error=CkksError)
        return cls.from_secret_context(data)

    def save_key_file(self, path: str | os.PathLike[str]) -> Path:
        """Every key as a private file laid out to be read back fast, for a key folder that the
        next call reads (:mod:`.keyfile`; SEAL's keeps its Galois keys whole, 2.6 times the
        disk space of a secret context); by default the secret context
        (:meth:`save_secret_context`). The same rule for secrets."""
        return self.save_secret_context(path)

    @classmethod
    def load_key_file(cls, path: str | os.PathLike[str], *,
                      error: type[CryptoffloadError] = CkksError) -> "CkksBackend":
        """The keys :meth:`save_key_file` wrote, from a private file only; ``error``: the class
        of a refusal by the rule for secrets (any other refusal is a :class:`CkksError`)."""
        data = read_private(path, "CKKS key", max_bytes=MAX_CONTEXT_BYTES, error=error)
        return cls.from_secret_context(data)

    #: the library (and its version) that computes, for the names of files it made: "" when
    #: this package computes (the emulator, the gpu backends)
    library = ""

    #: whether encoded plaintexts can be kept in a file (:meth:`save_plaintext_file`): where
    #: reading them back beats encoding them again (SEAL's)
    keeps_plaintexts = False

    def save_plaintext_file(self, path: str | os.PathLike[str], plaintexts: Sequence[Plaintext]) -> Path:
        """Encoded plaintexts as one private file bound to this key set, read back by
        :meth:`load_plaintext_file` (where :attr:`keeps_plaintexts`)."""
        raise CkksError(f"save_plaintext_file: the {self.name} backend keeps no plaintexts in files")

    def load_plaintext_file(self, path: str | os.PathLike[str], *,
                            error: type[CryptoffloadError] = CkksError) -> list[Plaintext]:
        raise CkksError(f"load_plaintext_file: the {self.name} backend keeps no plaintexts in files")


class CheckedBackend(CkksBackend):
    """Checks and key registry shared by the adapters (SEAL, the emulator, OpenFHE), so
    all refuse the same misuse with the same message (the emulator exists to find packing
    mistakes before they cost a real run)."""

    def __init__(self, params: CkksParams, *, insecure_study: bool = False) -> None:
        if not isinstance(params, CkksParams):
            raise ConfigError(f"params must be a CkksParams, got {type(params).__name__}")
        params.check_security(insecure_study)
        self.params = params
        #: the modulus chain values live on, for their sizes (an adapter with more levels than
        #: ``params``, such as OpenFHE with bootstrapping, extends it)
        self._chain = params
        self.insecure_study = insecure_study
        # SEAL's primes; a special modulus beyond one prime (the RNS backends') has none here
        bits = params.coeff_mod_bits if params.single_special_prime else params.coeff_mod_bits[:-1]
        self.primes = coeff_modulus_primes(params.poly_modulus_degree, bits)
        # bits of the product of the data primes of each level: SEAL's scale bound at that level
        self._level_bits = [math.prod(self.primes[: lv + 1]).bit_length() for lv in range(params.levels + 1)]
        self._key_id: bytes | None = None
        self._fp_cache: tuple[bytes, bytes] | None = None
        self._has_secret = False
        self._has_relin = False
        self._galois: dict[int, str] = {}  # step mod slots -> key name (galois:<step as asked>)

    # -- identity ------------------------------------------------------------------------
    @property
    def key_id(self) -> bytes:
        if self._key_id is None:
            raise CkksError(f"{self.name}: no keys yet; call keygen() first")
        return self._key_id

    @property
    def fingerprint(self) -> bytes:
        """Identifies parameters + key set: what a ciphertext must match to be used here."""
        kid = self.key_id
        cached = self._fp_cache
        if cached is None or cached[0] != kid:
            fp = hashlib.blake2b(self.params.digest() + kid + self.name.encode(), digest_size=16).digest()
            self._fp_cache = cached = (kid, fp)
        return cached[1]

    @property
    def can_decrypt(self) -> bool:
        return self._has_secret

    @property
    def rotation_steps(self) -> list[int]:
        """Steps with a Galois key of their own (as passed to keygen)."""
        return [int(n.split(":", 1)[1]) for n in self._galois.values()]

    @property
    def has_relin_keys(self) -> bool:
        return self._has_relin

    def _normalise_steps(self, rotations: Sequence[int] | None) -> dict[int, str]:
        steps = power_of_two_steps(self.slots) if rotations is None else list(rotations)
        out: dict[int, str] = {}
        for s in steps:
            if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
                raise CkksError(f"rotation steps must be integers, got {s!r}")
            s = int(s)
            if abs(s) >= self.slots:
                raise CkksError(f"rotation step {s} is out of range: |step| < slots = {self.slots}")
            if s % self.slots == 0:
                continue  # rotation by 0 needs no key
            out.setdefault(s % self.slots, f"galois:{s}")
        return out

    @abstractmethod
    def decode(self, pt: Plaintext) -> np.ndarray:
        """A plaintext's slot values (every adapter can decode, with or without a secret key)."""

    def _pt_values(self, pt: Plaintext) -> np.ndarray:
        return self.decode(pt)

    def add_rotation_keys(self, steps: Sequence[int]) -> None:
        """Keys for more rotation steps in the current key set (same secret key, same key id):
        only the steps without a key yet are made."""
        self._need_secret("add_rotation_keys")
        new = {k: v for k, v in self._normalise_steps(steps).items() if k not in self._galois}
        if new:
            self._add_galois(new)

    def _add_galois(self, steps: dict[int, str]) -> None:
        """Make the keys of ``steps`` (step mod slots -> key name, none of them made yet) and
        record them in ``_galois``. This default only records them (a backend whose keys are
        not objects, the emulator); a library adapter runs its key generation."""
        self._galois.update(steps)

    # -- validation helpers -------------------------------------------------------------------
    @abstractmethod
    def _meta(self, obj: Ciphertext | Plaintext) -> tuple[int, float, int]:
        """``(level, scale, size)`` of an object already checked to be ours (size 1 for plaintexts)."""

    def _own(self, obj: object, kind: type[_Handle] | tuple[type[_Handle], ...], op: str) -> Any:
        if not isinstance(obj, kind):
            what = " or ".join(k.__name__ for k in kind) if isinstance(kind, tuple) else kind.__name__
            raise CkksError(f"{op}: expected a {what}, got {type(obj).__name__}")
        if obj.owner != self.fingerprint:
            raise CkksError(f"{op}: the {type(obj).__name__.lower()} belongs to another context or key set "
                            f"({obj.owner.hex()[:8]}, this one {self.fingerprint.hex()[:8]})")
        return obj.raw

    def _same_level(self, op: str, a: Ciphertext | Plaintext, b: Ciphertext | Plaintext) -> int:
        la, lb = self._meta(a)[0], self._meta(b)[0]
        if la != lb:
            raise CkksError(f"{op}: level mismatch ({la} vs {lb}); mod_switch_to the lower level first")
        return la

    def _summands(self, op: str, a: Ciphertext, b: Ciphertext) -> tuple[Any, Any]:
        """The library objects of two ciphertexts that may be added (or subtracted): both ours,
        at one level and one scale."""
        ra, rb = self._own(a, Ciphertext, op), self._own(b, Ciphertext, op)
        self._same_level(op, a, b)
        self._same_scale(op, a, b)
        return ra, rb

    def _same_scale(self, op: str, a: Ciphertext | Plaintext, b: Ciphertext | Plaintext) -> None:
        self._scales_agree(op, self._meta(a)[1], self._meta(b)[1])

    def _scales_agree(self, op: str, sa: float, sb: float) -> None:
        if not _are_close(sa, sb):
            raise CkksError(f"{op}: scale mismatch (2^{math.log2(sa):.4f} vs 2^{math.log2(sb):.4f}); encode the "
                            "plaintext with like=ct, or rescale both operands the same way")

    def _scale_in_bounds(self, op: str, scale: float, level: int) -> None:
        """SEAL's ``is_scale_within_bounds``: log2(scale) below the modulus bits at the level."""
        if not scale > 0 or int(math.log2(scale)) >= self._level_bits[level]:
            raise CkksError(f"{op}: scale 2^{math.log2(scale) if scale > 0 else float('nan'):.1f} is out of bounds "
                            f"at level {level} ({self._level_bits[level]}-bit modulus); rescale first")

    def _size2(self, op: str, ct: Ciphertext) -> None:
        size = self._meta(ct)[2]
        if size != 2:
            raise CkksError(f"{op}: needs a size-2 ciphertext, got size {size}; relinearize first")

    def _need_relin(self, op: str, ct: Ciphertext) -> None:
        size = self._meta(ct)[2]
        if not self._has_relin:
            raise CkksError(f"{op}: no relinearisation key (keygen(relin=True))")
        if size == 2:
            raise CkksError(f"{op}: the ciphertext is already size 2 (relinearize once, after mul)")
        if size > 3:
            raise CkksError(f"{op}: size {size} needs more relinearisation keys than exist; "
                            "relinearize after every mul")

    def _need_secret(self, op: str) -> None:
        if not self._has_secret:
            raise CkksError(f"{op}: this backend holds no secret key (built from a public context, or no keygen)")

    def _need_public(self, op: str) -> None:
        if self._key_id is None:
            raise CkksError(f"{op}: no keys yet; call keygen() first")

    def _rescale_level(self, ct: Ciphertext) -> int:
        lv = self._meta(ct)[0]
        if lv == 0:
            raise CkksError("rescale: the ciphertext is at level 0 (end of the modulus chain); "
                            "the program needs more levels than the parameters give")
        return lv

    def _raise_target(self, ct: Ciphertext, level: int | None) -> int:
        """The level a ``mod_raise`` of ``ct`` goes to (default: the top), after checking that
        ``ct`` is a size-2 ciphertext at level 0."""
        self._size2("mod_raise", ct)
        cur = self._meta(ct)[0]
        if cur != 0:
            raise CkksError(f"mod_raise: the ciphertext is at level {cur}; mod_switch_to(ct, 0) first "
                            "(the raise reads its coefficients modulo the last prime group)")
        top = self.params.levels
        target = top if level is None else level
        if isinstance(target, bool) or not isinstance(target, (int, np.integer)) or not 0 < target <= top:
            raise CkksError(f"mod_raise: the target level must be between 1 and {top}, got {level!r}")
        return int(target)

    def _target_level(self, obj: Ciphertext | Plaintext, level: int) -> int:
        cur = self._meta(obj)[0]
        if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or not 0 <= level <= cur:
            raise CkksError(f"mod_switch_to: target level {level!r} must be between 0 and the current level {cur}")
        return int(level)

    def rotation_plan(self, steps: int) -> list[str]:
        """SEAL's rotation plan over this key set (:func:`~.rotations.rotation_plan`); a missing
        key is refused with the same message on every backend."""
        return rotation_plan(steps, self._galois, self.slots)


    # -- values ----------------------------------------------------------------------------
    def _values(self, values: object, op: str = "encode") -> np.ndarray:
        """Real slot vector, zero-padded to ``slots``; a scalar fills every slot (as SEAL's
        scalar encode does)."""
        if isinstance(values, Plaintext):
            raise CkksError(f"{op}: values are already a Plaintext")
        arr = np.asarray(values)
        if arr.dtype.kind == "c":
            if np.any(arr.imag != 0):
                raise CkksError(f"{op}: only real values are supported")
            arr = arr.real
        try:
            arr = np.asarray(arr, dtype=np.float64)
        except (TypeError, ValueError):
            raise CkksError(f"{op}: values must be real numbers") from None
        if arr.ndim == 0:
            arr = np.full(self.slots, float(arr))
        if arr.ndim != 1:
            raise CkksError(f"{op}: values must be one-dimensional, got shape {arr.shape}")
        if arr.size > self.slots:
            raise CkksError(f"{op}: {arr.size} values do not fit in {self.slots} slots")
        if not np.all(np.isfinite(arr)):
            raise CkksError(f"{op}: values must be finite")
        if arr.size < self.slots:
            arr = np.concatenate([arr, np.zeros(self.slots - arr.size)])
        return arr

    def _encode_target(self, like: Ciphertext | None, level: int | None, scale: float | None) -> tuple[int, float]:
        if like is not None:
            if level is not None or scale is not None:
                raise CkksError("encode: give like= or level=/scale=, not both")
            self._own(like, Ciphertext, "encode(like=)")
            lv, sc, _ = self._meta(like)
            return lv, sc
        lv = self.params.levels if level is None else level
        if isinstance(lv, bool) or not isinstance(lv, (int, np.integer)) or not 0 <= lv <= self.params.levels:
            raise CkksError(f"encode: level {level!r} must be between 0 and {self.params.levels}")
        sc = self.params.scale if scale is None else float(scale)
        # SEAL's encoder bound: log2(scale) + 1 below the modulus bits
        if not sc > 0 or int(math.log2(sc)) + 1 >= self._level_bits[int(lv)]:
            raise CkksError(f"encode: scale {sc!r} is out of bounds at level {lv} ({self._level_bits[int(lv)]} bits)")
        return int(lv), sc

    # -- bookkeeping -------------------------------------------------------------------------
    def level(self, ct: Ciphertext | Plaintext) -> int:
        self._own(ct, (Ciphertext, Plaintext), "level")
        return self._meta(ct)[0]

    def scale(self, ct: Ciphertext | Plaintext) -> float:
        self._own(ct, (Ciphertext, Plaintext), "scale")
        return self._meta(ct)[1]

    def size(self, ct: Ciphertext) -> int:
        """Number of polynomials (2, or 3 after mul)."""
        self._own(ct, Ciphertext, "size")
        return self._meta(ct)[2]

    def ciphertext_bytes(self, ct: Ciphertext) -> int:
        self._own(ct, Ciphertext, "ciphertext_bytes")
        lv, _, size = self._meta(ct)
        return self._chain.ciphertext_bytes(lv, size)

    def plaintext_bytes(self, pt: Plaintext) -> int:
        self._own(pt, Plaintext, "plaintext_bytes")
        return self._chain.plaintext_bytes(self._meta(pt)[0])

    def key_bytes(self) -> dict[str, int]:
        """In-memory sizes of the evaluation keys, SEAL's layout (one RLWE pair over all primes
        per data prime), named as in traces."""
        out: dict[str, int] = {}
        if self._has_relin:
            out["relin"] = self.params.ksk_bytes
        for name in self._galois.values():
            out[name] = self.params.ksk_bytes
        return out

    def rotate_many(self, ct: Ciphertext, steps: Sequence[int]) -> list[Ciphertext]:
        """Not hoisted: SEAL's API has no hoisted rotation (the key-switch decomposition of the
        input is recomputed per step), so this loops; the emulator does the same."""
        return [self.rotate(ct, s) for s in steps]

    # -- contexts: an adapter writes and reads its own (``_context``, ``_from_context``) ------
    @staticmethod
    def key_set_id(public_key: bytes) -> bytes:
        """The key-set id every frame carries: a digest of the serialised public key."""
        return hashlib.blake2b(public_key, digest_size=16, person=b"ckks-keyset").digest()

    @abstractmethod
    def _context(self, kind: int) -> bytes:
        """The framed context of ``kind`` (public: never the secret key)."""

    @classmethod
    @abstractmethod
    def _from_context(cls, data: bytes, kind: int, insecure_study: bool) -> "CheckedBackend":
        """A backend rebuilt from a framed context of ``kind``."""

    def public_context(self) -> bytes:
        """Parameters + public, relinearisation and Galois keys; never the secret key."""
        return self._context(KIND_PUBLIC)

    def secret_context(self) -> bytes:
        """Everything, secret key included: for the client to persist its keys (see
        :meth:`save_secret_context`, which writes with mode 0600)."""
        return self._context(KIND_SECRET)

    @classmethod
    def from_public_context(cls, data: bytes, *, insecure_study: bool = False) -> "CheckedBackend":
        """A server-side backend: evaluates (and encrypts) but cannot decrypt."""
        return cls._from_context(data, KIND_PUBLIC, insecure_study)

    @classmethod
    def from_secret_context(cls, data: bytes, *, insecure_study: bool = False) -> "CheckedBackend":
        return cls._from_context(data, KIND_SECRET, insecure_study)

    def _frame(self, kind: int, payload: bytes) -> bytes:
        return pack_frame(kind, self.name, self.params.digest(), self.key_id, payload)

    def _unframe(self, data: bytes, kind: int) -> bytes:
        return unpack_frame(data, kind, self.name, self.params.digest(), self.key_id)[0]
