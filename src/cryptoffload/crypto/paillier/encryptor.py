"""DJN encryption with a fixed-base table for h_s, and the choice of arithmetic backend.

Backends, all producing identical ciphertexts from the same randomness (tested); this table,
:data:`BACKENDS`, is the one registry of them (the CLI's ``--backend``, the benchmarks and
the tests read it):
  ``gmpy2``  the reference: one ``powmod`` per ciphertext, no table.
  ``gmp``    the native C core, 64-bit limbs, Montgomery products on GMP's mpn layer: the
             portable path, for CPUs without the two below.
  ``adx``    the native core on CPUs with BMI2 + ADX + AVX2 (Intel since Broadwell, AMD
             since Zen): our MULX/ADX Montgomery product and a 256-bit constant-time scan;
             moduli of a multiple of 512 bits (n^2 of 512- to 4096-bit keys in 512-bit steps).
  ``ifma``   the native core, eight ciphertexts at a time in AVX512-IFMA (Intel crypto_mb);
             its widest kernel holds n^2 of keys up to 2,053 bits.
  ``auto``   ``ifma`` where the CPU has it and the key fits its kernel, else ``adx`` where it
             runs, else ``gmp``, else ``gmpy2`` -- so every key size works with the default on
             every CPU. ``COPL_DISABLE_IFMA=1`` / ``COPL_DISABLE_ADX=1`` hide a path (how a
             machine with IFMA tests and measures the others).

Side channels: the table lookup indexes by digits of the secret exponent a. The default is a
constant-time scan (every lookup reads the whole window); ``constant_time=False`` reads one
entry and is faster but leaks cache-line access patterns to a co-located attacker.

Windows are measured on the CPU that runs them and cached per CPU (:mod:`.windows`).

Who resolves: :func:`resolve_backend` turns a request (``auto``, or a name) into the backend
that runs, for one key size on this machine. The encryption service (:mod:`.service`) calls
it once per call and hands the answer to :class:`Encryptor`, which takes it as given: an
encryptor is built from a resolved backend and never resolves one again.
"""

from __future__ import annotations

from typing import Sequence

from cryptoffload.crypto._native import core as native
from cryptoffload.crypto.paillier import djn, windows
from cryptoffload.crypto.paillier.ciphertext import Ciphertext
from cryptoffload.crypto.paillier.public_key import PublicKey
from cryptoffload.errors import BackendUnavailable, ConfigError

BACKENDS: dict[str, str] = {
    "auto": "the fastest that runs here for this key",
    "ifma": "AVX512-IFMA, 8 ciphertexts at a time (crypto_mb)",
    "adx": "MULX/ADX Montgomery kernel + AVX2 constant-time scan",
    "gmp": "portable C on GMP's mpn layer",
    "gmpy2": "gmpy2 powmod per ciphertext (reference)",
}

# Fallback windows, used only where they cannot be measured (no native core): the choices
# of `python benchmarks/paillier.py --choose-window` on the AVX512-IFMA Xeon. Elsewhere the
# window is measured per CPU (windows.window_for).
DEFAULT_WINDOWS_BY_BITS: dict[int, dict[tuple[str, bool], int]] = {
    1024: {("ifma", False): 12, ("ifma", True): 6, ("gmp", False): 12, ("gmp", True): 5},
    2048: {("ifma", False): 10, ("ifma", True): 7, ("gmp", False): 11, ("gmp", True): 6},
}

DEFAULT_MAX_TABLE_BYTES = 256 * 1024 * 1024

#: what :func:`resolve_backend` can answer: the backends that run (``auto`` is a request only)
RESOLVED_BACKENDS = ("ifma", "adx", "gmp", "gmpy2")


