"""Integers <-> the GPU kernels' limb arrays, modulus contexts, and the DJN exponents.

Layout (what every kernel reads): a batch of numbers is a ``(width, count)`` ``uint32`` array,
*limb-major* -- limb j of number i at ``[j, i]`` -- so the 32 threads of a warp load 32
consecutive words; one shared number is ``width`` contiguous little-endian words.
"""

from __future__ import annotations

import secrets
from typing import Sequence

import numpy as np

from cryptoffload.errors import ConfigError


def to_limbs(values: Sequence[int], width: int) -> np.ndarray:
    """Non-negative integers as a (width, count) ``uint32`` array, limb-major (what the kernels
    read: limb j of value i at [j, i])."""
    size = 4 * width
    try:
        buf = b"".join(v.to_bytes(size, "little") for v in values)
    except OverflowError:
        raise ConfigError(f"a value does not fit in {32 * width} bits (or is negative)") from None
    except AttributeError:
        raise ConfigError("values must be integers") from None
    return np.ascontiguousarray(np.frombuffer(buf, dtype="<u4").reshape(len(values), width).T)


def from_limbs(arr: np.ndarray) -> list[int]:
    """The integers of a (width, count) limb-major array."""
    width, count = arr.shape
    data = np.ascontiguousarray(np.asarray(arr, dtype="<u4").T).tobytes()
    size = 4 * width
    frm = int.from_bytes
    return [frm(data[i * size:(i + 1) * size], "little") for i in range(count)]


def number_words(value: int, width: int) -> np.ndarray:
    """One integer as ``width`` contiguous little-endian 32-bit words."""
    return np.frombuffer(value.to_bytes(4 * width, "little"), dtype="<u4").astype(np.uint32)


def context_words(m: int, width: int) -> np.ndarray:
    """A modulus context as the kernels read it: m, R mod m, R^2 mod m (R = 2^(32 width)),
    then -m^-1 mod 2^32."""
    if m < 3 or m % 2 == 0:
        raise ConfigError("the GPU kernels need an odd modulus > 2 (Montgomery arithmetic)")
    if m.bit_length() > 32 * width:
        raise ConfigError(f"modulus of {m.bit_length()} bits does not fit {width} limbs")
    r = (1 << (32 * width)) % m
    minv = (-pow(m, -1, 1 << 32)) % (1 << 32)
    return np.concatenate([number_words(m, width), number_words(r, width), number_words(r * r % m, width),
                           np.array([minv], dtype=np.uint32)])


def random_exponents(count: int, exp_bits: int) -> np.ndarray:
    """``count`` uniform exponents of ``exp_bits`` bits from the OS CSPRNG (``secrets``), as a
    (limbs, count) limb-major array: the DJN randomness, drawn on the host."""
    ew = -(-exp_bits // 32)
    raw = np.frombuffer(secrets.token_bytes(4 * ew * count), dtype="<u4").reshape(count, ew).copy()
    top = exp_bits - 32 * (ew - 1)
    if top < 32:
        raw[:, ew - 1] &= np.uint32((1 << top) - 1)
    return np.ascontiguousarray(raw.T.astype(np.uint32))


def check_limbs_below(arr: np.ndarray, bound: int, width: int, what: str) -> np.ndarray:
    """``arr`` as a (width, count) ``uint32`` limb array whose every column is < ``bound``
    (compared limb by limb from the top, vectorised), else :class:`ConfigError`."""
    if not isinstance(arr, np.ndarray) or arr.ndim != 2 or arr.shape[0] != width or arr.dtype != np.uint32:
        raise ConfigError(f"{what} must be a uint32 limb array of shape ({width}, count)")
    b = number_words(bound, width)
    lt = np.zeros(arr.shape[1], dtype=bool)
    eq = np.ones(arr.shape[1], dtype=bool)
    for j in range(width - 1, -1, -1):
        lt |= eq & (arr[j] < b[j])
        eq &= arr[j] == b[j]
    if not lt.all():
        raise ConfigError(f"{what}: value {int(np.argmin(lt))} is not below the {bound.bit_length()}-bit bound")
    return arr


def check_range(values: Sequence[int], bound: int, what: str) -> list[int]:
    """``values`` as a list, each an int in [0, ``bound``), else :class:`ConfigError` naming
    ``what`` (checked whole, before any of it reaches a device)."""
    out = list(values)
    for v in out:
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < bound:
            raise ConfigError(f"{what} must be integers in [0, {bound.bit_length()}-bit bound)")
    return out
