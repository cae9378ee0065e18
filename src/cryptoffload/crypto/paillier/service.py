"""The encryption service: the one place that turns a backend request into the backend that
runs, and that keeps the fixed-base tables.

Why a service, and not methods on the key: a table is expensive (tens of MB at 2048 bits, built
with thousands of products), depends on the backend, the lookup mode and the window as much as
on the key, and is worth keeping between calls; a key is a plain value
(:class:`~.public_key.PublicKey`) that any number of callers rebuild from the same numbers (an
engine's batch carries n and h_s, a worker process rebuilds the key). So the tables live here,
keyed by those numbers, and every encryption of the package goes through :data:`ENCRYPTION`.

What "resolved once" means: each call resolves its backend request exactly once, for the key's
size, with :func:`~.encryptor.resolve_backend` -- not again in the cache and not again in the
:class:`~.encryptor.Encryptor`, which takes the resolved name as given. (Not once per process:
which backends run can change under a caller, ``COPL_DISABLE_IFMA`` for one, and resolving
costs a few attribute reads.)

What "checked once" means: :meth:`EncryptionService.encrypt` and
:meth:`~EncryptionService.encrypt_many` check each plaintext once (an int in [0, n)); a caller
whose own boundary has checked its values already (the Python API and the command line check
them against a bound) asks for the :meth:`~EncryptionService.encryptor` and calls its
:meth:`~.encryptor.Encryptor.ciphertexts`, which checks nothing again.

The cache is bounded (:class:`~cryptoffload.lru.LruCache`): at most
:data:`DEFAULT_CACHE_BYTES` of tables and :data:`MAX_CACHED_ENCRYPTORS` encryptors, the least
recently used dropped first (the one just built always stays: its caller holds it anyway).
"""

from __future__ import annotations

from typing import Sequence

from cryptoffload.crypto.paillier.ciphertext import Ciphertext
from cryptoffload.crypto.paillier.encryptor import Encryptor, resolve_backend
from cryptoffload.crypto.paillier.public_key import PublicKey
from cryptoffload.lru import LruCache

#: the most table memory kept between calls (one table of the largest default size fits)
DEFAULT_CACHE_BYTES = 256 * 1024 * 1024
MAX_CACHED_ENCRYPTORS = 16

#: what identifies a cached table: n, h_s, the resolved backend, constant time, the window asked
TableKey = tuple[int, int, str, bool, int | None]


class EncryptionService:
    """Resolves each call's backend once and keeps encryptors (with their tables) between
    calls, bounded by ``cache_bytes`` and ``max_entries`` (see the module docstring)."""

    def __init__(self, *, cache_bytes: int = DEFAULT_CACHE_BYTES, max_entries: int = MAX_CACHED_ENCRYPTORS) -> None:
        self.cache_bytes = cache_bytes
        self.max_entries = max_entries
        self._tables: LruCache[TableKey, Encryptor] = LruCache(max_entries, max_weight=cache_bytes,
                                                               weigh=lambda e: e.table_bytes)

    def encryptor(self, pk: PublicKey, backend: str = "auto", *, constant_time: bool = True,
                  window: int | None = None) -> Encryptor:
        """The encryptor for ``pk`` with ``backend`` resolved (here, once) for its size; the
        table is built on first use and kept (an explicit backend that cannot run, or cannot
        hold this key, is refused with what to use instead)."""
        resolved = resolve_backend(backend, pk.nsquare.bit_length())
        key: TableKey = (pk.n, pk.hs, resolved, constant_time, window)
        return self._tables.get_or_make(key, lambda: Encryptor(pk, resolved, constant_time=constant_time, window=window))

    def cached(self) -> int:
        """How many encryptors are kept now."""
        return len(self._tables)

    def forget(self) -> None:
        """Drop every kept table (tests, and callers that need the memory back)."""
        self._tables.clear()

    # -- encryption -------------------------------------------------------------------------
    def encrypt(self, pk: PublicKey, m: int, *, backend: str = "auto", constant_time: bool = True) -> Ciphertext:
        """One plaintext m in [0, n) (checked here) under ``pk``."""
        return self.encrypt_many(pk, [m], backend=backend, constant_time=constant_time)[0]

    def encrypt_many(self, pk: PublicKey, plaintexts: Sequence[int], *, backend: str = "auto",
                     constant_time: bool = True, progress: bool = False) -> list[Ciphertext]:
        """Plaintexts in [0, n) (each checked here, once) under ``pk``, with one encryptor
        (``progress``: a bar on stderr for large inputs)."""
        checked = [pk.check_plaintext(m) for m in plaintexts]
        return self.encryptor(pk, backend, constant_time=constant_time).ciphertexts(checked, progress=progress)

    def randomness(self, pk: PublicKey, count: int, *, backend: str = "auto") -> list[int]:
        """``count`` fresh values h_s^a mod n^2 (encryptions of 0)."""
        return self.encryptor(pk, backend).randomness(count)

    def rerandomize(self, pk: PublicKey, cts: Sequence[Ciphertext]) -> list[Ciphertext]:
        """The same plaintexts with fresh randomness: each ciphertext times a new encryption of
        0. A deterministic result (``c1 * c2``, ``c^k``, ``c^0 = 1``) would let whoever saw the
        operands recognise it; after this it is indistinguishable from a new encryption.
        ``cts`` are ``pk``'s (the caller checked them)."""
        if not cts:
            return []
        n2 = pk.nsquare
        return [Ciphertext(pk, c.value * r % n2) for c, r in zip(cts, self.randomness(pk, len(cts)))]


#: the process's encryption service: every encryption of the package goes through it
ENCRYPTION = EncryptionService()
