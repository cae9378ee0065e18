"""Paillier for Python users: keys, encryption of integers, floats and NumPy arrays, arithmetic
on ciphertexts, decryption, and ciphertext files.

    >>> from cryptoffload import paillier
    >>> keys = paillier.keygen()                        # 2048-bit, from the OS's randomness
    >>> a = paillier.encrypt(keys.public, [5, -17, 100])
    >>> b = paillier.encrypt(keys.public, [1, 2, 3])
    >>> paillier.decrypt(keys.private, a + b)           # element-wise, no private key needed
    [6, -15, 103]
    >>> paillier.decrypt(keys.private, paillier.sum(a))
    [88]
    >>> paillier.decrypt(keys.private, paillier.encrypt(keys.public, [0.5, -2.25]) * 3)
    [1.5, -6.75]

What an :class:`Encrypted` carries besides its ciphertexts, and why:

* **a bound** B with |m| <= B for every plaintext integer m (the same bound a ciphertext file
  records in its header, :mod:`cryptoffload.crypto.paillier.bounds`). ``add`` gives the sum of
  the bounds, ``sum`` count x bound, ``mul`` |k| x bound; a result whose bound could pass the
  key's signed limit n/3 is refused *before* it is computed -- Paillier computes modulo n, and
  a true value past the limit would decrypt to a small wrong number with nothing to say so.
  ``decrypt`` refuses a value outside its bound. The default bound is 2^64 (every 64-bit
  integer); give ``bound=`` to allow more additions (a smaller bound) or larger values. The
  bound is public: a file shows it in the clear, so it is never taken from the data.
* **the encoding**: integers as they are, or floats in fixed point with ``frac_bits``
  fractional bits -- x is the integer ``round(x * 2**F)``, F = 32 unless ``fixed_point=`` says
  otherwise (:mod:`cryptoffload.crypto.paillier.encoding`: resolution 2^-F, range |x| <= bound
  / 2^F, so 2^32 under the default bound at F = 32). Floats (Python or NumPy) are encoded this
  way unless ``fixed_point`` is given; integers exactly, unless it is. Operands of one
  operation share one encoding.
* **a shape**, for NumPy arrays: :func:`decrypt_array` gives the array back.

Results are rerandomized (multiplied by a fresh encryption of 0) unless ``rerandomize=False``:
``c1 * c2`` and ``c^k`` are deterministic, so whoever saw the operands could recognise them.

Files: :func:`save` writes the command line's ciphertext format (versioned, the key's
fingerprint, the bound, a checksum), so ``cryptoffload paillier add/sum/mul/decrypt`` read
what the API writes and :func:`load` reads what they write; the fixed-point scale is not in
the file (``load(..., fixed_point=F)``, ``paillier decrypt --fixed-point F``).
"""

from __future__ import annotations

import builtins
import numbers
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Generic, Iterable, NamedTuple, Sequence, TypeVar, overload

import numpy as np
import numpy.typing as npt

from cryptoffload.apps import paillier_files as pf
from cryptoffload.crypto import paillier as pl
from cryptoffload.crypto.paillier import bounds
from cryptoffload.crypto.paillier.ciphertext import summed
from cryptoffload.crypto.paillier.service import ENCRYPTION
from cryptoffload.crypto.paillier.encoding import DEFAULT_FRAC_BITS
from cryptoffload.io import atomic_write, check_output_file, read_input

PublicKey = pl.PublicKey
PrivateKey = pl.PrivateKey
FixedPoint = pl.FixedPoint
PaillierError = pl.PaillierError
PlaintextRangeError = pl.PlaintextRangeError
KeyMismatchError = pl.KeyMismatchError
DEFAULT_BOUND = pl.DEFAULT_BOUND

__all__ = ["DEFAULT_BOUND", "DEFAULT_FRAC_BITS", "Encrypted", "FixedPoint", "KeyMismatchError", "KeyPair",
           "PaillierError", "PlaintextRangeError", "PrivateKey", "PublicKey", "add", "decrypt", "decrypt_array",
           "encrypt", "keygen", "load", "load_key", "mul", "save", "save_keys", "sum"]

#: the kind of plaintext an :class:`Encrypted` decrypts to: ``int`` or ``float``
V = TypeVar("V", int, float)
#: a number :func:`encrypt` takes (NumPy scalars of any width: their precision parameter's default)
Number = int | float | np.integer | np.floating


class KeyPair(NamedTuple):
    """A key pair from :func:`keygen`: encrypt with ``public``, decrypt with ``private``."""

    public: PublicKey
    private: PrivateKey


