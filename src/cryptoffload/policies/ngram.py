"""Request prediction for FPGA reconfiguration (Niwa, Maeda and Yamaguchi, IPSJ TACS 2005,
section 5), and beyond it.

The paper summarises the requests of a 5 MB *interval* (about 200 requests) by a **state**: the
two ciphers that carried most bytes, each with its share in 10 % buckets, or one of the 10
single-cipher states when one cipher had 100 % -- 45 * 10 * 10 + 10 = 4,510 states. A 2-gram
table counts which state follows which (the interval just before a request vs the interval
starting at it), built once from a *history* trace; the 2-gram matrix keeps, per state, the most
frequent next state, and the prediction is that state's cipher pair. States never seen in the
history fall back to the two globally most frequent ciphers ("0th-order prediction").

Why predictions are arrays computed ahead of the simulation: a prediction depends only on the
sequence of requests (what came before, or -- for the oracle -- after), never on timing. So each
predictor turns a trace into per-request arrays ``(pred_a, pred_b)`` once, and the SimPy model,
the fast kernel and the real runtime all consume the same arrays. Online prediction also fits:
its table learns from intervals that have *completed* before request i arrives.

Beyond the paper (its section 7.2 future work): :class:`OnlineTwoGram` (table updated as requests
arrive, older evidence decayed) and :class:`ThreeGram` (two previous intervals as context, backing
off to the 2-gram and then to 0th order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numba
import numpy as np

from cryptoffload.errors import ConfigError

WINDOW_BYTES = 5 * 1024 * 1024
N_BUCKETS = 10


@numba.njit(cache=True)
def n_pairs(k: int) -> int:
    return k * (k - 1) // 2


def n_states(k: int) -> int:
    """Number of interval states for k ciphers: 4,510 for the paper's 10."""
    return n_pairs(k) * N_BUCKETS * N_BUCKETS + k


@numba.njit(cache=True)
def pair_index(a: int, b: int, k: int) -> int:
    """Index of the unordered pair {a, b} (a != b) among k*(k-1)/2 pairs."""
    if a > b:
        a, b = b, a
    # pairs (0,1),(0,2),...,(0,k-1),(1,2),...
    return a * (2 * k - a - 1) // 2 + (b - a - 1)


def pair_members(k: int) -> np.ndarray:
    """Array [n_pairs, 2] mapping a pair index back to its two ciphers (ascending)."""
    out = np.empty((n_pairs(k), 2), dtype=np.int64)
    for a in range(k):
        for b in range(a + 1, k):
            out[pair_index(a, b, k)] = (a, b)
    return out


@numba.njit(cache=True)
def _state_of(counts: np.ndarray, k: int) -> int:
    """State of an interval from its per-cipher byte counts; -1 for an empty interval."""
    total = 0.0
    first = -1
    second = -1
    for c in range(k):
        v = counts[c]
        total += v
        if v > 0:
            if first < 0 or v > counts[first]:
                second = first
                first = c
            elif second < 0 or v > counts[second]:
                second = c
    if first < 0:
        return -1
    if second < 0:
        return n_pairs(k) * 100 + first
    ba = int(counts[first] * 10.0 / total)
    bb = int(counts[second] * 10.0 / total)
    if ba > 9:
        ba = 9
    if bb > 9:
        bb = 9
    a, b = first, second
    if a > b:
        a, b = b, a
        ba, bb = bb, ba
    return pair_index(a, b, k) * 100 + ba * 10 + bb


