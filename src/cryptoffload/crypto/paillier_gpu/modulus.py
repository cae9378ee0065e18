"""One odd modulus on one device: batched products, exponentiations and column products.

Exponentiation is constant time in the exponents' *values* (fixed 4-bit windows, always
squaring and multiplying, constant-time table selection; ``paillier_gpu.cu``), over a number of
exponent bits that is public: :meth:`Modulus.powm` processes ``exp_bits`` bits of every exponent.
Which exponents are secret, and the bound each caller passes:

=====================================  ==================  ===================================
call                                   exponent            ``exp_bits``
=====================================  ==================  ===================================
``GpuPaillier.scalar_multiply``        a scalar k < n      n's bit length (k may be secret)
engine, classic encryption g^m r^n     plaintext m < n;    n's bit length, for both
                                       n (public)
engine, ``modexp`` jobs                unknown             default: the modulus's bit length
=====================================  ==================  ===================================

The default pads every exponent to the modulus's length (or to the longest exponent, if one is
longer than the modulus: only the length above the modulus's is then visible), so a caller
that does not know whether its exponents are secret gets the safe choice. DJN encryption's
exponents and decryption's p - 1, q - 1 never pass here (their kernels fix the length).
"""

from __future__ import annotations

from typing import Sequence

from cryptoffload.crypto._native.gpu_runtime import DeviceWords, Runtime, Stream, width_for_bits
from cryptoffload.crypto.paillier_gpu.limbs import check_range, context_words, from_limbs, to_limbs
from cryptoffload.errors import ConfigError

#: Rows each thread multiplies sequentially per reduction level.
REDUCE_GROUP = 32


def stream_or_new(runtime: Runtime, stream: Stream | None) -> Stream:
    return stream if stream is not None else runtime.stream()


class Modulus:
    """One odd modulus on one device: its context uploaded once, shared by every stream."""

    def __init__(self, runtime: Runtime, m: int) -> None:
        self.runtime = runtime
        self.m = m
        self.width = width_for_bits(m.bit_length())
        self.r = (1 << (32 * self.width)) % m
        s = runtime.stream()
        self.ctx = runtime.upload(context_words(m, self.width), s)
        s.synchronize()

    def mulmod(self, a: Sequence[int], b: Sequence[int], stream: Stream | None = None) -> list[int]:
        """``a_i b_i mod m`` (all values in [0, m))."""
        a = check_range(a, self.m, "factors")
        b = check_range(b, self.m, "factors")
        if len(a) != len(b):
            raise ConfigError(f"{len(a)} factors against {len(b)}")
        if not a:
            return []
        rt, s = self.runtime, stream_or_new(self.runtime, stream)
        out = rt.empty((self.width, len(a)), s)
        rt.launch("mulmod", self.width, len(a),
                  (len(a), rt.upload(to_limbs(a, self.width), s), rt.upload(to_limbs(b, self.width), s), self.ctx, out), s)
        return from_limbs(rt.download(out, s))

    def exponent_bits(self, exps: Sequence[int], exp_bits: int | None) -> int:
        """The exponent bits a launch processes (module docstring): ``exp_bits`` after checking
        every exponent is below 2^exp_bits, or by default the modulus's bit length (the
        longest exponent's where that is longer)."""
        longest = max((e.bit_length() for e in exps), default=0)
        if exp_bits is None:
            return max(1, self.m.bit_length(), longest)
        if isinstance(exp_bits, bool) or not isinstance(exp_bits, int) or exp_bits < 1:
            raise ConfigError(f"exp_bits must be a positive integer, got {exp_bits!r}")
        if longest > exp_bits:
            raise ConfigError(f"an exponent has {longest} bits, more than the {exp_bits}-bit bound given")
        return exp_bits

    def powm(self, bases: Sequence[int], exps: Sequence[int], stream: Stream | None = None, *,
             exp_bits: int | None = None) -> list[int]:
        """``base_i ^ exp_i mod m``; bases are reduced mod m, exponents must be >= 0. The time
        depends on ``exp_bits`` only (a public bound; module docstring), never on the values."""
        if len(bases) != len(exps):
            raise ConfigError(f"{len(bases)} bases against {len(exps)} exponents")
        if not bases:
            return []
        for e in exps:
            if isinstance(e, bool) or not isinstance(e, int) or e < 0:
                raise ConfigError("exponents must be non-negative integers")
        ew = -(-self.exponent_bits(exps, exp_bits) // 32)
        rt, s = self.runtime, stream_or_new(self.runtime, stream)
        count = len(bases)
        out = rt.empty((self.width, count), s)
        rt.launch("powm", self.width, count,
                  (count, rt.upload(to_limbs([b % self.m for b in bases], self.width), s),
                   rt.upload(to_limbs(list(exps), ew), s), ew, self.ctx, out), s)
        return from_limbs(rt.download(out, s))

    def column_products_device(self, values: DeviceWords, rows: int, cols: int,
                               stream: Stream) -> tuple[DeviceWords, int]:
        """Reduce a device matrix of rows x cols values (< m, limb-major, index r*cols + c) to
        one row of ``cols`` values times R^-(rows-1), ``REDUCE_GROUP`` rows per thread and level;
        returns (device row, rows). Stays on the device; :meth:`finish_products` removes the R
        factor on the host."""
        if rows < 1 or cols < 1:
            raise ConfigError("need at least one row and one column")
        rt = self.runtime
        cur, left = values, rows
        while True:
            out_rows = -(-left // REDUCE_GROUP)
            out = rt.empty((self.width, out_rows * cols), stream)
            rt.launch("col_reduce", self.width, out_rows * cols, (left, cols, REDUCE_GROUP, cur, self.ctx, out), stream)
            cur, left = out, out_rows
            if left == 1:
                return cur, rows

    def finish_products(self, raw: Sequence[int], rows: int) -> list[int]:
        """Undo the R^-(rows-1) that ``rows - 1`` Montgomery products left (public sizes only)."""
        fix = pow(self.r, rows - 1, self.m)
        return [v * fix % self.m for v in raw]

    def column_products(self, values: Sequence[int], rows: int, cols: int, stream: Stream | None = None) -> list[int]:
        """Products mod m of each column of a row-major rows x cols matrix of integers."""
        vals = check_range(values, self.m, "values")
        if len(vals) != rows * cols or rows < 1 or cols < 1:
            raise ConfigError(f"{len(vals)} values do not make a {rows} x {cols} matrix")
        rt, s = self.runtime, stream_or_new(self.runtime, stream)
        dev, _ = self.column_products_device(rt.upload(to_limbs(vals, self.width), s), rows, cols, s)
        return self.finish_products(from_limbs(rt.download(dev, s)), rows)