def default_window(bits: int, backend: str, constant_time: bool) -> int:
    """The window for keys of ``bits`` bits with this backend and lookup mode on this CPU:
    measured and cached per CPU (:func:`.windows.window_for`); 0 for ``gmpy2`` (no table)."""
    if backend == "gmpy2":
        return 0
    if native.native_available():
        return windows.window_for(bits, (bits + 1) // 2, backend, constant_time)
    sizes = sorted(DEFAULT_WINDOWS_BY_BITS)   # pragma: no cover - a table needs the core anyway
    row = DEFAULT_WINDOWS_BY_BITS[max([b for b in sizes if b <= bits], default=sizes[0])]
    return row.get(("gmp" if backend == "adx" else backend, constant_time), 0)


def resolve_backend(backend: str, nsquare_bits: int | None = None) -> str:
    """The backend that will run: ``auto`` resolved for this machine and, when
    ``nsquare_bits`` (the size of n^2) is given, for this key; an explicit backend that cannot
    run is refused with what to use instead."""
    if backend not in BACKENDS:
        raise ConfigError(f"unknown Paillier backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    fits = nsquare_bits is None or native.ifma_fixed_base_fits(nsquare_bits)
    adx_fits = native.adx_available() and (nsquare_bits is None or native.adx_fits(nsquare_bits))
    if backend == "auto":
        if native.ifma_available() and fits:
            return "ifma"
        if adx_fits:
            return "adx"
        return "gmp" if native.native_available() else "gmpy2"
    if backend == "ifma" and not native.ifma_available():
        raise BackendUnavailable("backend 'ifma' needs AVX512-IFMA and the crypto_mb build; use 'adx', 'gmp' or 'auto'")
    if backend == "ifma" and nsquare_bits is not None and not fits:   # no size: nothing to refuse
        raise ConfigError(
            f"backend 'ifma' handles keys up to 2,053 bits (crypto_mb's widest kernel), not a "
            f"{(nsquare_bits + 1) // 2}-bit key; use 'auto' or 'gmp'")
    if backend == "adx" and not native.adx_available():
        raise BackendUnavailable("backend 'adx' needs a CPU with BMI2, ADX and AVX2 and the native core; "
                                 "use 'gmp' or 'auto'")
    if backend == "adx" and not adx_fits:
        raise ConfigError(f"backend 'adx' needs n^2 of a multiple of 512 bits, not {nsquare_bits} bits; "
                          "use 'auto' or 'gmp'")
    if backend == "gmp":
        native.require_native()
    return backend


def table_bytes_estimate(pk: PublicKey, backend: str, window: int) -> int:
    return windows.table_bytes(backend, pk.nsquare.bit_length(), pk.exp_bits, window)


class Encryptor:
    """DJN encryption for one public key with a fixed-base table for h_s.

    ``backend`` is one :func:`resolve_backend` answered for this key (the encryption service,
    :mod:`.service`, resolves it and caches the encryptor); ``auto`` or an unknown name is
    refused rather than resolved a second time. ``window`` defaults to the size measured on
    this CPU for the backend and lookup mode (:mod:`.windows`), shrunk until the table fits
    ``max_table_bytes``; ``table_bytes`` reports the memory used.
    """

    def __init__(self, pk: PublicKey, backend: str, *, constant_time: bool = True,
                 window: int | None = None, max_table_bytes: int = DEFAULT_MAX_TABLE_BYTES) -> None:
        if backend not in RESOLVED_BACKENDS:
            raise ConfigError(f"an Encryptor takes a resolved backend ({', '.join(RESOLVED_BACKENDS)}), not "
                              f"{backend!r}: resolve it with resolve_backend, or encrypt through the encryption "
                              "service (cryptoffload.crypto.paillier.ENCRYPTION)")
        self.public_key = pk
        self.backend = backend
        self.constant_time = constant_time
        self.table_bytes = 0
        self._table: native.FixedBaseTable | None = None
        if self.backend == "gmpy2":
            self.window = 0
            return
        w = window if window is not None else default_window(pk.bits, self.backend, constant_time)
        if window is None:
            while w > 2 and table_bytes_estimate(pk, self.backend, w) > max_table_bytes:
                w -= 1
        elif table_bytes_estimate(pk, self.backend, w) > max_table_bytes:
            raise ConfigError(
                f"a {w}-bit window needs {table_bytes_estimate(pk, self.backend, w) / 2**20:.0f} MiB of table, "
                f"more than the {max_table_bytes / 2**20:.0f} MiB allowed")
        self.window = w
        self._table = native.FixedBaseTable(pk.hs, pk.nsquare, pk.n, pk.exp_bits, w, constant_time,
                                            native.BACKEND_CODES[self.backend])
        self.table_bytes = self._table.table_bytes

    def describe(self) -> str:
        if self.backend == "gmpy2":
            return "gmpy2 (powmod per ciphertext)"
        mode = "constant-time" if self.constant_time else "variable-time"
        return f"{self.backend}, {self.window}-bit windows, {mode} lookup, table {self.table_bytes / 2**20:.1f} MiB"

    def encrypt_raw(self, messages: Sequence[int], exponents: Sequence[int] | None = None, *,
                    progress: bool = False, chunk: int = 4096) -> list[int]:
        """Ciphertext integers for plaintexts already checked to lie in [0, n).

        ``exponents`` fixes the DJN randomness (tests compare backends with it); by default it
        comes from ``secrets``.
        """
        pk = self.public_key
        if exponents is None:
            exponents = [pk.random_exponent() for _ in range(len(messages))]
        elif len(exponents) != len(messages):
            raise ConfigError("need one exponent per message")
        if self._table is None:
            return [djn.encrypt(m, a, pk.n, pk.hs, pk.nsquare) for m, a in zip(messages, exponents)]
        if not progress or len(messages) <= chunk:
            return self._table.encrypt(messages, exponents)
        from rich.progress import Progress

        out: list[int] = []
        with Progress(transient=True) as bar:
            task = bar.add_task("encrypting", total=len(messages))
            for i in range(0, len(messages), chunk):
                out.extend(self._table.encrypt(messages[i:i + chunk], exponents[i:i + chunk]))
                bar.advance(task, min(chunk, len(messages) - i))
        return out

    def ciphertexts(self, messages: Sequence[int], *, progress: bool = False) -> list[Ciphertext]:
        """:meth:`encrypt_raw` as :class:`~.ciphertext.Ciphertext` values, for plaintexts the
        caller has checked to lie in [0, n) (once, where they entered)."""
        pk = self.public_key
        return [Ciphertext(pk, c) for c in self.encrypt_raw(messages, progress=progress)]

    def encrypt_to_words(self, messages: Sequence[int], exponents: Sequence[int] | None = None) -> bytes:
        """The ciphertexts of plaintexts already checked to lie in [0, n) as the native core's
        word buffer (what :func:`~cryptoffload.crypto._native.core.column_products` reads), never
        as Python integers: the fixed-base table writes them there directly when there is one.
        ``exponents`` as in :meth:`encrypt_raw`."""
        pk = self.public_key
        if exponents is None:
            exponents = [pk.random_exponent() for _ in range(len(messages))]
        elif len(exponents) != len(messages):
            raise ConfigError("need one exponent per message")
        if self._table is not None:
            return self._table.encrypt_to_words(messages, exponents)
        return native.ints_to_words(self.encrypt_raw(messages, exponents), pk.nsquare)

    def randomness(self, count: int) -> list[int]:
        """``count`` values h_s^a mod n^2 (the encryption of 0), for the offline pool."""
        return self.encrypt_raw([0] * count)
