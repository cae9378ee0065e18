"""A bounded table of things costly to make and worth keeping between calls: Paillier
encryption tables, a GPU's per-key device contexts and Montgomery moduli, CKKS backends a Dask
worker rebuilt from a client's context.

Why one class: every such table is keyed by something a client chooses (its public key, its
context), so a server that kept each entry for good would grow with every key it had ever seen
-- a client could exhaust its memory (or a GPU's) by sending new keys. Each table is bounded by
a number of entries and, where entries differ much in size, by their total weight (bytes); the
least recently used entries go first, and the entry just made always stays, whatever it weighs
(a table too small for one entry would make it again on every call). It is thread-safe: the
engines' dispatchers and a server's request threads share one; an entry is made under the
lock, so two threads asking for the same key make it once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

__all__ = ["LruCache"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LruCache(Generic[K, V]):
    """At most ``max_entries`` values (and, with ``weigh``, at most ``max_weight`` in all),
    the least recently used dropped first."""

    def __init__(self, max_entries: int, *, max_weight: int | None = None,
                 weigh: Callable[[V], int] | None = None) -> None:
        if max_entries < 1:
            raise ValueError("an LruCache keeps at least one entry")
        if (max_weight is None) != (weigh is None):
            raise ValueError("max_weight and weigh come together")
        self.max_entries = max_entries
        self.max_weight = max_weight
        self._weigh = weigh
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The value kept for ``key`` (now the most recently used), else ``make()`` kept."""
        with self._lock:
            value = self._entries.get(key)
            if value is None:
                value = make()
                self._entries[key] = value
                self._evict()
            else:
                self._entries.move_to_end(key)
            return value

    def get(self, key: K) -> V | None:
        """The value kept for ``key`` (now the most recently used), or None."""
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._entries

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def values(self) -> list[V]:
        """The values kept now, least recently used first (a copy)."""
        with self._lock:
            return list(self._entries.values())

    def clear(self) -> None:
        """Drop every entry (tests, and callers that need the memory back)."""
        with self._lock:
            self._entries.clear()

    def _evict(self) -> None:
        while len(self._entries) > 1 and (len(self._entries) > self.max_entries or self._too_heavy()):
            self._entries.popitem(last=False)

    def _too_heavy(self) -> bool:
        if self._weigh is None or self.max_weight is None:
            return False
        weigh = self._weigh
        return sum(weigh(v) for v in self._entries.values()) > self.max_weight
