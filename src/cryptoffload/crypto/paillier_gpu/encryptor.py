"""DJN encryption and ciphertext arithmetic for one Paillier public key on one device.

The DJN fixed-base table of h_s is built on the device (``fb_table``) and stays there;
encryption computes h_s^a (1 + m n) mod n^2 for batches, with the exponents a drawn here, on
the host, from the operating system's CSPRNG (``secrets``) -- never on the GPU. Lookups are
constant time by default, like the CPU ``Encryptor``: every table read scans the whole window
and keeps the wanted entry with a mask. ``constant_time=False`` reads one entry: fewer
operations (docs/crypto/paillier-gpu.md counts them), with a secret-dependent address.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from cryptoffload.crypto._native.gpu_runtime import DeviceWords, Runtime, Stream
from cryptoffload.crypto.paillier_gpu.limbs import (
    check_limbs_below, check_range, from_limbs, number_words, random_exponents, to_limbs)
from cryptoffload.crypto.paillier_gpu.modulus import Modulus, stream_or_new
from cryptoffload.errors import ConfigError

if TYPE_CHECKING:
    from cryptoffload.crypto.paillier.keys import PublicKey

#: Default window bits of the device table (constant-time, variable-time lookups). The scan's
#: cost grows with 2^w and a Montgomery product's with W^2, so the constant-time optimum is
#: small (~6 by the operation count in docs/crypto/paillier-gpu.md); the variable-time lookup
#: reads one entry and only pays memory for a larger window. To be re-chosen on a GPU.
DEFAULT_GPU_WINDOWS = {True: 6, False: 12}
DEFAULT_MAX_TABLE_BYTES = 512 * 1024 * 1024


def default_gpu_window(constant_time: bool) -> int:
    return DEFAULT_GPU_WINDOWS[bool(constant_time)]


class GpuPaillier:
    """DJN encryption and ciphertext arithmetic for one public key on one device.

    ``window`` (bits) defaults to :data:`DEFAULT_GPU_WINDOWS`, shrunk until the table fits
    ``max_table_bytes``. ``public_key`` and :meth:`encrypt_raw` match the CPU ``Encryptor``,
    so the engine's batch code drives either."""

    def __init__(self, public_key: PublicKey, runtime: Runtime, *, constant_time: bool = True, window: int | None = None,
                 max_table_bytes: int = DEFAULT_MAX_TABLE_BYTES) -> None:
        self.public_key = public_key
        self.runtime = runtime
        self.constant_time = bool(constant_time)
        self.n, self.n2 = public_key.n, public_key.nsquare
        self.modulus = Modulus(runtime, self.n2)
        self.width = self.modulus.width
        self.half = self.width // 2
        self.exp_bits = public_key.exp_bits
        self.ew = -(-self.exp_bits // 32)
        w = window if window is not None else default_gpu_window(constant_time)
        if isinstance(w, bool) or not isinstance(w, int) or not 1 <= w <= 16:
            raise ConfigError(f"window must be 1..16 bits, got {w!r}")
        while window is None and w > 2 and self._table_bytes(w) > max_table_bytes:
            w -= 1
        if self._table_bytes(w) > max_table_bytes:
            raise ConfigError(f"a {w}-bit window needs {self._table_bytes(w) / 2**20:.0f} MiB of device table, "
                              f"more than the {max_table_bytes / 2**20:.0f} MiB allowed")
        self.window = w
        self.windows = -(-self.exp_bits // w)
        self.table_bytes = self._table_bytes(w)
        self._build_table()

    def _table_bytes(self, w: int) -> int:
        return -(-self.exp_bits // w) * (1 << w) * self.width * 4

    def _build_table(self) -> None:
        rt, w, k, W = self.runtime, self.window, self.windows, self.width
        bases, b = [], self.public_key.hs % self.n2
        for _ in range(k):
            bases.append(b)
            b = pow(b, 1 << w, self.n2)
        E = 1 << w
        chunk = min(E, 64)
        s = rt.stream()
        flat = np.concatenate([number_words(x, W) for x in bases])
        self.table = rt.empty((k * E * W,), s)
        rt.launch("fb_table", W, k * (E // chunk), (k, w, chunk, rt.upload(flat, s), self.modulus.ctx, self.table), s)
        self.n_words = rt.upload(number_words(self.n, self.half), s)
        s.synchronize()

    def describe(self) -> str:
        mode = "constant-time" if self.constant_time else "variable-time"
        return (f"{self.runtime.describe()}: {self.width} limbs, {self.window}-bit windows, {mode} lookup, "
                f"table {self.table_bytes / 2**20:.1f} MiB")

    # -- encryption -------------------------------------------------------------------------
    def encrypt_device(self, messages: DeviceWords, exponents: DeviceWords, count: int, stream: Stream) -> DeviceWords:
        """Ciphertexts of ``count`` messages already on the device (``half`` limbs each, every
        message < n) with exponents on the device (``ew`` limbs each); a (width, count) device
        array. Asynchronous on a GPU stream."""
        rt = self.runtime
        out = rt.empty((self.width, count), stream)
        rt.launch("fb_encrypt", self.width, count,
                  (count, messages, exponents, self.ew, self.table, self.windows, self.window,
                   1 if self.constant_time else 0, self.n_words, self.modulus.ctx, out), stream)
        return out

    def message_limbs(self, messages: Sequence[int] | np.ndarray) -> np.ndarray:
        """Plaintexts (each in [0, n)) as the kernel's (half, count) limbs; a limb array is
        checked and passed through."""
        if isinstance(messages, np.ndarray):
            return check_limbs_below(messages, self.n, self.half, "plaintexts")
        return to_limbs(check_range(messages, self.n, "plaintexts"), self.half)

    def exponent_limbs(self, exponents: Sequence[int] | None, count: int) -> np.ndarray:
        if exponents is None:
            return random_exponents(count, self.exp_bits)
        if len(exponents) != count:
            raise ConfigError("need one exponent per message")
        return to_limbs(check_range(exponents, 1 << self.exp_bits, "exponents"), self.ew)

    def encrypt_raw(self, messages: Sequence[int], exponents: Sequence[int] | None = None,
                    stream: Stream | None = None) -> list[int]:
        """``h_s^a (1 + m n) mod n^2`` for each message in [0, n); ``exponents`` fixes a (tests
        compare with the CPU backends), else a comes from ``secrets``."""
        msgs = self.message_limbs(messages)
        count = msgs.shape[1]
        if count == 0:
            return []
        exps = self.exponent_limbs(exponents, count)
        rt, s = self.runtime, stream_or_new(self.runtime, stream)
        out = self.encrypt_device(rt.upload(msgs, s), rt.upload(exps, s), count, s)
        return from_limbs(rt.download(out, s))

    def randomness(self, count: int) -> list[int]:
        """``count`` values h_s^a mod n^2 (encryptions of 0), for an offline pool."""
        return self.encrypt_raw([0] * count)

    # -- ciphertext arithmetic ----------------------------------------------------------------
    def add(self, a: Sequence[int], b: Sequence[int], stream: Stream | None = None) -> list[int]:
        """Homomorphic addition: ``a_i b_i mod n^2`` for ciphertexts in [0, n^2)."""
        return self.modulus.mulmod(a, b, stream)

    def scalar_multiply(self, cts: Sequence[int], scalars: Sequence[int], stream: Stream | None = None) -> list[int]:
        """``c_i ^ k_i mod n^2`` (plaintext times k_i), k_i in [0, n); constant time in k_i:
        every scalar is processed over n's full bit length (a scalar may be secret)."""
        check_range(cts, self.n2, "ciphertexts")
        return self.modulus.powm(cts, check_range(scalars, self.n, "scalars"), stream, exp_bits=self.n.bit_length())

    def column_products(self, cts: Sequence[int], rows: int, cols: int, stream: Stream | None = None) -> list[int]:
        """Aggregation: the product mod n^2 of each column of a row-major rows x cols matrix of
        ciphertexts (record r's ciphertext for plaintext c at r*cols + c)."""
        return self.modulus.column_products(cts, rows, cols, stream)

    def column_products_device(self, cts: DeviceWords, rows: int, cols: int, stream: Stream) -> tuple[DeviceWords, int]:
        return self.modulus.column_products_device(cts, rows, cols, stream)

    def finish_products(self, raw: Sequence[int], rows: int) -> list[int]:
        return self.modulus.finish_products(raw, rows)
