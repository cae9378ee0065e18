"""Paillier on the GPU kernels: DJN encryption, CRT decryption, products and column products.

The algorithms here are written once against :class:`~cryptoffload.crypto._native.gpu_runtime.Runtime`
and so run on a CUDA GPU (CuPy) or on the CPU twin of the same kernels; they produce exactly
the integers of :mod:`cryptoffload.crypto.paillier` (tested against gmpy2 and the CPU
``PrivateKey`` on the twin, and on a GPU by the same tests when one is present).

* :class:`GpuPaillier` (one public key on one device): the DJN fixed-base table of h_s is built
  on the device (``fb_table``) and stays there; encryption computes h_s^a (1 + m n) mod n^2
  for batches with the exponents a drawn here, on the host, from the operating system's CSPRNG
  (``secrets``) -- never on the GPU. Lookups are constant time by default, like the CPU
  ``Encryptor``: every table read scans the whole window and keeps the wanted entry with a
  mask (on a GPU the scan is also what makes all threads of a warp read the same address).
  ``constant_time=False`` reads one entry: faster, with a secret-dependent address.
* :class:`GpuDecryptor` (one private key on one device): CRT decryption, constant time (the
  exponentiations, the exact divisions and the recombination are fixed sequences of
  Montgomery products with masked corrections; see ``paillier_gpu.cu``).
* Products of ciphertexts (homomorphic addition), scalar multiplication (c^k mod n^2, exactly
  ``pow(c, k, n^2)``), and column products of a records x plaintexts matrix (aggregation), kept
  on the device between steps: :meth:`GpuPaillier.column_products_device` reduces a matrix the
  encryption kernel left there, so a bulk upload never brings its ciphertexts back.

Nothing here needs gmpy2 or the native CPU core: Python integers and numpy suffice to prepare
the tables and keys, so the GPU path runs where only CuPy is installed.
"""

from __future__ import annotations

import secrets
from typing import Any, Sequence

import numpy as np

from cryptoffload.crypto._native.gpu_runtime import Runtime, Stream, width_for_bits
from cryptoffload.errors import ConfigError

#: Default window bits of the device table (constant-time, variable-time lookups). The scan's
#: cost grows with 2^w and a Montgomery product's with W^2, so the constant-time optimum is
#: small (~6 by the operation count in docs/crypto/paillier-gpu.md); the variable-time lookup
#: reads one entry and only pays memory for a larger window. To be re-chosen on a GPU.
DEFAULT_GPU_WINDOWS = {True: 6, False: 12}
DEFAULT_MAX_TABLE_BYTES = 512 * 1024 * 1024
#: Rows each thread multiplies sequentially per reduction level.
REDUCE_GROUP = 32


# ------------------------------------------------------------------------------------------
# limbs


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


def _check_range(values: Sequence[int], bound: int, what: str) -> list[int]:
    out = list(values)
    for v in out:
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < bound:
            raise ConfigError(f"{what} must be integers in [0, {bound.bit_length()}-bit bound)")
    return out


def _setup(runtime: Runtime, stream: Stream | None) -> Stream:
    return stream if stream is not None else runtime.stream()