def keygen(bits: int = pl.DEFAULT_KEY_BITS, *, insecure_study_size: bool = False) -> KeyPair:
    """A fresh key pair, its primes from the OS's randomness. ``bits`` >= 2048 (112-bit
    security) unless ``insecure_study_size`` (to reproduce a paper's 1024-bit keys)."""
    pk, sk = pl.generate_keypair(bits, insecure_study_size=insecure_study_size)
    return KeyPair(pk, sk)


@dataclass(frozen=True, eq=False)
class Encrypted(Generic[V]):
    """Ciphertexts under one public key, with the bound of their plaintext integers, their
    encoding (``frac_bits``: 0 for integers) and, for an array, its shape (see the module
    docstring). Made by :func:`encrypt`, :func:`add`, :func:`sum`, :func:`mul`, :func:`load`;
    ``a + b`` is :func:`add`, ``a * k`` is :func:`mul`."""

    public_key: PublicKey
    ciphertexts: tuple[pl.Ciphertext, ...]
    bound: int
    frac_bits: int = 0
    shape: tuple[int, ...] | None = None

    def __len__(self) -> int:
        return len(self.ciphertexts)

    def __repr__(self) -> str:
        kind = f"fixed point 2^-{self.frac_bits}" if self.frac_bits else "integers"
        return (f"<Encrypted {len(self)} value{'s' if len(self) != 1 else ''} ({kind}, bound "
                f"{bounds.describe(self.bound)}, key {self.public_key.fingerprint.hex()[:16]})>")

    @property
    def value_bound(self) -> float:
        """The bound in the values' own units: ``bound / 2**frac_bits``."""
        return self.bound / (1 << self.frac_bits)

    def __add__(self, other: Encrypted[V]) -> Encrypted[V]:
        return add(self, other)

    def __mul__(self, scalar: int) -> Encrypted[V]:
        return mul(self, scalar)

    __rmul__ = __mul__


# -- encryption ----------------------------------------------------------------------------------


def _flat(values: object) -> tuple[list[object], tuple[int, ...] | None]:
    """The values as one list, and the array's shape (None for a list or a scalar)."""
    if isinstance(values, np.ndarray):
        if values.dtype.kind not in "iuf" and not (values.dtype.kind == "O"):
            raise PaillierError(f"encrypt: an array of {values.dtype} cannot be encrypted; give integers or floats")
        return values.reshape(-1).tolist(), tuple(values.shape)
    if isinstance(values, (numbers.Number, np.generic)):
        return [values], None
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise PaillierError(f"encrypt: values must be numbers, a sequence of numbers or a NumPy array, "
                            f"got {type(values).__name__}")
    return list(values), None


def _numbers(items: list[object]) -> list[int | float]:
    """Every item checked to be a real number (``bool`` is not one), as a Python ``int`` (an
    integral one, exactly) or ``float`` (the value a fixed-point encoding would read from it)."""
    out: list[int | float] = []
    for i, v in enumerate(items):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            raise PaillierError(f"encrypt: value {i} is {type(v).__name__} {v!r}, not a number")
        out.append(int(v) if isinstance(v, numbers.Integral) else float(v))
    return out


def _encoding(items: list[int | float], fixed_point: int | None) -> FixedPoint | None:
    """The fixed point the values are encoded with (None: integers as they are)."""
    if fixed_point is not None:
        return FixedPoint(fixed_point)
    if builtins.all(isinstance(v, int) for v in items):
        return None
    return FixedPoint(DEFAULT_FRAC_BITS)


def _integer_bound(pk: PublicKey, bound: float | None, fp: FixedPoint | None) -> int:
    """``bound=`` as the bound of the plaintext integers (the default: 2^64)."""
    if bound is None:
        chosen = DEFAULT_BOUND
    elif fp is not None:
        chosen = fp.bound_for(bound)
    elif isinstance(bound, numbers.Integral) and not isinstance(bound, bool):
        chosen = int(bound)
    else:
        raise PaillierError(f"encrypt: bound={bound!r} must be an integer for integer values (a float bound is for "
                            f"fixed-point values)")
    return bounds.check_bound(pk, chosen, "encrypt: bound=")


