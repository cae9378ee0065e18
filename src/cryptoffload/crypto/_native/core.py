"""Python face of the native Paillier core: integers in, integers out, batches only.

Why batches: one cffi call costs about a microsecond, a 2048-bit modular multiplication a
few hundred nanoseconds, so the boundary is crossed once per batch of ciphertexts, never per
multiplication. cffi releases the GIL during every call, so a background thread (the
offline randomness pool) or a thread pool really runs beside the caller.

Numbers cross as little-endian 64-bit words of a fixed length per batch, so the C side never
sees (or branches on) the size of a secret value.
"""

from __future__ import annotations

import os
import threading
from typing import Sequence

from cryptoffload.errors import BackendUnavailable, ConfigError

try:  # the extension is built by `pip install`; a bare source tree has none
    from cryptoffload.crypto._native import _paillier  # type: ignore[attr-defined]

    _lib = _paillier.lib
    _ffi = _paillier.ffi
    NATIVE_AVAILABLE = True
except ImportError:  # pragma: no cover - exercised only on a broken install
    _paillier = None
    _lib = None
    _ffi = None
    NATIVE_AVAILABLE = False

BACKEND_GMP = 0
BACKEND_IFMA = 1
BACKEND_ADX = 2

#: The C back end numbers by name (the kernel sets of ``paillier_core.c``).
BACKEND_CODES = {"gmp": BACKEND_GMP, "ifma": BACKEND_IFMA, "adx": BACKEND_ADX}

#: CRT decryption's paths by name: the kernel sets, and ``avx2`` -- four ciphertexts at a time
#: on the four-lane AVX2 kernels (``paillier_mb4.h``), the rest of a batch on ``adx``'s.
DECRYPTION_CODES = {**BACKEND_CODES, "avx2": 3}


def native_available() -> bool:
    """True when the C core was built and imported."""
    return NATIVE_AVAILABLE


def ifma_available() -> bool:
    """True when the core was built with crypto_mb and this CPU has AVX512-IFMA.

    ``COPL_DISABLE_IFMA=1`` in the environment hides IFMA, which is how the tests run the
    fallback path on a machine that has it.
    """
    if not NATIVE_AVAILABLE or os.environ.get("COPL_DISABLE_IFMA") == "1":
        return False
    return bool(_lib.copl_built_with_ifma()) and bool(_lib.copl_have_ifma())


def adx_available() -> bool:
    """True when the core has its MULX/ADX kernels and this CPU has BMI2, ADX and AVX2.

    ``COPL_DISABLE_ADX=1`` hides them (as ``COPL_DISABLE_IFMA`` hides IFMA), which is how the
    tests and benchmarks run the portable GMP path on a machine that has them."""
    if not NATIVE_AVAILABLE or os.environ.get("COPL_DISABLE_ADX") == "1":
        return False
    have = getattr(_lib, "copl_have_adx", None)
    return bool(have()) if have is not None else False


def adx_fits(modulus_bits: int) -> bool:
    """True when the ADX kernels work modulo a number of ``modulus_bits`` bits: their rows are
    unrolled by 8 words, so the modulus must fill a multiple of 8 words (n^2 of 1024-, 2048-,
    3072-bit keys: 32, 64, 96 words; p^2 of their primes: 16, 32, 48)."""
    return adx_available() and bool(_lib.copl_adx_fits(words_for_bits(modulus_bits)))


def cpu_signature() -> str:
    """``family-model-stepping`` from cpuid plus the kernels' version, e.g. ``25-17-1-k2``:
    what tells two CPUs' costs apart beyond their model name (an "AMD EPYC" may be any
    generation); the window cache is keyed by it."""
    if not NATIVE_AVAILABLE or getattr(_lib, "copl_cpu_signature", None) is None:
        return "unknown"
    eax = int(_lib.copl_cpu_signature())
    family = ((eax >> 8) & 0xF) + (((eax >> 20) & 0xFF) if ((eax >> 8) & 0xF) == 0xF else 0)
    model = ((eax >> 4) & 0xF) | ((((eax >> 16) & 0xF) << 4) if ((eax >> 8) & 0xF) in (6, 0xF) else 0)
    return f"{family}-{model}-{eax & 0xF}-k{int(_lib.copl_kernel_version())}"