@numba.njit(cache=True)
def _window_states(cipher: np.ndarray, size: np.ndarray, k: int,
                   window: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per request i: state of the interval just before i, of the interval starting at i, and
    the index where that following interval ends (exclusive).

    An interval is the shortest run of consecutive requests carrying at least ``window`` bytes
    (shorter only at the ends of the trace)."""
    n = cipher.shape[0]
    before = np.empty(n, dtype=np.int64)
    after = np.empty(n, dtype=np.int64)
    after_end = np.empty(n, dtype=np.int64)
    counts = np.zeros(k, dtype=np.float64)
    # before: window [lo, i) -- smallest suffix of [0, i) with >= window bytes
    lo = 0
    total = 0.0
    for i in range(n):
        before[i] = _state_of(counts, k)
        counts[cipher[i]] += size[i]
        total += size[i]
        while lo <= i and total - size[lo] >= window:
            counts[cipher[lo]] -= size[lo]
            total -= size[lo]
            lo += 1
    # after: window [i, hi) -- smallest prefix of [i, n) with >= window bytes
    counts[:] = 0.0
    hi = 0
    total = 0.0
    for i in range(n):
        while hi < n and total < window:
            counts[cipher[hi]] += size[hi]
            total += size[hi]
            hi += 1
        after[i] = _state_of(counts, k)
        after_end[i] = hi
        counts[cipher[i]] -= size[i]
        total -= size[i]
    return before, after, after_end


@dataclass
class IntervalStates:
    """Interval states around every request of a trace (see :func:`interval_states`)."""

    before: np.ndarray  # state of the interval just before request i (-1: none yet)
    after: np.ndarray  # state of the interval starting at request i
    after_end: np.ndarray  # index one past that interval's last request
    before2: np.ndarray  # state of the interval before the `before` one (for 3-grams)
    k: int


def interval_states(cipher: np.ndarray, size: np.ndarray, k: int, window: float = WINDOW_BYTES) -> IntervalStates:
    """Compute the interval states of a trace (vectorised in numba; O(n k))."""
    if window <= 0:
        raise ConfigError(f"prediction interval must be positive, got {window} bytes")
    c = np.ascontiguousarray(cipher, dtype=np.int64)
    s = np.ascontiguousarray(size, dtype=np.float64)
    before, after, after_end = _window_states(c, s, k, float(window))
    # The interval before `before`: where the before-window of i starts, look one interval back.
    before2 = _shift_back(c, s, before, k, float(window))
    return IntervalStates(before, after, after_end, before2, k)


@numba.njit(cache=True)
def _shift_back(cipher: np.ndarray, size: np.ndarray, before: np.ndarray, k: int, window: float) -> np.ndarray:
    """State of the interval that ends where the before-interval of request i starts."""
    n = cipher.shape[0]
    out = np.full(n, -1, dtype=np.int64)
    # start[i] = first index of the before-window of i
    lo = 0
    total = 0.0
    start = np.empty(n, dtype=np.int64)
    for i in range(n):
        start[i] = lo
        total += size[i]
        while lo <= i and total - size[lo] >= window:
            total -= size[lo]
            lo += 1
    for i in range(n):
        if start[i] > 0:
            out[i] = before[start[i]]
    return out


def state_pair(state: int, k: int, filler: np.ndarray) -> tuple[int, int]:
    """The two ciphers a state asks the FPGA to hold (a single-cipher state is padded with
    ``filler[a]``, the most frequent other cipher)."""
    npairs = n_pairs(k)
    if state >= npairs * 100:
        a = state - npairs * 100
        return a, int(filler[a])
    members = pair_members(k)[state // 100]
    return int(members[0]), int(members[1])


@numba.njit(cache=True)
def _states_to_pairs(states: np.ndarray, k: int, members: np.ndarray, filler: np.ndarray,
                     fallback_a: int, fallback_b: int) -> tuple[np.ndarray, np.ndarray]:
    n = states.shape[0]
    pa = np.empty(n, dtype=np.int64)
    pb = np.empty(n, dtype=np.int64)
    single0 = members.shape[0] * 100
    for i in range(n):
        s = states[i]
        if s < 0:
            pa[i] = fallback_a
            pb[i] = fallback_b
        elif s >= single0:
            pa[i] = s - single0
            pb[i] = filler[s - single0]
        else:
            pa[i] = members[s // 100, 0]
            pb[i] = members[s // 100, 1]
    return pa, pb


@dataclass
class Prediction:
    """Per-request predicted cipher pair; ``source[i]`` says which model answered
    (0: 0th order, 1: 2-gram, 2: 3-gram, 3: oracle/other)."""

    pred_a: np.ndarray
    pred_b: np.ndarray
    source: np.ndarray

    def pairs(self) -> np.ndarray:
        return np.stack([self.pred_a, self.pred_b], axis=1)


def global_ranking(cipher: np.ndarray, k: int) -> np.ndarray:
    """Ciphers from most to least frequent (by request count; ties by index)."""
    counts = np.bincount(np.asarray(cipher, dtype=np.int64), minlength=k)
    return np.lexsort((np.arange(k), -counts))


def filler_for(ranking: np.ndarray, k: int) -> np.ndarray:
    """For each cipher, the most frequent *other* cipher: the second slot of a 1-cipher state."""
    out = np.empty(k, dtype=np.int64)
    for a in range(k):
        out[a] = next(int(c) for c in ranking if c != a)
    return out


class Predictor(Protocol):
    """What a reconfiguration policy needs of a prediction model: the whole trace's per-request
    pairs at once (see the module docstring for why ahead of the run). Every model below fits;
    a new one need not subclass them."""

    def predict(self, cipher: np.ndarray, size: np.ndarray,
                states: IntervalStates | None = None) -> Prediction: ...


class ZerothOrder:
    """Always the two globally most frequent ciphers of the history (the paper's fallback)."""

    def __init__(self, history_cipher: np.ndarray, k: int) -> None:
        self.k = k
        rank = global_ranking(history_cipher, k)
        self.pair = (int(rank[0]), int(rank[1]))
        self.filler = filler_for(rank, k)

    def predict(self, cipher: np.ndarray, size: np.ndarray, states: IntervalStates | None = None) -> Prediction:
        n = len(cipher)
        return Prediction(np.full(n, self.pair[0]), np.full(n, self.pair[1]), np.zeros(n, dtype=np.int8))


class TwoGram(ZerothOrder):
    """The paper's static 2-gram matrix, built once from the history: for each interval state,
    the cipher *pair* most often used in the interval that followed it.

    The paper's 2-gram table counts next *states* (pair and shares) and its 2-gram matrix keeps
    "the combination of two ciphers most likely to be used in the next interval"; we take the
    argmax over next pairs (shares summed out), which is that reading and is far less sparse
    than an argmax over 4,510 next states. ``next_over="state"`` gives the other reading."""

    def __init__(self, history_cipher: np.ndarray, history_size: np.ndarray, k: int,
                 window: float = WINDOW_BYTES, next_over: str = "pair") -> None:
        super().__init__(history_cipher, k)
        if next_over not in ("pair", "state"):
            raise ConfigError(f"next_over must be 'pair' or 'state', got {next_over!r}")
        self.window = window
        self.next_over = next_over
        hs = interval_states(history_cipher, history_size, k, window)
        ns = n_states(k)
        if next_over == "state":
            nxt = _argmax_table(hs.before, hs.after, ns)
            self.next_pair = np.where(nxt >= 0, _state_pair_index(np.maximum(nxt, 0), k, self.filler), -1)
        else:
            after_pair = _state_pair_index(hs.after, k, self.filler)
            self.next_pair = _argmax_table(hs.before, after_pair, ns, n_pairs(k))
        self.seen = self.next_pair >= 0

    def predict(self, cipher: np.ndarray, size: np.ndarray, states: IntervalStates | None = None) -> Prediction:
        st = states if states is not None else interval_states(cipher, size, self.k, self.window)
        pidx = np.where(st.before >= 0, self.next_pair[np.maximum(st.before, 0)], -1)
        return _pairs_from_pair_index(pidx, self.k, self.pair, 1)


def _argmax_table(before: np.ndarray, after: np.ndarray, ns: int, n_after: int | None = None) -> np.ndarray:
    """For each before-state, the after-value seen most often after it (ties: lowest index)."""
    na = ns if n_after is None else n_after
    ok = (before >= 0) & (after >= 0)
    keys = before[ok].astype(np.int64) * na + after[ok]
    uniq, counts = np.unique(keys, return_counts=True)
    b = uniq // na
    a = uniq % na
    order = np.lexsort((a, -counts, b))  # by before, then count desc, then after asc
    b, a = b[order], a[order]
    first = np.ones(len(b), dtype=bool)
    first[1:] = b[1:] != b[:-1]
    table = np.full(ns, -1, dtype=np.int64)
    table[b[first]] = a[first]
    return table


class OracleNext(ZerothOrder):
    """Knows the future: the real two main ciphers of the interval that starts at each request.

    When that interval holds a single cipher (a long run, or an interval of one request), the
    second slot gets the next *different* cipher the trace will request after the interval --
    the Oracle knows that too -- rather than a frequency-based filler, so that no predictor
    restricted to the past can know more than the Oracle does."""

    def __init__(self, history_cipher: np.ndarray, k: int, window: float = WINDOW_BYTES) -> None:
        super().__init__(history_cipher, k)
        self.window = window

    def predict(self, cipher: np.ndarray, size: np.ndarray, states: IntervalStates | None = None) -> Prediction:
        st = states if states is not None else interval_states(cipher, size, self.k, self.window)
        rank = global_ranking(cipher, self.k)
        filler = filler_for(rank, self.k)
        c = np.ascontiguousarray(cipher, dtype=np.int64)
        pa, pb = _states_to_pairs(st.after, self.k, pair_members(self.k), filler, int(rank[0]), int(rank[1]))
        pb = _next_other_cipher(c, st.after, st.after_end, pa, pb, pair_members(self.k).shape[0] * 100)
        return Prediction(pa, pb, np.full(len(cipher), 3, dtype=np.int8))


@numba.njit(cache=True)
def _next_other_cipher(cipher: np.ndarray, after: np.ndarray, after_end: np.ndarray, pa: np.ndarray,
                       pb: np.ndarray, single0: int) -> np.ndarray:
    """For single-cipher intervals, the first cipher other than ``pa[i]`` requested at or after
    the interval's end (``pb[i]`` kept when the trace has none)."""
    n = cipher.shape[0]
    change = np.empty(n + 1, dtype=np.int64)  # change[j]: first index > j with another cipher
    change[n] = n
    if n > 0:
        change[n - 1] = n
    for j in range(n - 2, -1, -1):
        change[j] = j + 1 if cipher[j + 1] != cipher[j] else change[j + 1]
    out = pb.copy()
    for i in range(n):
        if after[i] < single0:
            continue
        e = after_end[i]
        if e >= n:
            continue
        j = e if cipher[e] != pa[i] else change[e]
        if j < n:
            out[i] = cipher[j]
    return out


class RandomPair(ZerothOrder):
    """Nopredict: on a reconfiguration, load two distinct ciphers drawn at random (seeded).

    The paper: "when reconfiguring, two kinds of circuits are loaded at random". With
    ``include_request=True`` the pair is the requested cipher plus a random partner, a stronger
    baseline the paper does not define (kept for sensitivity runs)."""

    def __init__(self, history_cipher: np.ndarray, k: int, seed: int, include_request: bool = False) -> None:
        super().__init__(history_cipher, k)
        self.seed = seed
        self.include_request = include_request

    def predict(self, cipher: np.ndarray, size: np.ndarray, states: IntervalStates | None = None) -> Prediction:
        rng = np.random.default_rng(self.seed)
        c = np.asarray(cipher, dtype=np.int64)
        first = c.copy() if self.include_request else rng.integers(0, self.k, size=len(c))
        partner = (first + rng.integers(1, self.k, size=len(c))) % self.k
        return Prediction(first, partner, np.full(len(c), 3, dtype=np.int8))


@numba.njit(cache=True)
def _online_predict(before: np.ndarray, after_pair: np.ndarray, after_end: np.ndarray,
                    counts: np.ndarray, best: np.ndarray, decay: float) -> np.ndarray:
    n = before.shape[0]
    out = np.full(n, -1, dtype=np.int64)
    w = 1.0
    j = 0
    for i in range(n):
        # learn every (before, after) whose after-interval has completed before request i
        while j < i and after_end[j] <= i:
            s = before[j]
            p = after_pair[j]
            if s >= 0 and p >= 0:
                counts[s, p] += w
                if best[s] < 0 or counts[s, p] > counts[s, best[s]] or (
                        counts[s, p] == counts[s, best[s]] and p < best[s]):
                    best[s] = p
                w /= decay
                if w > 1e200:
                    counts *= 1e-200
                    w *= 1e-200
            j += 1
        s = before[i]
        if s >= 0:
            out[i] = best[s]
    return out


@numba.njit(cache=True)
def _state_pair_index(states: np.ndarray, k: int, filler: np.ndarray) -> np.ndarray:
    n = states.shape[0]
    out = np.full(n, -1, dtype=np.int64)
    single0 = (k * (k - 1) // 2) * 100
    for i in range(n):
        s = states[i]
        if s < 0:
            continue
        if s >= single0:
            a = s - single0
            out[i] = pair_index(a, filler[a], k)
        else:
            out[i] = s // 100
    return out


class OnlineTwoGram(ZerothOrder):
    """2-gram over next *cipher pairs*, warm-started from the history and updated as requests
    arrive; evidence of age t (in learned intervals) weighs ``decay**t`` so the table follows a
    drifting client population. Argmax per row is maintained incrementally (weights only grow)."""

    def __init__(self, history_cipher: np.ndarray, history_size: np.ndarray, k: int,
                 decay: float = 0.9999, window: float = WINDOW_BYTES, warm_start: bool = True) -> None:
        super().__init__(history_cipher, k)
        if not (0.0 < decay <= 1.0):
            raise ConfigError(f"decay must be in (0, 1], got {decay}")
        self.decay = decay
        self.window = window
        ns, npairs = n_states(k), n_pairs(k)
        self.counts = np.zeros((ns, npairs), dtype=np.float64)
        self.best = np.full(ns, -1, dtype=np.int64)
        if warm_start:
            hs = interval_states(history_cipher, history_size, k, window)
            hp = _state_pair_index(hs.after, k, self.filler)
            _online_predict(hs.before, hp, hs.after_end, self.counts, self.best, decay)

    def predict(self, cipher: np.ndarray, size: np.ndarray, states: IntervalStates | None = None) -> Prediction:
        st = states if states is not None else interval_states(cipher, size, self.k, self.window)
        ap = _state_pair_index(st.after, self.k, self.filler)
        counts, best = self.counts.copy(), self.best.copy()  # predicting must not mutate the model
        pidx = _online_predict(st.before, ap, st.after_end, counts, best, self.decay)
        return _pairs_from_pair_index(pidx, self.k, self.pair, 1)


def _pairs_from_pair_index(pidx: np.ndarray, k: int, fallback: tuple[int, int], src: int) -> Prediction:
    members = pair_members(k)
    ok = pidx >= 0
    pa = np.where(ok, members[np.maximum(pidx, 0), 0], fallback[0])
    pb = np.where(ok, members[np.maximum(pidx, 0), 1], fallback[1])
    return Prediction(pa.astype(np.int64), pb.astype(np.int64), np.where(ok, src, 0).astype(np.int8))


class ThreeGram(TwoGram):
    """Context = the states of the two previous intervals; unseen contexts back off to the
    paper's 2-gram matrix and then to 0th order."""

    def __init__(self, history_cipher: np.ndarray, history_size: np.ndarray, k: int,
                 window: float = WINDOW_BYTES) -> None:
        super().__init__(history_cipher, history_size, k, window)
        hs = interval_states(history_cipher, history_size, k, window)
        ns = n_states(k)
        ok = (hs.before >= 0) & (hs.before2 >= 0) & (hs.after >= 0)
        ctx = hs.before2[ok] * ns + hs.before[ok]
        nxt = _state_pair_index(hs.after, k, self.filler)[ok]
        npairs = n_pairs(k)
        keys = ctx * npairs + nxt
        uniq, counts = np.unique(keys, return_counts=True)
        c, p = uniq // npairs, uniq % npairs
        order = np.lexsort((p, -counts, c))
        c, p = c[order], p[order]
        first = np.ones(len(c), dtype=bool)
        first[1:] = c[1:] != c[:-1]
        self.ctx_keys = c[first]
        self.ctx_pair = p[first]

    def predict(self, cipher: np.ndarray, size: np.ndarray, states: IntervalStates | None = None) -> Prediction:
        st = states if states is not None else interval_states(cipher, size, self.k, self.window)
        base = super().predict(cipher, size, st)
        ns = n_states(self.k)
        ok = (st.before >= 0) & (st.before2 >= 0)
        ctx = np.where(ok, st.before2 * ns + st.before, -1)
        pos = np.searchsorted(self.ctx_keys, ctx)
        pos = np.minimum(pos, max(len(self.ctx_keys) - 1, 0))
        hit = ok & (len(self.ctx_keys) > 0)
        if len(self.ctx_keys):
            hit &= self.ctx_keys[pos] == ctx
        members = pair_members(self.k)
        pa = np.where(hit, members[self.ctx_pair[pos] if len(self.ctx_pair) else 0, 0], base.pred_a)
        pb = np.where(hit, members[self.ctx_pair[pos] if len(self.ctx_pair) else 0, 1], base.pred_b)
        src = np.where(hit, 2, base.source).astype(np.int8)
        return Prediction(pa.astype(np.int64), pb.astype(np.int64), src)