def _check_within(pk: PublicKey, ints: Sequence[int], bound: int, fp: FixedPoint | None, given: bool) -> None:
    """Every encoded value within ``bound``; the first that is not is named with the fix."""
    for i, m in enumerate(ints):
        if abs(m) <= bound:
            continue
        what = "bound=" if given else f"the default bound ({'2^64' if bound == DEFAULT_BOUND else bound})"
        if fp is None:
            raise PlaintextRangeError(f"encrypt: value {i} ({m:,}) is above {what}; pass bound= of at least {abs(m):,} "
                                      f"(at most n/3 of this {pk.bits}-bit key) or use a larger key")
        raise PlaintextRangeError(f"encrypt: value {i} ({fp.to_decimal(m)}) is above {what}, |x| <= "
                                  f"{fp.to_decimal(bound)} at {fp.frac_bits} fractional bits; pass bound= of at "
                                  f"least {fp.to_decimal(abs(m))}, fewer fractional bits (fixed_point=), or a "
                                  f"larger key")


@overload
def encrypt(  # type: ignore[overload-overlap]  # integers without fixed_point= stay integers
        public_key: PublicKey, values: int | Iterable[int] | npt.NDArray[np.integer], *,
            fixed_point: None = None, bound: int | None = None, backend: str = "auto") -> Encrypted[int]: ...


@overload
def encrypt(public_key: PublicKey, values: Number | Iterable[Number] | npt.NDArray[np.number | np.object_], *,
            fixed_point: int | None = None, bound: float | None = None, backend: str = "auto") -> Encrypted[float]: ...


def encrypt(public_key: PublicKey, values: object, *, fixed_point: int | None = None, bound: float | None = None,
            backend: str = "auto") -> Encrypted[int] | Encrypted[float]:
    """Encrypt a number, a sequence of numbers or a NumPy array (any shape) under
    ``public_key``. Integers are encrypted exactly; floats -- or everything, when
    ``fixed_point=F`` is given -- in fixed point with F fractional bits (32 by default).
    ``bound``: the largest |value| (in the values' units; default 2^64 for the integers, so
    2^(64 - F) for fixed point); a value above it is an error, never a wrapped number.
    ``backend``: the arithmetic (``auto``: the fastest this CPU runs; ``ifma``, ``adx``,
    ``gmp``, ``gmpy2``)."""
    if isinstance(public_key, PrivateKey):
        public_key = public_key.public_key
    if not isinstance(public_key, PublicKey):
        raise PaillierError(f"encrypt: public_key must be a PublicKey (keygen().public), got "
                            f"{type(public_key).__name__}")
    flat, shape = _flat(values)
    items = _numbers(flat)
    fp = _encoding(items, fixed_point)
    ints = [int(v) if fp is None else fp.to_int(v) for v in items]
    chosen = _integer_bound(public_key, bound, fp)
    _check_within(public_key, ints, chosen, fp, bound is not None)
    enc = ENCRYPTION.encryptor(public_key, backend)  # the backend, resolved once
    n = public_key.n
    cts = enc.ciphertexts([m % n for m in ints])  # |m| <= bound <= n/3, checked above: the signed encoding
    if fp is None:
        return Encrypted[int](public_key, tuple(cts), chosen, 0, shape)
    return Encrypted[float](public_key, tuple(cts), chosen, fp.frac_bits, shape)


# -- arithmetic ----------------------------------------------------------------------------------


def _same_kind(op: str, operands: Sequence[Encrypted[V]]) -> PublicKey:
    """The one public key and encoding of ``operands``; anything else is refused with the fix."""
    if not operands:
        raise PaillierError(f"{op}: give at least one Encrypted")
    first = operands[0]
    for i, other in enumerate(operands):
        if not isinstance(other, Encrypted):
            raise PaillierError(f"{op}: operand {i} is {type(other).__name__}, not an Encrypted (use encrypt())")
        if other.public_key != first.public_key:
            raise KeyMismatchError(f"{op}: operand {i} is encrypted under key {other.public_key.fingerprint.hex()[:16]}, "
                                   f"operand 0 under {first.public_key.fingerprint.hex()[:16]}; encrypt every operand "
                                   f"under one public key")
        if other.frac_bits != first.frac_bits:
            raise PaillierError(f"{op}: operand {i} has {other.frac_bits} fractional bits, operand 0 "
                                f"{first.frac_bits}; their sum would mean nothing: encrypt both with one fixed_point=")
    return first.public_key


