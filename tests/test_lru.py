"""cryptoffload.lru: the bounded table every key-keyed cache uses (issue 32's class of attack:
a client that sends new keys must not grow a server's memory without bound)."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoffload.lru import LruCache


def test_least_recently_used_goes_first() -> None:
    cache: LruCache[str, object] = LruCache(2)
    a, b = cache.get_or_make("a", object), cache.get_or_make("b", object)
    assert cache.get_or_make("a", object) is a      # a used last: b goes first
    c = cache.get_or_make("c", object)
    assert "b" not in cache and cache.values() == [a, c]
    assert cache.get("b") is None and cache.get("a") is a
    assert cache.values() == [c, a]                 # get() counts as a use
    assert cache.get_or_make("b", object) is not b  # made again
    cache.clear()
    assert len(cache) == 0


def test_weight_bounds_the_total_but_the_entry_just_made_stays() -> None:
    cache: LruCache[int, bytes] = LruCache(10, max_weight=100, weigh=len)
    first = cache.get_or_make(1, lambda: b"a" * 60)
    second = cache.get_or_make(2, lambda: b"b" * 30)
    assert cache.values() == [first, second]
    third = cache.get_or_make(3, lambda: b"c" * 50)  # 140 > 100: the oldest goes, 80 left
    assert cache.values() == [second, third]
    assert cache.get(1) is None and cache.get(2) is second
    big = cache.get_or_make(4, lambda: b"x" * 500)  # heavier than the bound alone: kept, alone
    assert cache.values() == [big]


def test_bad_bounds_are_refused() -> None:
    with pytest.raises(ValueError):
        LruCache(0)
    with pytest.raises(ValueError):
        LruCache(3, max_weight=10)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5), st.lists(st.integers(0, 9), max_size=60))
def test_it_keeps_exactly_the_most_recently_used_keys(bound: int, keys: list[int]) -> None:
    cache: LruCache[int, int] = LruCache(bound)
    for k in keys:
        assert cache.get_or_make(k, lambda k=k: k * 10) == k * 10
    recent: list[int] = []
    for k in reversed(keys):
        if k not in recent:
            recent.append(k)
    assert sorted(cache.values()) == sorted(k * 10 for k in recent[:bound])


def test_threads_asking_for_one_key_make_it_once() -> None:
    cache: LruCache[str, object] = LruCache(4)
    made: list[object] = []
    start = threading.Barrier(8)

    def make() -> object:
        made.append(object())
        return made[-1]

    def ask() -> None:
        start.wait()
        cache.get_or_make("k", make)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 1 and cache.values() == made
