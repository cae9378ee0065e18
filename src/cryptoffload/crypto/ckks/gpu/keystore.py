"""The evaluation keys of a backend in one device array of 32-bit words, and the Galois
permutations beside them.

Why stacked: a batched key switch (many rotations of many ciphertexts, or one hoisted
``rotate_many``) is one launch per step only if every key it uses is found from one base
pointer and an index (``ks_items_k``); the permutations likewise. Why 32-bit words: every
residue is below 2^31 (``chain.py``), and keys are most of a bootstrap's memory -- ~57 keys of
dnum 3 at N = 2^16 are 5.3 GB as 32-bit words, 10.6 GB as 64-bit ones (``ks_items_k`` reads
them as 32-bit words and widens each product's operand).

Memory: a key is held once. Keys put after the stack exists go into its free slots; when none
is left they wait beside it until the next use, which copies the stack once into a larger one
(:meth:`EvalKeys.reserve` makes room for a known number first, so that a bootstrap's ~57 keys
never exist twice); the backend's own references are views into the stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Hashable, TypeAlias

import numpy as np
import numpy.typing as npt

from cryptoffload.crypto.ckks.errors import CkksError
from cryptoffload.crypto.ckks.gpu.kernelset import Index, KeyWords

if TYPE_CHECKING:
    from cryptoffload.crypto.ckks.gpu.arith import Arith

#: the word keys are held in
KEY_DTYPE = np.uint32
#: keys as the store holds them (one key ``(G, 2, K, N)``, or the stack of them)
KeyArray: TypeAlias = npt.NDArray[np.uint32]


class EvalKeys:
    """Named key-switching keys ``(G, 2, K, N)`` in the slots of one ``(capacity, G, 2, K, N)``
    array of 32-bit words (``index`` gives a key's slot), with the permutation of each Galois
    element a key is for (``elts``), stacked into ``(NP, N)``."""

    def __init__(self, ar: Arith) -> None:
        self.ar = ar
        self._stack: KeyArray | None = None
        self._index: dict[Hashable, int] = {}
        self._free: list[int] = []
        self._pending: dict[Hashable, KeyArray] = {}
        self._elts: dict[Hashable, int] = {}
        self._perms: Index | None = None
        self._perm_index: dict[int, int] = {}

    def put(self, name: Hashable, key: KeyWords, elt: int | None = None) -> None:
        words = key.astype(KEY_DTYPE, copy=False)
        stack = self._stack
        if stack is not None and name in self._index:
            stack[self._index[name]] = words
        elif stack is not None and self._free and words.shape == stack.shape[1:]:
            slot = self._free.pop(0)
            stack[slot] = words
            self._index[name] = slot
        else:
            self._pending[name] = words
        if elt is not None:
            self._elts[name] = elt
            self._perms = None

    def drop(self, name: Hashable) -> None:
        self._pending.pop(name, None)
        slot = self._index.pop(name, None)
        if slot is not None:
            self._free.append(slot)
            self._free.sort()
        if self._elts.pop(name, None) is not None:
            self._perms = None

    def get(self, name: Hashable) -> KeyArray:
        if name in self._pending:
            return self._pending[name]
        slot = self._index[name]   # a KeyError for a name never put
        if self._stack is None:    # a name has a slot only once the stack exists
            raise AssertionError("the key store lost its stack")
        return self._stack[slot]

    def __contains__(self, name: Hashable) -> bool:
        return name in self._index or name in self._pending

    def __len__(self) -> int:
        return len(self._index) + len(self._pending)

    def clear(self) -> None:
        self.__init__(self.ar)  # type: ignore[misc]

    def reserve(self, more: int, shape: tuple[int, ...]) -> None:
        """Room for ``more`` keys of ``shape`` beyond those held, made now (one copy of the keys
        held), so that putting them copies nothing more."""
        if len(self._free) >= more and self._stack is not None and self._stack.shape[1:] == shape and \
                not self._pending:
            return
        self._restack(len(self) + more, shape)

    def _restack(self, capacity: int, shape: tuple[int, ...]) -> None:
        """Every key held (and the pending ones) copied into a new stack of ``capacity`` slots."""
        names = list(self._index) + list(self._pending)
        stack = self.ar.xp.empty((capacity,) + tuple(shape), dtype=KEY_DTYPE)
        for slot, name in enumerate(names):
            stack[slot] = self.get(name)
        self._stack, self._pending = stack, {}
        self._index = {name: slot for slot, name in enumerate(names)}
        self._free = list(range(len(names), capacity))

    def build(self) -> None:
        """Put the pending keys into the stack (a larger one if they do not fit), and the
        permutations into theirs."""
        if self._pending:
            shape = next(iter(self._pending.values())).shape
            self._restack(len(self), shape)
        if self._perms is None:
            elts = sorted(set(self._elts.values()))
            self._perm_index = {e: i for i, e in enumerate(elts)}
            host = (np.stack([self.ar.ring.galois_perm(e) for e in elts]) if elts
                    else np.zeros((1, self.ar.ring.n), np.int64))
            self._perms = self.ar.xp.asarray(host)

    @property
    def stack(self) -> KeyArray:
        self.build()
        if self._stack is None:
            raise CkksError("no evaluation keys are held: generate or load the relinearisation and Galois keys first")
        return self._stack

    @property
    def perms(self) -> Index:
        self.build()
        if self._perms is None:   # build() makes them
            raise AssertionError("the key store built no permutations")
        return self._perms

    @property
    def nbytes(self) -> int:
        """Bytes of the key stack (free slots included) and the keys waiting beside it."""
        held = 0 if self._stack is None else int(self._stack.nbytes)
        return held + sum(int(k.nbytes) for k in self._pending.values())

    def index(self, name: Hashable) -> int:
        self.build()
        return self._index[name]

    def perm_index(self, elt: int) -> int:
        self.build()
        return self._perm_index[elt]