def add(*operands: Encrypted[V], rerandomize: bool = True) -> Encrypted[V]:
    """Element-wise sum of two or more :class:`Encrypted` of one length (no private key
    needed); its bound, the sum of theirs, is checked against n/3 before anything is added."""
    if len(operands) < 2:
        raise PaillierError(f"add: give two or more Encrypted, got {len(operands)}")
    pk = _same_kind("add", operands)
    first = operands[0]
    for i, other in enumerate(operands[1:], 1):
        if len(other) != len(first) or (first.shape and other.shape and first.shape != other.shape):
            raise PaillierError(f"add: operand {i} holds {len(other)} values (shape {other.shape}), operand 0 "
                                f"{len(first)} (shape {first.shape}); add works element-wise on operands of one shape")
    bound = bounds.check_result(pk, builtins.sum(op.bound for op in operands),
                                f"add of {len(operands)} operands (the sum of their bounds)",
                                "add fewer operands, encrypt them with a smaller bound=, or use a larger key")
    total = [summed(pk, column) for column in zip(*(op.ciphertexts for op in operands))]
    return replace(first, ciphertexts=tuple(_fresh(pk, total, rerandomize)), bound=bound,
                   shape=first.shape or next((op.shape for op in operands if op.shape), None))


def sum(*operands: Encrypted[V], rerandomize: bool = True) -> Encrypted[V]:  # noqa: A001 -- paillier.sum, as in the CLI
    """One ciphertext encrypting the sum of every value of every operand; its bound, the sum of
    count x bound, is checked against n/3 first. The sum of nothing is 0."""
    pk = _same_kind("sum", operands)
    count = builtins.sum(len(op) for op in operands)
    bound = bounds.check_result(pk, builtins.sum(len(op) * op.bound for op in operands),
                                f"sum of {count:,} values (count x bound of each operand)",
                                "sum fewer values (sum parts and add the partial sums after decrypting), encrypt "
                                "with a smaller bound=, or use a larger key")
    total = summed(pk, (c for op in operands for c in op.ciphertexts))  # keys checked above, once
    return Encrypted(pk, tuple(_fresh(pk, [total], rerandomize)), bound, operands[0].frac_bits)


def mul(operand: Encrypted[V], scalar: int, *, rerandomize: bool = True) -> Encrypted[V]:
    """Every value times the signed integer ``scalar`` (fixed-point values keep their scale);
    the result's bound, |scalar| x the operand's, is checked first."""
    pk = _same_kind("mul", [operand])
    if isinstance(scalar, bool) or not isinstance(scalar, numbers.Integral):
        raise PaillierError(f"mul: the scalar must be an integer, got {type(scalar).__name__} {scalar!r} (a product "
                            f"of two fixed-point numbers would change the scale)")
    k = int(scalar)
    pf.check_scalar(pk, k)
    bound = bounds.check_result(pk, abs(k) * operand.bound,
                                f"mul by a {k.bit_length():,}-bit scalar (|k| x the operand's bound "
                                f"{bounds.describe(operand.bound)})",
                                "multiply by a smaller scalar, encrypt with a smaller bound=, or use a larger key")
    cts = [c * k for c in operand.ciphertexts]
    return replace(operand, ciphertexts=tuple(_fresh(pk, cts, rerandomize)), bound=bound)


def _fresh(pk: PublicKey, cts: list[pl.Ciphertext], rerandomize: bool) -> list[pl.Ciphertext]:
    """``cts`` rerandomized by the encryption service unless the caller said not to."""
    return ENCRYPTION.rerandomize(pk, cts) if rerandomize else cts


# -- decryption ----------------------------------------------------------------------------------


def _plaintexts(private_key: PrivateKey, encrypted: Encrypted[int] | Encrypted[float]) -> list[int]:
    """The signed plaintext integers, each checked against the bound."""
    if not isinstance(private_key, PrivateKey):
        raise PaillierError(f"decrypt: private_key must be a PrivateKey (keygen().private), got "
                            f"{type(private_key).__name__}")
    if not isinstance(encrypted, Encrypted):
        raise PaillierError(f"decrypt: expected an Encrypted, got {type(encrypted).__name__}")
    pk = private_key.public_key
    if encrypted.public_key != pk:
        raise KeyMismatchError(f"decrypt: the values are encrypted under key "
                               f"{encrypted.public_key.fingerprint.hex()[:16]}, not this private key's "
                               f"{pk.fingerprint.hex()[:16]}")
    out = []
    values = private_key.raw_decrypt_many([c.value for c in encrypted.ciphertexts])  # the key checked above, once
    for i, m in enumerate(values):
        value = bounds.decode_within(pk, m, encrypted.bound)
        if value is None:
            raise PlaintextRangeError(f"decrypt: value {i} lies outside its bound |m| <= "
                                      f"{bounds.describe(encrypted.bound)}: the ciphertexts are not what their "
                                      f"bound says (edited, or an overflow that escaped the checks)")
        out.append(value)
    return out


@overload
def decrypt(private_key: PrivateKey, encrypted: Encrypted[int]) -> list[int]: ...


@overload
def decrypt(private_key: PrivateKey, encrypted: Encrypted[float]) -> list[float]: ...


