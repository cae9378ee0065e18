"""The evaluation keys of a backend in one device array, and the Galois permutations beside them.

Why stacked: a batched key switch (many rotations of many ciphertexts, or one hoisted
``rotate_many``) is one launch per step only if every key it uses is found from one base
pointer and an index (``ks_items_k``); the permutations likewise. The store is rebuilt when keys
are added (key generation, loading a context), never during an evaluation, and the backend's
own references then point into it (views), so the keys are held once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Hashable

import numpy as np

if TYPE_CHECKING:
    from cryptoffload.crypto.ckks.gpu.arith import Arith


class EvalKeys:
    """Named key-switching keys ``(G, 2, K, N)`` stacked into ``(NK, G, 2, K, N)``, with the
    permutation of each Galois element a key is for (``elts``), stacked into ``(NP, N)``."""

    def __init__(self, ar: Arith) -> None:
        self.ar = ar
        self._keys: dict[Hashable, Any] = {}
        self._elts: dict[Hashable, int] = {}
        self._stack: Any = None
        self._index: dict[Hashable, int] = {}
        self._perms: Any = None
        self._perm_index: dict[int, int] = {}

    def put(self, name: Hashable, key: Any, elt: int | None = None) -> None:
        self._keys[name] = key
        if elt is not None:
            self._elts[name] = elt
        self._stack = None

    def drop(self, name: Hashable) -> None:
        self._keys.pop(name, None)
        self._elts.pop(name, None)
        self._stack = None

    def get(self, name: Hashable) -> Any:
        return self._keys[name]

    def __contains__(self, name: Hashable) -> bool:
        return name in self._keys

    def clear(self) -> None:
        self.__init__(self.ar)  # type: ignore[misc]

    def build(self) -> None:
        """Stack the keys (and make every name's key a view into the stack) and the permutations."""
        if self._stack is not None or not self._keys:
            return
        xp = self.ar.xp
        names = list(self._keys)
        self._stack = xp.stack([self._keys[n] for n in names])
        self._index = {n: i for i, n in enumerate(names)}
        self._keys = {n: self._stack[i] for i, n in enumerate(names)}
        elts = sorted(set(self._elts.values()))
        self._perm_index = {e: i for i, e in enumerate(elts)}
        host = np.stack([self.ar.ring.galois_perm(e) for e in elts]) if elts else np.zeros((1, self.ar.ring.n), np.int64)
        self._perms = xp.asarray(host)

    @property
    def stack(self) -> Any:
        self.build()
        return self._stack

    @property
    def perms(self) -> Any:
        self.build()
        return self._perms

    def index(self, name: Hashable) -> int:
        self.build()
        return self._index[name]

    def perm_index(self, elt: int) -> int:
        self.build()
        return self._perm_index[elt]
