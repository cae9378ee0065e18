"""Paillier on the GPU kernels: DJN encryption, CRT decryption, products and column products.

The algorithms here are written once against :class:`~cryptoffload.crypto._native.gpu_interface.Runtime`
and so run on a CUDA GPU (CuPy) or on the CPU twin of the same kernels; they produce exactly
the integers of :mod:`cryptoffload.crypto.paillier` (tested against Python's ``pow`` and the
CPU keys on the twin, and on a GPU by the same tests when one is present).

* :mod:`.limbs` -- integers <-> the kernels' limb arrays, modulus contexts, the DJN exponents
  drawn on the host from the operating system's CSPRNG (``secrets``), never on the GPU.
* :mod:`.modulus` -- :class:`Modulus`: one odd modulus on one device; batched products,
  exponentiations (constant time in the exponents' values, over a public exponent length)
  and column products kept on the device between levels.
* :mod:`.encryptor` -- :class:`GpuPaillier`: one public key's fixed-base table on the device;
  encryption (constant-time lookups by default, like the CPU ``Encryptor``), homomorphic
  addition, scalar multiplication, aggregation.
* :mod:`.decryptor` -- :class:`GpuDecryptor`: constant-time CRT decryption with the private key
  resident on the device until :meth:`~GpuDecryptor.close`, which overwrites it with zeros.

What it needs: numpy, and CuPy for a GPU. It does not import gmpy2, phe or the native CPU core;
the key objects it takes come from :mod:`cryptoffload.crypto.paillier`, whose key *generation*
needs gmpy2 (the package's dependency), so on a machine with only CuPy and numpy, keys are
loaded from files or built elsewhere.
"""

from cryptoffload.crypto.paillier_gpu.decryptor import GpuDecryptor, private_key_blob
from cryptoffload.crypto.paillier_gpu.encryptor import (
    DEFAULT_GPU_WINDOWS, DEFAULT_MAX_TABLE_BYTES, GpuPaillier, default_gpu_window)
from cryptoffload.crypto.paillier_gpu.limbs import (
    check_limbs_below, check_range, context_words, from_limbs, number_words, random_exponents, to_limbs)
from cryptoffload.crypto.paillier_gpu.modulus import REDUCE_GROUP, Modulus

__all__ = ["DEFAULT_GPU_WINDOWS", "DEFAULT_MAX_TABLE_BYTES", "REDUCE_GROUP", "GpuDecryptor", "GpuPaillier", "Modulus",
           "check_limbs_below", "check_range", "context_words", "default_gpu_window", "from_limbs", "number_words",
           "private_key_blob", "random_exponents", "to_limbs"]
