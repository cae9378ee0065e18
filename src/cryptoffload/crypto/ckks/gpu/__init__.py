"""Leveled RNS-CKKS written once over an array module: ``gpu`` (CuPy) and its CPU twin ``gpu-twin``.

Layers inside the package (each imports only those above it): :mod:`.chain` (which primes),
:mod:`.ring` (NTT tables, CRT constants), :mod:`.arith_ref` / :mod:`.arith_numba` /
:mod:`.arith_cuda` (the hot loops) behind :mod:`.arith` (dispatch on the array module),
:mod:`.encoder` and :mod:`.sampling` (host side), :mod:`.keyswitch`, :mod:`.scheme` (the
mathematics on raw arrays), :mod:`.serial`, :mod:`.device`, :mod:`.backend` (the project's CKKS
interface). The CUDA path: ``kernels.cu`` (one source; ``kernels_host.cpp`` compiles it for the
CPU twin), :mod:`.launch` (every launch, on CuPy or on the host build), :mod:`.convplan` (one
conversion launch for many ModUp/ModDown/rescale jobs), :mod:`.keystore` (evaluation keys and
Galois permutations stacked on the device), :mod:`.arith_compose` (the batched ops composed
from primitives where there is no fused kernel), :mod:`.capture` (a CUDA graph of a whole
program). Bootstrapping's parts (issue 33): :mod:`.dnum` (the special modulus for a chosen
number of key-switching digits), :mod:`.modraise` (level 0 lifted to the chain), :mod:`.sparse`
(the sparse-secret encapsulation), the constants and complex slots in :mod:`.scheme`;
:mod:`.context` holds the keys of public and secret contexts. Where to start: :mod:`.backend`,
then :mod:`.scheme`. Design, parameters and security: ``docs/crypto/ckks-gpu.md``.
"""

from cryptoffload.crypto.ckks.gpu.backend import GpuCkksBackend, RnsCkksBackend

__all__ = ["GpuCkksBackend", "RnsCkksBackend"]
