"""DJN encryption with a fixed-base table for h_s, and the choice of arithmetic backend.

Backends, all producing identical ciphertexts from the same randomness (tested):
  ``gmpy2``  the reference: one ``powmod`` per ciphertext, no table.
  ``gmp``    the native C core, 64-bit limbs, Montgomery multiplication on GMP's mpn layer.
  ``ifma``   the native core, eight ciphertexts at a time in AVX512-IFMA (Intel crypto_mb);
             its widest kernel holds n^2 of keys up to 2,053 bits.
  ``auto``   ``ifma`` where the CPU has it and the key fits its kernel, else ``gmp``, else
             ``gmpy2`` -- so every key size works with the default on every CPU.

Side channels: the table lookup indexes by digits of the secret exponent a. The default is a
constant-time gather (every lookup reads the whole window); ``constant_time=False`` reads one
entry and is faster but leaks cache-line access patterns to a co-located attacker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from cryptoffload.crypto._native import core as native
from cryptoffload.crypto.paillier import djn
from cryptoffload.errors import BackendUnavailable, ConfigError

if TYPE_CHECKING:
    from cryptoffload.crypto.paillier.keys import PublicKey

BACKENDS = ("auto", "ifma", "gmp", "gmpy2")

# Window sizes chosen by `python benchmarks/paillier.py --choose-window` on the development
# machine (Xeon with AVX512-IFMA, 2 cores; benchmarks/results/paillier_windows.json):
# key bits -> (backend, constant_time) -> window bits. Keys between sizes use the smaller
# size's row. Memory is ceil(exp_bits / w) * 2^w entries of one n^2-sized number each.
DEFAULT_WINDOWS_BY_BITS: dict[int, dict[tuple[str, bool], int]] = {
    1024: {("ifma", False): 12, ("ifma", True): 6, ("gmp", False): 12, ("gmp", True): 5},
    2048: {("ifma", False): 10, ("ifma", True): 7, ("gmp", False): 11, ("gmp", True): 6},
}

DEFAULT_MAX_TABLE_BYTES = 256 * 1024 * 1024


def default_window(bits: int, backend: str, constant_time: bool) -> int:
    sizes = sorted(DEFAULT_WINDOWS_BY_BITS)
    row = DEFAULT_WINDOWS_BY_BITS[max([b for b in sizes if b <= bits], default=sizes[0])]
    return row.get((backend, constant_time), 0)


def resolve_backend(backend: str, nsquare_bits: int | None = None) -> str:
    """The backend that will run: ``auto`` resolved for this machine and, when
    ``nsquare_bits`` (the size of n^2) is given, for this key; an explicit backend that cannot
    run is refused with what to use instead."""
    if backend not in BACKENDS:
        raise ConfigError(f"unknown Paillier backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    fits = nsquare_bits is None or native.ifma_fixed_base_fits(nsquare_bits)
    if backend == "auto":
        if native.ifma_available() and fits:
            return "ifma"
        return "gmp" if native.native_available() else "gmpy2"
    if backend == "ifma" and not native.ifma_available():
        raise BackendUnavailable("backend 'ifma' needs AVX512-IFMA and the crypto_mb build; use 'gmp' or 'auto'")
    if backend == "ifma" and nsquare_bits is not None and not fits:   # no size: nothing to refuse
        raise ConfigError(
            f"backend 'ifma' handles keys up to 2,053 bits (crypto_mb's widest kernel), not a "
            f"{(nsquare_bits + 1) // 2}-bit key; use 'auto' or 'gmp'")
    if backend == "gmp":
        native.require_native()
    return backend


def table_bytes_estimate(pk: "PublicKey", backend: str, window: int) -> int:
    windows = -(-pk.exp_bits // window)
    entry = 8 * (-(-pk.nsquare.bit_length() // 52)) if backend == "ifma" else 8 * (-(-pk.nsquare.bit_length() // 64))
    return windows * (1 << window) * entry


class Encryptor:
    """DJN encryption for one public key with a fixed-base table for h_s.

    ``window`` defaults to the benchmark-chosen size for the backend and lookup mode, shrunk
    until the table fits ``max_table_bytes``; ``table_bytes`` reports the memory used.
    """

    def __init__(self, pk: "PublicKey", backend: str = "auto", *, constant_time: bool = True,
                 window: int | None = None, max_table_bytes: int = DEFAULT_MAX_TABLE_BYTES) -> None:
        self.public_key = pk
        self.backend = resolve_backend(backend, pk.nsquare.bit_length())
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
        self._table = native.FixedBaseTable(
            pk.hs, pk.nsquare, pk.n, pk.exp_bits, w, constant_time,
            native.BACKEND_IFMA if self.backend == "ifma" else native.BACKEND_GMP)
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
