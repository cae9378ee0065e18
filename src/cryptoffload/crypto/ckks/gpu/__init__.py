"""Leveled RNS-CKKS written once over an array module: ``gpu`` (CuPy) and its CPU twin ``gpu-twin``.

Layers inside the package (each imports only those above it): :mod:`.chain` (which primes),
:mod:`.ring` (NTT tables, CRT constants), :mod:`.arith_ref` / :mod:`.arith_numba` /
:mod:`.arith_cuda` (the hot loops) behind :mod:`.arith` (dispatch on the array module),
:mod:`.encoder` and :mod:`.sampling` (host side), :mod:`.keyswitch`, :mod:`.scheme` (the
mathematics on raw arrays), :mod:`.serial`, :mod:`.device`, :mod:`.backend` (the project's CKKS
interface). Design, parameters and security: ``docs/crypto/ckks-gpu.md``.
"""

from cryptoffload.crypto.ckks.gpu.backend import GpuCkksBackend, RnsCkksBackend

__all__ = ["GpuCkksBackend", "RnsCkksBackend"]
