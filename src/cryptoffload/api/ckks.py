"""CKKS for Python users: a backend by name, encrypted vectors of real numbers, arithmetic and
rotations on them, decryption.

    >>> from cryptoffload import ckks
    >>> ctx = ckks.context("seal")                      # keys made here, from the OS's randomness
    >>> x = ctx.encrypt([1.0, 2.0, 3.0])
    >>> y = ctx.encrypt([0.5, 0.25, 2.0])
    >>> (x * y).decrypt().round(3)                      # approximate: CKKS is
    array([0.5, 0.5, 6. ])
    >>> (x + 1.5).rotate(1).decrypt().round(3)          # slot i of rotate(k) is slot i + k
    array([3.5, 4.5, 0. ])

A :class:`Context` is a backend of :mod:`cryptoffload.crypto.ckks` (``seal``: Microsoft SEAL
through TenSEAL; ``emulator``: exact arithmetic, NOT encryption, for tests; ``openfhe``, ``gpu``,
``gpu-twin`` where installed; :func:`backends` lists them) with its keys. A :class:`Vector` is
one ciphertext of up to ``ctx.slots`` real numbers; its operators do what CKKS needs around
them: a product is relinearised and rescaled (it uses one level: :data:`DEPTH_2_PARAMS`
allows two products in a row), operands at different levels are brought to the lower one,
plaintext operands (a number, a list, an array) are encoded at the ciphertext's level and
scale, and a rotation's Galois key is made the first time a step is used. Two ciphertexts
whose scales differ (a product plus a fresh ciphertext) are refused with the fix
(``ctx.encrypt(values, like=product)``): CKKS adds only values of one scale.

Results are approximate (about 1e-6 relative at the default parameters); ``decrypt`` returns
the first ``len(vector)`` slots. The full backend interface (levels, scales, serialisation,
``mod_switch_to``, ...) is ``ctx.backend``.
"""

from __future__ import annotations

import inspect
import numbers
import os
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import numpy.typing as npt

from cryptoffload.crypto.ckks import DEFAULT_PARAMS, CheckedBackend, Ciphertext, CkksError, CkksParams
from cryptoffload.crypto.ckks.registry import BACKENDS, backend_class, backend_from_context
from cryptoffload.crypto.ckks.timing import timed

Params = CkksParams
#: N = 8192, primes of 60, 40, 40 and 60 bits, scale 2^40: two products in a row, 4,096
#: slots, 128-bit security (200 of the 218 bits the standard allows at N = 8192); keys in a
#: fraction of a second. The facade's default.
DEPTH_2_PARAMS = CkksParams(8192, (60, 40, 40, 60), 40)
#: the parameters of the encrypted MNIST CNN (N = 16384, five levels of 30 bits)
HE_CNN_PARAMS = DEFAULT_PARAMS

__all__ = ["DEPTH_2_PARAMS", "HE_CNN_PARAMS", "CkksError", "Context", "Params", "Vector", "backends", "context",
           "load"]

Values = float | Sequence[float] | npt.NDArray[np.floating] | npt.NDArray[np.integer]


def backends() -> list[str]:
    """The registered backend names, the default (``seal``) first; some need a library or a
    GPU this machine may lack (:func:`context` says which)."""
    return list(BACKENDS)


def context(backend: str = "seal", params: CkksParams = DEPTH_2_PARAMS, *, rotations: Sequence[int] = (),
            insecure_study: bool = False) -> "Context":
    """A backend by name with fresh keys: secret, public, relinearisation, and Galois keys for
    ``rotations`` (others are made on first use). Parameters beyond 128-bit security are
    refused unless ``insecure_study``."""
    if not isinstance(params, CkksParams):
        raise CkksError(f"context: params must be a ckks.Params (CkksParams), got {type(params).__name__}")
    be = backend_class(backend)(params, insecure_study=insecure_study)
    with timed(be) as t:
        be.keygen(rotations=[int(s) for s in rotations], relin=True)
    return Context(be, keygen_seconds=t.seconds)