def decrypt(private_key: PrivateKey, encrypted: Encrypted[int] | Encrypted[float]) -> list[int] | list[float]:
    """The values, in order: ints, or floats for fixed point (correctly rounded from the exact
    fixed-point value). A value outside its bound is an error, never a number."""
    ints = _plaintexts(private_key, encrypted)
    fp = FixedPoint(encrypted.frac_bits) if encrypted.frac_bits else None
    return ints if fp is None else [fp.from_int(m) for m in ints]


def decrypt_array(private_key: PrivateKey, encrypted: Encrypted[int] | Encrypted[float]
                  ) -> npt.NDArray[np.float64 | np.int64 | np.object_]:
    """The values as a NumPy array of the shape that was encrypted (1-D for a sequence):
    float64 for fixed point, int64 for integers that fit it (else an array of Python ints)."""
    values = decrypt(private_key, encrypted)
    shape = encrypted.shape if encrypted.shape is not None else (len(values),)
    if encrypted.frac_bits:
        return np.asarray(values, dtype=np.float64).reshape(shape)
    limit = np.iinfo(np.int64).max
    dtype = np.int64 if builtins.all(-limit <= v <= limit for v in values) else object
    return np.asarray(values, dtype=dtype).reshape(shape)


# -- files ---------------------------------------------------------------------------------------


def save(encrypted: Encrypted[int] | Encrypted[float], path: str | os.PathLike[str], *,
         overwrite: bool = False) -> Path:
    """Write the ciphertexts as a ciphertext file (the command line's format, with the bound),
    all at once or not at all; an existing file is refused unless ``overwrite``."""
    if not isinstance(encrypted, Encrypted):
        raise PaillierError(f"save: expected an Encrypted, got {type(encrypted).__name__}")
    target = check_output_file(path, overwrite=overwrite)
    data = pl.ciphertexts_to_bytes(encrypted.ciphertexts, encrypted.public_key, bound=encrypted.bound)
    return atomic_write(target, data, overwrite=overwrite)


@overload
def load(key: PublicKey | PrivateKey, path: str | os.PathLike[str], *, fixed_point: None = None) -> Encrypted[int]: ...


@overload
def load(key: PublicKey | PrivateKey, path: str | os.PathLike[str], *, fixed_point: int) -> Encrypted[float]: ...


def load(key: PublicKey | PrivateKey, path: str | os.PathLike[str], *,
         fixed_point: int | None = None) -> Encrypted[int] | Encrypted[float]:
    """The ciphertexts of a ciphertext file made under ``key`` (yours, the command line's), with
    the bound its header records. The file does not record a fixed-point scale: give
    ``fixed_point=F`` for values encrypted with one."""
    pk = key.public_key if isinstance(key, PrivateKey) else key
    if not isinstance(pk, PublicKey):
        raise PaillierError(f"load: key must be a PublicKey or PrivateKey, got {type(key).__name__}")
    frac = 0 if fixed_point is None else FixedPoint(fixed_point).frac_bits
    data = read_input(path, "ciphertext file", max_bytes=pf.MAX_CIPHERTEXT_FILE_BYTES, error=PaillierError)
    try:
        frame = pl.frame_from_bytes(pk, data)
    except KeyMismatchError as exc:
        raise KeyMismatchError(f"load {path}: {exc}; load it with the key it was encrypted under") from None
    except PaillierError as exc:
        raise type(exc)(f"load {path}: {exc}; give a file written whole by paillier.save() or `cryptoffload "
                        f"paillier encrypt` (add, sum, mul)") from None
    if fixed_point is None:
        return Encrypted[int](pk, tuple(frame.ciphertexts), frame.bound, 0)
    return Encrypted[float](pk, tuple(frame.ciphertexts), frame.bound, frac)


def save_keys(keys: KeyPair, path: str | os.PathLike[str],
              public_path: str | os.PathLike[str] | None = None) -> tuple[Path, Path]:
    """Write the private key (0600, in a folder only you can write) and the public key
    (``path`` + ``.pub`` unless ``public_path``) as new files: the command line's key files."""
    target = Path(path)
    pub = Path(public_path) if public_path is not None else target.with_name(target.name + ".pub")
    return pl.save_keypair(keys.public, keys.private, target, pub)


def load_key(path: str | os.PathLike[str], *, insecure_study_size: bool = False) -> PublicKey | PrivateKey:
    """A key file, public or private (a private one must be yours and 0600); a key below 2048
    bits is refused unless ``insecure_study_size``."""
    return pl.load_key(path, insecure_study_size=insecure_study_size)
