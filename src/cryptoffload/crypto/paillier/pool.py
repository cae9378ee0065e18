"""The offline/online split of DJN encryption: randomness computed ahead of time."""

from __future__ import annotations

import collections
import threading
from typing import Sequence

from cryptoffload.crypto.paillier.ciphertext import Ciphertext
from cryptoffload.crypto.paillier.encryptor import Encryptor
from cryptoffload.errors import ConfigError


class RandomnessPool:
    """Offline/online encryption: a background thread keeps ``capacity`` values h_s^a ready,
    so online encryption is one multiplication, (1 + m n) * r mod n^2.

    The native core releases the GIL, so the refill really runs on another core. When the
    pool is empty the caller computes its own randomness (counted in ``misses``). Use as a
    context manager, or call :meth:`close`.
    """

    def __init__(self, encryptor: Encryptor, capacity: int = 4096, batch: int = 256, background: bool = True) -> None:
        if capacity < 1 or batch < 1:
            raise ConfigError("pool capacity and batch must be positive")
        self.encryptor = encryptor
        self.public_key = encryptor.public_key
        self.capacity = capacity
        self.batch = min(batch, capacity)
        self.misses = 0
        self._values: collections.deque[int] = collections.deque()
        self._cond = threading.Condition()
        self._closed = False
        self._thread: threading.Thread | None = None
        if background:
            self._thread = threading.Thread(target=self._fill, name="paillier-randomness", daemon=True)
            self._thread.start()

    def _fill(self) -> None:
        while True:
            with self._cond:
                while not self._closed and len(self._values) >= self.capacity:
                    self._cond.wait()
                if self._closed:
                    return
                want = min(self.batch, self.capacity - len(self._values))
            fresh = self.encryptor.randomness(want)
            with self._cond:
                self._values.extend(fresh)
                self._cond.notify_all()

    def fill(self) -> None:
        """Fill to capacity now, in the caller's thread (for a pool without a thread)."""
        missing = self.capacity - len(self._values)
        if missing > 0:
            self._values.extend(self.encryptor.randomness(missing))

    def wait_full(self, timeout: float | None = None) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: len(self._values) >= self.capacity or self._closed, timeout)

    def __len__(self) -> int:
        return len(self._values)

    def take(self, count: int) -> list[int]:
        out: list[int] = []
        with self._cond:
            while self._values and len(out) < count:
                out.append(self._values.popleft())
            self._cond.notify_all()
        if len(out) < count:
            self.misses += count - len(out)
            out.extend(self.encryptor.randomness(count - len(out)))
        return out

    def encrypt(self, m: int) -> Ciphertext:
        return self.encrypt_many([m])[0]

    def encrypt_many(self, values: Sequence[int]) -> list[Ciphertext]:
        pk = self.public_key
        n, n2 = pk.n, pk.nsquare
        rs = self.take(len(values))
        return [Ciphertext(pk, (1 + pk.check_plaintext(m) * n) * r % n2) for m, r in zip(values, rs)]

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> "RandomnessPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
