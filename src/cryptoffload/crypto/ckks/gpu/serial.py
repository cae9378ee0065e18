"""Byte layouts of RNS-CKKS objects inside the project's frames (:func:`~cryptoffload.crypto.ckks.framing.pack_frame`).

Residues are below ``2**31``, so they travel as little-endian 4-byte words (half the memory
words' size), rows in the ring's row order. Every reader checks the exact length and that each
residue is below its prime before anything is built from it, so a garbled payload that slipped
past the frame's checksum (or was framed by a buggy writer) is refused with a
:class:`~cryptoffload.crypto.ckks.errors.CkksError`, not turned into a ciphertext.

Ciphertext and plaintext payload: ``<HBHd`` (level, size, rows, scale) then the residues
``(size, rows, N)`` (a plaintext has size 1). Contexts are JSON-headed sections (the SEAL
adapter's layout): ``public`` ``(2, K, N)``, ``relin`` ``(G, 2, K, N)``, ``galois`` (one such key
per listed step, in the header's order), ``conj``, and in secret contexts ``secret`` (the
``N`` ternary coefficients as signed bytes).
"""

from __future__ import annotations

import math
import struct
from typing import Callable

import numpy as np

from cryptoffload.crypto.ckks.errors import CkksError

OBJ_HEADER = struct.Struct("<HBHd")


def residues_to_bytes(arr: np.ndarray) -> bytes:
    return np.ascontiguousarray(arr, dtype="<u4").tobytes()


def residues_from_bytes(blob: bytes, shape: tuple[int, ...], q: np.ndarray, what: str) -> np.ndarray:
    """Residues of ``shape`` (last two axes: rows, N) checked against the rows' primes ``q``."""
    need = 4 * math.prod(shape)
    if len(blob) != need:
        raise CkksError(f"malformed {what}: {len(blob)} bytes of residues, expected {need}")
    arr = np.frombuffer(blob, dtype="<u4").reshape(shape).astype(np.uint64)
    if np.any(arr >= q.reshape((len(q), 1))):
        raise CkksError(f"malformed {what}: a residue is not below its prime")
    return arr


def pack_object(level: int, scale: float, data: np.ndarray) -> bytes:
    """Payload of a ciphertext ``(size, rows, N)`` or plaintext ``(rows, N)``."""
    arr = data if data.ndim == 3 else data[None]
    return OBJ_HEADER.pack(level, arr.shape[0], arr.shape[1], scale) + residues_to_bytes(arr)


def unpack_object(payload: bytes, what: str, n: int, top: int, limbs_of: Callable[[int], int], q: np.ndarray,
                  sizes: tuple[int, ...]) -> tuple[int, float, np.ndarray]:
    """``(level, scale, residues (size, rows, N))``, every field checked (``limbs_of(level)``:
    rows at a level; ``sizes``: the sizes allowed)."""
    if len(payload) < OBJ_HEADER.size:
        raise CkksError(f"malformed {what}: truncated header")
    level, size, rows, scale = OBJ_HEADER.unpack_from(payload)
    if not 0 <= level <= top:
        raise CkksError(f"malformed {what}: level {level} outside 0..{top}")
    if size not in sizes:
        raise CkksError(f"malformed {what}: size {size}, expected one of {list(sizes)}")
    if rows != limbs_of(level):
        raise CkksError(f"malformed {what}: {rows} rows at level {level}, expected {limbs_of(level)}")
    if not (math.isfinite(scale) and scale > 0):
        raise CkksError(f"malformed {what}: scale {scale!r}")
    data = residues_from_bytes(payload[OBJ_HEADER.size:], (size, rows, n), q[:rows], what)
    return level, scale, data


def secret_to_bytes(small: np.ndarray) -> bytes:
    return np.ascontiguousarray(small, dtype=np.int8).tobytes()


def secret_from_bytes(blob: bytes, n: int) -> np.ndarray:
    if len(blob) != n:
        raise CkksError(f"malformed secret key: {len(blob)} bytes, expected {n}")
    s = np.frombuffer(blob, dtype=np.int8).copy()
    if np.any(np.abs(s.astype(np.int64)) > 1):
        raise CkksError("malformed secret key: coefficients must be -1, 0 or 1")
    return s
