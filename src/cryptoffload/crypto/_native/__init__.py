"""Native code: the Paillier core in C and the Paillier GPU kernels (CUDA with a CPU twin).

Built by ``pip install`` through cffi (:mod:`.build_paillier`, :mod:`.build_paillier_gpu`);
the extensions are optional at import time: where ``_paillier`` is missing (a source checkout
never installed), :mod:`cryptoffload.crypto.paillier` falls back to gmpy2.

* :mod:`.core` -- the C core's Python face (``paillier_core.c``: batched modular
  exponentiation, AVX512-IFMA where the CPU has it, fixed-base tables, column products): integers
  in, integers or word buffers out.
* The GPU kernels (``paillier_gpu.cu``): :mod:`.gpu_kernels` (their names, widths and argument
  types, one table), :mod:`.gpu_interface` (the ``Runtime`` interface the algorithms run on),
  :mod:`.gpu_cuda` (on a device, through CuPy), :mod:`.gpu_twin` (the same source compiled by
  g++ for the CPU, which CI tests), :mod:`.gpu_runtime` (pick one by name).
"""