def cpu_path() -> str:
    """The arithmetic path this CPU runs by default: ``ifma``, ``adx``, ``gmp`` (portable C
    on GMP) or ``none`` (no native core) -- what benchmarks record beside their figures."""
    if ifma_available():
        return "ifma"
    if adx_available():
        return "adx"
    return "gmp" if NATIVE_AVAILABLE else "none"


def ifma_fixed_base_fits(modulus_bits: int) -> bool:
    """True when the IFMA fixed-base kernel can work modulo a number of ``modulus_bits``.

    Its widest crypto_mb product has 79 52-bit digits, enough for n^2 of keys up to 2,053
    bits; bigger keys must use GMP. The limit lives in C (``copl_ifma_fb_digits``) beside
    the kernel table it describes."""
    if not ifma_available():
        return False
    digits = getattr(_lib, "copl_ifma_fb_digits", None)
    if digits is None:  # a core built before the limit was exported: the same rule (79 digits, 2 spare bits)
        return 0 < modulus_bits <= 79 * 52 - 2
    return digits(int(modulus_bits)) > 0


def require_native() -> None:
    if not NATIVE_AVAILABLE:
        raise BackendUnavailable(
            "the native Paillier core is not built; reinstall the package (pip install -e .) "
            "with libgmp-dev present, or use backend 'gmpy2'")


def words_for_bits(bits: int) -> int:
    return (bits + 63) // 64


def _pack(values: Sequence[int], words: int) -> bytes:
    size = 8 * words
    try:
        return b"".join(v.to_bytes(size, "little") for v in values)
    except OverflowError:
        raise ConfigError(f"a value does not fit in {words * 64} bits") from None


def _unpack(buf: bytes, count: int, words: int) -> list[int]:
    size = 8 * words
    return [int.from_bytes(buf[i * size:(i + 1) * size], "little") for i in range(count)]


class FixedBaseTable:
    """Precomputed powers of one base modulo ``modulus`` for exponents of ``exp_bits`` bits.

    Holds the C table; ``encrypt`` computes ``base^a * (1 + m*n) mod n^2`` for batches.
    Freed with the object. Thread-safe for concurrent ``encrypt`` calls (the table is only
    read after construction).
    """

    def __init__(self, base: int, modulus: int, n: int, exp_bits: int, window: int,
                 constant_time: bool, backend: int, *, synthetic: bool = False) -> None:
        require_native()
        if backend == BACKEND_IFMA and not ifma_available():
            raise BackendUnavailable("AVX512-IFMA is not available (CPU or build)")
        if backend == BACKEND_ADX and not adx_fits(modulus.bit_length()):
            raise BackendUnavailable("the ADX kernels need BMI2 + ADX + AVX2 and a modulus of a multiple of 512 bits")
        if not 1 <= window <= 16:
            raise ConfigError(f"window must be 1..16 bits, got {window}")
        self.modulus = modulus
        self.n = n
        self.N = words_for_bits(modulus.bit_length())
        self.nn = words_for_bits(n.bit_length())
        self.exp_bits = exp_bits
        self.ew = words_for_bits(exp_bits)
        self.window = window
        self.constant_time = constant_time
        self.backend = backend
        base_w = _ffi.from_buffer("uint64_t[]", _pack([base % modulus], self.N))
        mod_w = _ffi.from_buffer("uint64_t[]", _pack([modulus], self.N))
        n_w = _ffi.from_buffer("uint64_t[]", _pack([n], self.nn))
        if synthetic:   # same size and layout, arbitrary entries: for timing window sizes only
            ptr = _lib.copl_fb_new_synthetic(mod_w, self.N, n_w, self.nn, exp_bits, window,
                                             1 if constant_time else 0, backend)
        else:
            ptr = _lib.copl_fb_new(base_w, mod_w, self.N, n_w, self.nn, exp_bits, window,
                                   1 if constant_time else 0, backend)
        if ptr == _ffi.NULL:
            raise ConfigError(
                f"could not build a fixed-base table (window {window}, {exp_bits}-bit exponents, "
                f"{modulus.bit_length()}-bit modulus): out of memory or unsupported size")
        self._ptr = _ffi.gc(ptr, _lib.copl_fb_free)
        self.table_bytes = int(_lib.copl_fb_table_bytes(ptr))
        self._lock = threading.Lock()

    def encrypt(self, messages: Sequence[int], exponents: Sequence[int]) -> list[int]:
        """``base^a_i * (1 + m_i n) mod n^2`` for each pair; messages must be < n."""
        return _unpack(self.encrypt_to_words(messages, exponents), len(messages), self.N)

    def encrypt_to_words(self, messages: Sequence[int], exponents: Sequence[int]) -> bytes:
        """Like :meth:`encrypt` but returns the ciphertexts as one buffer of little-endian
        64-bit words (``N`` per ciphertext): what goes on the wire or into
        :func:`column_products` without ever becoming Python integers."""
        count = len(messages)
        if count != len(exponents):
            raise ConfigError("messages and exponents differ in length")
        if count == 0:
            return b""
        msgs = _ffi.from_buffer("uint64_t[]", _pack(messages, self.nn))
        exps = _ffi.from_buffer("uint64_t[]", _pack(exponents, self.ew))
        out = _ffi.new("uint64_t[]", count * self.N)
        rc = _lib.copl_fb_encrypt(self._ptr, count, msgs, exps, self.ew, out)
        if rc != 0:
            raise RuntimeError(f"native fixed-base encryption failed (code {rc})")
        return bytes(_ffi.buffer(out))