# ------------------------------------------------------------------------------------------
# generic batch arithmetic


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
        a = _check_range(a, self.m, "factors")
        b = _check_range(b, self.m, "factors")
        if len(a) != len(b):
            raise ConfigError(f"{len(a)} factors against {len(b)}")
        if not a:
            return []
        rt, s = self.runtime, _setup(self.runtime, stream)
        out = rt.empty((self.width, len(a)), s)
        rt.launch("mulmod", self.width, len(a),
                  (len(a), rt.upload(to_limbs(a, self.width), s), rt.upload(to_limbs(b, self.width), s), self.ctx, out), s)
        return from_limbs(rt.download(out, s))

    def powm(self, bases: Sequence[int], exps: Sequence[int], stream: Stream | None = None) -> list[int]:
        """``base_i ^ exp_i mod m``; bases are reduced mod m, exponents must be >= 0. The time
        depends on the longest exponent's length only (constant time in the values)."""
        if len(bases) != len(exps):
            raise ConfigError(f"{len(bases)} bases against {len(exps)} exponents")
        if not bases:
            return []
        for e in exps:
            if isinstance(e, bool) or not isinstance(e, int) or e < 0:
                raise ConfigError("exponents must be non-negative integers")
        ew = max(1, -(-max(e.bit_length() for e in exps) // 32))
        rt, s = self.runtime, _setup(self.runtime, stream)
        count = len(bases)
        out = rt.empty((self.width, count), s)
        rt.launch("powm", self.width, count,
                  (count, rt.upload(to_limbs([b % self.m for b in bases], self.width), s),
                   rt.upload(to_limbs(list(exps), ew), s), ew, self.ctx, out), s)
        return from_limbs(rt.download(out, s))

    def column_products_device(self, values: Any, rows: int, cols: int, stream: Stream) -> tuple[Any, int]:
        """Reduce a device matrix of rows x cols values (< m, limb-major, index r*cols + c) to
        one row of ``cols`` values times R^-(rows-1); returns (device row, rows). Stays on the
        device; :meth:`finish_products` removes the R factor on the host."""
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
        vals = _check_range(values, self.m, "values")
        if len(vals) != rows * cols or rows < 1 or cols < 1:
            raise ConfigError(f"{len(vals)} values do not make a {rows} x {cols} matrix")
        rt, s = self.runtime, _setup(self.runtime, stream)
        dev, _ = self.column_products_device(rt.upload(to_limbs(vals, self.width), s), rows, cols, s)
        return self.finish_products(from_limbs(rt.download(dev, s)), rows)


# ------------------------------------------------------------------------------------------
# public-key operations


def default_gpu_window(constant_time: bool) -> int:
    return DEFAULT_GPU_WINDOWS[bool(constant_time)]


class GpuPaillier:
    """DJN encryption and ciphertext arithmetic for one public key on one device.

    ``window`` (bits) defaults to :data:`DEFAULT_GPU_WINDOWS`, shrunk until the table fits
    ``max_table_bytes``. ``public_key`` and :meth:`encrypt_raw` match the CPU ``Encryptor``,
    so the engine's batch code drives either."""

    def __init__(self, public_key: Any, runtime: Runtime, *, constant_time: bool = True, window: int | None = None,
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
    def encrypt_device(self, messages: Any, exponents: Any, count: int, stream: Stream) -> Any:
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
        return to_limbs(_check_range(messages, self.n, "plaintexts"), self.half)

    def exponent_limbs(self, exponents: Sequence[int] | None, count: int) -> np.ndarray:
        if exponents is None:
            return random_exponents(count, self.exp_bits)
        if len(exponents) != count:
            raise ConfigError("need one exponent per message")
        return to_limbs(_check_range(exponents, 1 << self.exp_bits, "exponents"), self.ew)

    def encrypt_raw(self, messages: Sequence[int], exponents: Sequence[int] | None = None,
                    stream: Stream | None = None) -> list[int]:
        """``h_s^a (1 + m n) mod n^2`` for each message in [0, n); ``exponents`` fixes a (tests
        compare with the CPU backends), else a comes from ``secrets``."""
        msgs = self.message_limbs(messages)
        count = msgs.shape[1]
        if count == 0:
            return []
        exps = self.exponent_limbs(exponents, count)
        rt, s = self.runtime, _setup(self.runtime, stream)
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
        """``c_i ^ k_i mod n^2`` (plaintext times k_i), k_i in [0, n); constant time in k_i."""
        _check_range(cts, self.n2, "ciphertexts")
        return self.modulus.powm(cts, _check_range(scalars, self.n, "scalars"), stream)

    def column_products(self, cts: Sequence[int], rows: int, cols: int, stream: Stream | None = None) -> list[int]:
        """Aggregation: the product mod n^2 of each column of a row-major rows x cols matrix of
        ciphertexts (record r's ciphertext for plaintext c at r*cols + c)."""
        return self.modulus.column_products(cts, rows, cols, stream)

    def column_products_device(self, cts: Any, rows: int, cols: int, stream: Stream) -> tuple[Any, int]:
        return self.modulus.column_products_device(cts, rows, cols, stream)

    def finish_products(self, raw: Sequence[int], rows: int) -> list[int]:
        return self.modulus.finish_products(raw, rows)


# ------------------------------------------------------------------------------------------
# private-key operations


def _l_inverse(x: int, g: int) -> int:
    """hx = L_x(g^(x-1) mod x^2)^-1 mod x (x = p or q, g = n + 1)."""
    x2 = x * x
    return pow((pow(g, x - 1, x2) - 1) // x, -1, x)


def private_key_blob(p: int, q: int) -> tuple[np.ndarray, int]:
    """The words ``crt_decrypt`` reads for factors p < q (layout: DecLayout in
    ``paillier_gpu.cu``) and the kernel width NP (limbs of p^2 and q^2)."""
    if not 2 < p < q:
        raise ConfigError("the GPU decryptor needs the factors with p < q")
    np_ = width_for_bits(q.bit_length() * 2)
    h = np_ // 2
    g = p * q + 1
    rn, rh = 1 << (32 * np_), 1 << (32 * h)
    parts: list[np.ndarray] = []
    for x in (p, q):
        x2 = x * x
        parts += [context_words(x2, np_), number_words(pow(rn, 3, x2), np_), number_words(x - 1, h),
                  context_words(x, h), number_words(pow(x, -1, rh), h),
                  number_words(_l_inverse(x, g) * rh % x, h)]
    parts.append(number_words(pow(p, -1, q) * rh % q, h))
    parts.append(np.array([max(p.bit_length(), q.bit_length())], dtype=np.uint32))
    return np.concatenate(parts), np_


class GpuDecryptor:
    """CRT decryption with one private key resident on the device (never logged; the repr
    shows only the key size)."""

    def __init__(self, private_key: Any, runtime: Runtime) -> None:
        self.runtime = runtime
        self.public_key = private_key.public_key
        blob, self.width = private_key_blob(private_key.p, private_key.q)
        s = runtime.stream()
        self._key = runtime.upload(blob, s)
        s.synchronize()

    def __repr__(self) -> str:
        return f"GpuDecryptor(bits={self.public_key.bits}, device={self.runtime.device})"

    def decrypt_device(self, cts: Any, count: int, stream: Stream) -> Any:
        """Plaintexts (width limbs each) of ``count`` ciphertexts on the device (2 width limbs
        each, every one < n^2)."""
        out = self.runtime.empty((self.width, count), stream)
        self.runtime.launch("crt_decrypt", self.width, count, (count, cts, self._key, out), stream)
        return out

    def decrypt(self, cts: Sequence[int], stream: Stream | None = None) -> list[int]:
        values = _check_range(cts, self.public_key.nsquare, "ciphertexts")
        if not values:
            return []
        rt, s = self.runtime, _setup(self.runtime, stream)
        out = self.decrypt_device(rt.upload(to_limbs(values, 2 * self.width), s), len(values), s)
        return from_limbs(rt.download(out, s))