def load(path: str | os.PathLike[str]) -> "Context":
    """A context saved by :meth:`Context.save` (a private file: yours, 0600, not a link)."""
    from cryptoffload.crypto.ckks.backend import MAX_CONTEXT_BYTES
    from cryptoffload.private_files import read_private

    data = read_private(path, "CKKS secret context", max_bytes=MAX_CONTEXT_BYTES, error=CkksError)
    be = backend_from_context(data)
    if not isinstance(be, CheckedBackend):
        raise CkksError(f"load {path}: not a context this API can use ({type(be).__name__})")
    return Context(be)


class Context:
    """A keyed backend: encrypts to :class:`Vector`, decrypts them, makes rotation keys on
    demand. ``backend`` is the full interface; ``slots`` how many numbers one vector holds."""

    def __init__(self, backend: CheckedBackend, *, keygen_seconds: float = 0.0) -> None:
        self.backend = backend
        self.keygen_seconds = keygen_seconds

    def __repr__(self) -> str:
        p = self.params
        return (f"<ckks.Context {self.backend.name}, N = {p.poly_modulus_degree}, {p.levels} levels, "
                f"scale 2^{p.scale_bits}, {self.slots} slots>")

    @property
    def params(self) -> CkksParams:
        return self.backend.params

    @property
    def slots(self) -> int:
        return self.backend.slots

    def encrypt(self, values: Values, *, like: "Vector | None" = None) -> "Vector":
        """Encrypt up to ``slots`` real numbers (the rest of the slots hold 0). ``like``:
        encrypt at that vector's level and scale, so the two can be added."""
        arr = _vector(values, self.slots, "encrypt")
        if like is None:
            return Vector(self, self.backend.encrypt(arr), arr.size)
        like = self._own(like, "encrypt(like=)")
        if "level" not in inspect.signature(self.backend.encrypt).parameters:
            raise CkksError(f"encrypt(like=): the {self.backend.name} backend encrypts at the top level only")
        ct = self.backend.encrypt(arr, level=like.level, scale=like.scale)
        return Vector(self, ct, arr.size)

    def decrypt(self, vector: "Vector") -> npt.NDArray[np.float64]:
        """The first ``len(vector)`` slots, as float64 (approximate)."""
        vector = self._own(vector, "decrypt")
        return np.asarray(self.backend.decrypt(vector.ct)[: vector.length], dtype=np.float64)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write every key, the secret one included, as a private file (0600, atomically,
        never through a link, only in a folder no other user can write): :func:`load` reads it."""
        return self.backend.save_secret_context(path)

    def public_context(self) -> bytes:
        """Parameters and public, relinearisation and Galois keys -- never the secret key: what
        a server needs to evaluate (``crypto.ckks.backend_from_context`` rebuilds it)."""
        return self.backend.public_context()

    def _own(self, vector: object, op: str) -> "Vector":
        if not isinstance(vector, Vector):
            raise CkksError(f"{op}: expected a ckks.Vector, got {type(vector).__name__}")
        if vector.context is not self:
            raise CkksError(f"{op}: the vector belongs to another context (other keys); encrypt it with this one")
        return vector

    def _rotation_key(self, steps: int) -> None:
        """The Galois key of ``steps``, made now when this key set has none."""
        try:
            self.backend.rotation_plan(steps)
        except CkksError:
            self.backend.add_rotation_keys([steps])


def _vector(values: object, slots: int, op: str) -> npt.NDArray[np.float64]:
    """Real numbers as a 1-D float64 array of at most ``slots`` finite values."""
    if isinstance(values, (bool, np.bool_)):
        raise CkksError(f"{op}: values must be real numbers, got {values!r}")
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise CkksError(f"{op}: values must be real numbers (a number, a list or a 1-D array)") from None
    arr = arr.reshape(1) if arr.ndim == 0 else arr
    if arr.ndim != 1:
        raise CkksError(f"{op}: values must be one-dimensional, got shape {arr.shape}; flatten it (arr.ravel())")
    if arr.size > slots:
        raise CkksError(f"{op}: {arr.size:,} values do not fit the {slots:,} slots; split them or use a larger N")
    if not np.all(np.isfinite(arr)):
        raise CkksError(f"{op}: values must be finite")
    return arr


class Vector:
    """An encrypted vector of ``len(vector)`` real numbers (see the module docstring for what
    its operators do). ``level`` and ``scale`` are the ciphertext's."""

    def __init__(self, context: Context, ct: Ciphertext, length: int) -> None:
        self.context, self.ct, self.length = context, ct, length

    def __len__(self) -> int:
        return self.length

    def __repr__(self) -> str:
        return f"<ckks.Vector {self.length} values, level {self.level}, scale 2^{np.log2(self.scale):.2f}>"

    @property
    def level(self) -> int:
        return self.context.backend.level(self.ct)

    @property
    def scale(self) -> float:
        return self.context.backend.scale(self.ct)

    def decrypt(self) -> npt.NDArray[np.float64]:
        return self.context.decrypt(self)

    def _new(self, ct: Ciphertext, length: int | None = None) -> "Vector":
        return Vector(self.context, ct, self.length if length is None else length)

    def _plain(self, other: object, op: str) -> npt.NDArray[np.float64]:
        """A plaintext operand as ``length`` values (a number fills the vector's values, not
        the empty slots beyond them)."""
        if isinstance(other, numbers.Real) and not isinstance(other, bool):
            return np.full(self.length, float(other))
        return _vector(other, self.context.slots, op)

    def _pair(self, other: "Vector", op: str) -> tuple[Ciphertext, Ciphertext]:
        """Two ciphertexts at one level: the higher one switched down."""
        other = self.context._own(other, op)
        be, a, b = self.context.backend, self.ct, other.ct
        la, lb = be.level(a), be.level(b)
        if la > lb:
            a = be.mod_switch_to(a, lb)
        elif lb > la:
            b = be.mod_switch_to(b, la)
        return a, b

    def __add__(self, other: "Vector | Values") -> "Vector":
        be = self.context.backend
        if isinstance(other, Vector):
            a, b = self._pair(other, "add")
            return self._new(_scaled(be.add, a, b, "add"), max(self.length, other.length))
        arr = self._plain(other, "add")
        return self._new(be.add_plain(self.ct, be.encode(arr, like=self.ct)), max(self.length, arr.size))

    __radd__ = __add__

    def __neg__(self) -> "Vector":
        return self._new(self.context.backend.negate(self.ct))

    def __sub__(self, other: "Vector | Values") -> "Vector":
        if isinstance(other, Vector):
            return self + (-other)
        return self + (-self._plain(other, "sub"))

    def __rsub__(self, other: Values) -> "Vector":
        return (-self) + other

    def __mul__(self, other: "Vector | Values") -> "Vector":
        """The product, relinearised and rescaled (one level)."""
        be = self.context.backend
        if isinstance(other, Vector):
            a, b = self._pair(other, "mul")
            prod = be.relinearize(be.mul(a, b))
            return self._new(be.rescale(prod), max(self.length, other.length))
        if isinstance(other, numbers.Real) and not isinstance(other, bool):
            return self._new(be.rescale(be.mul_const(self.ct, float(other))))
        arr = self._plain(other, "mul")
        pt = be.encode(arr, level=be.level(self.ct))
        return self._new(be.rescale(be.mul_plain(self.ct, pt)), max(self.length, arr.size))

    __rmul__ = __mul__

    def rotate(self, steps: int) -> "Vector":
        """Slot ``i`` of the result is slot ``i + steps`` of this vector (cyclic over all the
        slots; negative: to the right)."""
        if isinstance(steps, bool) or not isinstance(steps, numbers.Integral):
            raise CkksError(f"rotate: steps must be an integer, got {steps!r}")
        self.context._rotation_key(int(steps))
        return self._new(self.context.backend.rotate(self.ct, int(steps)))

    def sum(self) -> "Vector":
        """The sum of every slot, in slot 0 (and every other slot): log2(slots) rotations."""
        total, step = self, 1
        while step < self.context.slots:
            total = total + total.rotate(step)
            step *= 2
        return Vector(self.context, total.ct, 1)


def _scaled(op: Callable[[Ciphertext, Ciphertext], Ciphertext], a: Ciphertext, b: Ciphertext,
            name: str) -> Ciphertext:
    """``op(a, b)``, its scale mismatch refused with the fix (CKKS adds values of one scale)."""
    try:
        return op(a, b)
    except CkksError as exc:
        if "scale mismatch" not in str(exc):
            raise
        raise CkksError(f"{name}: the two vectors have different scales (one is a product, rescaled by a prime "
                        f"close to but not the scale); encrypt the fresh one with ctx.encrypt(values, like=product), "
                        f"or multiply both to the same depth") from None
