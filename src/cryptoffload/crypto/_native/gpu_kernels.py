"""The kernels of ``paillier_gpu.cu``: names, widths and argument types, in one table.

Why a table: three things must agree on every kernel's signature -- the CUDA source, the cffi
declarations of the CPU twin (generated from this table by ``build_paillier_gpu.py``, so a
mismatch fails the twin's build), and the launches of the CuPy runtime (which converts each
argument to the numpy scalar type named here, since a raw kernel receives arguments by their
binary size). This module imports nothing, so the cffi builder can load it by path at install
time, before the package's dependencies exist.
"""

from __future__ import annotations

#: Limb widths (32-bit limbs) instantiated in the CPU twin; the GPU compiles one width per
#: module, on first use. 192 limbs = 6,144 bits: n^2 for n = 3,072.
WIDTHS: tuple[int, ...] = (16, 32, 48, 64, 96, 128, 192)

#: Argument types: ``u64``/``i32``/``u32`` scalars, ``in`` (read) and ``out`` (written) arrays
#: of 32-bit words.
KERNELS: dict[str, tuple[tuple[str, str], ...]] = {
    "mulmod": (("count", "u64"), ("a", "in"), ("b", "in"), ("ctx", "in"), ("out", "out")),
    "powm": (("count", "u64"), ("base", "in"), ("exp", "in"), ("ew", "i32"), ("ctx", "in"), ("out", "out")),
    "fb_table": (("k", "i32"), ("w", "i32"), ("chunk", "i32"), ("bases", "in"), ("ctx", "in"), ("table", "out")),
    "fb_encrypt": (("count", "u64"), ("msg", "in"), ("exp", "in"), ("ew", "i32"), ("table", "in"), ("k", "i32"),
                   ("w", "i32"), ("ct", "i32"), ("n", "in"), ("ctx", "in"), ("out", "out")),
    "col_reduce": (("rows", "u64"), ("cols", "u64"), ("group", "u64"), ("src", "in"), ("ctx", "in"),
                   ("out", "out")),
    "crt_decrypt": (("count", "u64"), ("cts", "in"), ("key", "in"), ("out", "out")),
}

C_TYPES = {"u64": "unsigned long long", "i32": "int", "u32": "unsigned int",
           "in": "const unsigned int *", "out": "unsigned int *"}


def symbol(kernel: str, width: int) -> str:
    """The C name of ``kernel`` at ``width`` limbs, e.g. ``copg_powm_64``."""
    return f"copg_{kernel}_{width}"


def cdef() -> str:
    """cffi declarations of every kernel at every width."""
    lines = []
    for width in WIDTHS:
        for name, args in KERNELS.items():
            params = ", ".join(f"{C_TYPES[t]} {a}" for a, t in args)
            lines.append(f"void {symbol(name, width)}({params});")
    return "\n".join(lines)