def powm_batch(bases: Sequence[int], exps: Sequence[int], modulus: int, secret: bool = False) -> list[int]:
    """``b_i^e_i mod modulus`` with GMP, one C call for the whole batch (GIL released)."""
    require_native()
    count = len(bases)
    if count == 0:
        return []
    N = words_for_bits(modulus.bit_length())
    ew = words_for_bits(max(1, max(e.bit_length() for e in exps)))
    b = _ffi.from_buffer("uint64_t[]", _pack([x % modulus for x in bases], N))
    e = _ffi.from_buffer("uint64_t[]", _pack(exps, ew))
    m = _ffi.from_buffer("uint64_t[]", _pack([modulus] * count, N))
    out = _ffi.new("uint64_t[]", count * N)
    rc = _lib.copl_powm_batch(count, b, e, ew, m, N, 1 if secret else 0, out)
    if rc != 0:
        raise ConfigError("modulus must be non-zero")
    return _unpack(bytes(_ffi.buffer(out)), count, N)


MBX_SIZES = (1024, 2048, 3072, 4096)


def mbx_kernel_bits(modulus: int) -> int | None:
    """The crypto_mb kernel size (1024/2048/3072/4096) that computes correctly modulo
    ``modulus``, or None.

    Measured here: crypto_mb pads the modulus to the kernel size and returns wrong results
    (not merely unreduced ones) once the modulus's top 52-bit digit is zero, e.g. for every
    modulus of 2,028 bits or fewer on the 2,048-bit kernel. So a kernel is usable only when
    the modulus has more than 52 * (digits - 1) bits.
    """
    bits = modulus.bit_length()
    for size in MBX_SIZES:
        if bits <= size:
            digits = -(-size // 52)
            return size if bits > 52 * (digits - 1) else None
    return None


def mbx_powm_batch(bases: Sequence[int], exps: Sequence[int], exp_bits: int, modulus: int) -> list[int]:
    """``b_i^e_i mod modulus`` eight lanes at a time with Intel crypto_mb (IPCL's method).

    The modulus is padded to the next of 1024/2048/3072/4096 bits, as crypto_mb requires.
    """
    if not ifma_available():
        raise BackendUnavailable("AVX512-IFMA multi-buffer exponentiation is not available here")
    count = len(bases)
    if count == 0:
        return []
    mod_bits = mbx_kernel_bits(modulus)
    if mod_bits is None:
        raise ConfigError(f"crypto_mb cannot exponentiate modulo a {modulus.bit_length()}-bit number "
                          "(needs a size just below 1024, 2048, 3072 or 4096 bits); use GMP")
    N = mod_bits // 64
    ew = words_for_bits(exp_bits)
    b = _ffi.from_buffer("uint64_t[]", _pack([x % modulus for x in bases], N))
    e = _ffi.from_buffer("uint64_t[]", _pack(exps, ew))
    m = _ffi.from_buffer("uint64_t[]", _pack([modulus], N))
    out = _ffi.new("uint64_t[]", count * N)
    rc = _lib.copl_mbx_powm_batch(count, b, e, exp_bits, m, mod_bits, out)
    if rc != 0:
        raise RuntimeError(f"crypto_mb exponentiation failed (code {rc})")
    return _unpack(bytes(_ffi.buffer(out)), count, N)


class CrtDecryptor:
    """Paillier CRT decryption with the factors held in C (never logged, never returned)."""

    def __init__(self, p: int, q: int) -> None:
        require_native()
        if p.bit_length() != q.bit_length():
            raise ConfigError("the native decryptor needs p and q of equal bit length")
        self.pw = words_for_bits(p.bit_length())
        n = p * q
        self.nn = words_for_bits(n.bit_length())
        self.N = 2 * self.nn
        pb = _ffi.from_buffer("uint64_t[]", _pack([p], self.pw))
        qb = _ffi.from_buffer("uint64_t[]", _pack([q], self.pw))
        ptr = _lib.copl_dec_new(pb, qb, self.pw)
        if ptr == _ffi.NULL:
            raise ConfigError("invalid private key: p, q do not give an invertible decryption")
        self._ptr = _ffi.gc(ptr, _lib.copl_dec_free)
        # the C side runs p^2 and q^2 on the kernel of its word size; only valid when both
        # fill that kernel (see mbx_kernel_bits)
        size = 64 * 2 * self.pw
        self.ifma_ok = mbx_kernel_bits(p * p) == size and mbx_kernel_bits(q * q) == size
        self.adx_ok = adx_fits(size)

    def paths(self) -> list[str]:
        """Every path :meth:`decrypt` can run for this key on this CPU."""
        out = ["gmp"]
        if self.adx_ok and adx_available():
            out += ["adx", "avx2"]
        if self.ifma_ok and ifma_available():
            out.append("ifma")
        return out

    def path(self, use_ifma: bool = True) -> str:
        """The path :meth:`decrypt` runs: ``ifma`` (crypto_mb's 8-lane modexp) where allowed
        and possible, else ``avx2`` (four ciphertexts at a time on AVX2, the rest of a batch on
        our MULX/ADX exponentiation), else ``gmp`` (``mpz_powm_sec``). All are constant time;
        ``adx`` (MULX/ADX for every ciphertext) is there to be forced by tests and benchmarks."""
        if use_ifma and self.ifma_ok and ifma_available():
            return "ifma"
        return "avx2" if self.adx_ok and adx_available() else "gmp"

    def decrypt(self, ciphertexts: Sequence[int], use_ifma: bool = True, *, path: str | None = None) -> list[int]:
        """Plaintexts of ``ciphertexts`` (each < n^2), the whole batch in one C call; ``path``
        forces one of :meth:`paths`, by default :meth:`path`."""
        count = len(ciphertexts)
        if count == 0:
            return []
        chosen = path or self.path(use_ifma)
        if chosen not in self.paths():
            raise BackendUnavailable(f"decryption path {chosen!r} is not available for this key on this CPU")
        cts = _ffi.from_buffer("uint64_t[]", _pack(ciphertexts, self.N))
        out = _ffi.new("uint64_t[]", count * self.nn)
        rc = _lib.copl_dec_batch(self._ptr, count, cts, out, DECRYPTION_CODES[chosen])
        if rc != 0:
            raise RuntimeError(f"native decryption failed (code {rc})")
        return _unpack(bytes(_ffi.buffer(out)), count, self.nn)


def multi_powm(bases: Sequence[int], exponents: Sequence[Sequence[int]], modulus: int, exp_bits: int,
               backend: str = "auto") -> list[int]:
    """``prod_j bases[j] ** exponents[s][j] mod modulus`` for every row s, in constant time
    (the exponents may be secret): a multi-exponentiation (Straus, fixed windows) whose tables
    of the k bases are built once for all rows, and whose squarings are shared by the k powers
    of a row. One C call, GIL released.

    ``modulus`` odd; every exponent in [0, 2^exp_bits); ``backend`` ``adx`` (MULX/ADX kernel),
    ``gmp`` (GMP's products) or ``auto`` (``adx`` where it runs, else ``gmp``). Built for the
    ridge solve's masking, where each output is a product of d powers of bases shared along
    a row (see docs/crypto/paillier.md)."""
    require_native()
    rows, k = len(exponents), len(bases)
    if rows == 0:
        return []
    if k == 0 or any(len(r) != k for r in exponents):
        raise ConfigError("multi_powm needs one exponent per base in every row")
    if modulus < 3 or modulus % 2 == 0:
        raise ConfigError("multi_powm needs an odd modulus > 2")
    if not 1 <= exp_bits <= 1 << 16 or any(not 0 <= e < 1 << exp_bits for r in exponents for e in r):
        raise ConfigError(f"multi_powm exponents must lie in [0, 2^{exp_bits})")
    if backend == "auto":
        backend = "adx" if adx_fits(modulus.bit_length()) else "gmp"
    if backend not in ("adx", "gmp") or (backend == "adx" and not adx_fits(modulus.bit_length())):
        raise BackendUnavailable(f"multi_powm backend {backend!r} is not available for this modulus on this CPU")
    N = words_for_bits(modulus.bit_length())
    ew = words_for_bits(exp_bits)
    b = _ffi.from_buffer("uint64_t[]", _pack([x % modulus for x in bases], N))
    e = _ffi.from_buffer("uint64_t[]", _pack([x for r in exponents for x in r], ew))
    m = _ffi.from_buffer("uint64_t[]", _pack([modulus], N))
    out = _ffi.new("uint64_t[]", rows * N)
    rc = _lib.copl_multiexp(rows, k, b, e, ew, exp_bits, m, N, BACKEND_CODES[backend], out)
    if rc != 0:
        raise RuntimeError(f"native multi-exponentiation failed (code {rc})")
    return _unpack(bytes(_ffi.buffer(out)), rows, N)


#: The Montgomery kernels by name, as ``copl_mont_kernel`` numbers them (lanes, code).
MONTGOMERY_KERNELS = {"gmp-mul": (1, 0), "gmp-sqr": (1, 1), "adx-mul": (1, 2), "adx-sqr": (1, 3),
                      "avx2-mul": (4, 4), "avx2-sqr": (4, 5)}


def montgomery_kernel(kernel: str, a: Sequence[int], b: Sequence[int], modulus: int) -> tuple[list[int], int]:
    """One Montgomery product (``*-mul``: a_i b_i / R) or square (``*-sqr``: a_i^2 / R) modulo
    ``modulus`` on one of :data:`MONTGOMERY_KERNELS`, fully reduced, and the bits of R: how
    the tests hold each kernel against Python's integers (the exponentiations reach them only
    inside C). ``a`` and ``b`` hold one value per lane (four for ``avx2-*``), each below the
    odd modulus."""
    require_native()
    lanes, code = MONTGOMERY_KERNELS[kernel]
    if len(a) != lanes or len(b) != lanes:
        raise ConfigError(f"kernel {kernel} takes {lanes} value(s) per operand")
    N = words_for_bits(modulus.bit_length())
    out = _ffi.new("uint64_t[]", lanes * N)
    rc = _lib.copl_mont_kernel(code, N, _ffi.from_buffer("uint64_t[]", _pack(a, N)),
                               _ffi.from_buffer("uint64_t[]", _pack(b, N)),
                               _ffi.from_buffer("uint64_t[]", _pack([modulus], N)), out)
    if rc == -3:
        raise BackendUnavailable(f"kernel {kernel} does not run on this CPU for a {modulus.bit_length()}-bit modulus")
    if rc < 0:
        raise ConfigError(f"kernel {kernel} refused its arguments (code {rc})")
    return _unpack(bytes(_ffi.buffer(out)), lanes, N), int(rc)


def column_products(words: bytes, rows: int, cols: int, modulus: int) -> list[int]:
    """Products mod ``modulus`` of each column of a row-major ``rows x cols`` matrix given as
    little-endian 64-bit words (``words_for_bits(modulus)`` per value, each value < modulus).

    This is Paillier aggregation: record r's ciphertext for plaintext index c sits at
    (r, c); the result is one aggregated ciphertext per index. One C call, GIL released.
    """
    require_native()
    N = words_for_bits(modulus.bit_length())
    if rows < 1 or cols < 1:
        raise ConfigError("need at least one row and one column")
    if len(words) != rows * cols * N * 8:
        raise ConfigError(f"buffer holds {len(words)} bytes, expected {rows * cols * N * 8} "
                          f"({rows} x {cols} values of {N * 8} bytes)")
    vals = _ffi.from_buffer("uint64_t[]", words)
    m = _ffi.from_buffer("uint64_t[]", _pack([modulus], N))
    out = _ffi.new("uint64_t[]", cols * N)
    rc = _lib.copl_column_products(rows, cols, vals, m, N, out)
    if rc != 0:
        raise ConfigError("column products need an odd modulus")
    return _unpack(bytes(_ffi.buffer(out)), cols, N)


def ints_to_words(values: Sequence[int], modulus: int) -> bytes:
    """Integers as the little-endian word buffer :func:`column_products` reads."""
    return _pack(values, words_for_bits(modulus.bit_length()))
