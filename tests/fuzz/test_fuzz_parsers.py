"""Fuzz every parser of outside input (``targets.TARGETS``) with mutated valid inputs.

The contract (issue 32): a parser returns a value or raises a
:class:`~cryptoffload.errors.CryptoffloadError` (a one-line user error); anything else is a
crash. ``make test`` runs a few examples per target (:data:`QUICK_EXAMPLES`); ``make fuzz``
sets ``CRYPTOFFLOAD_FUZZ_SECONDS`` and each target is fuzzed again and again, with fresh
random seeds, until its share of that time is spent. An input that crashes a parser is saved
(shrunk) under ``corpus/<target>/`` and, once the parser is fixed, replayed by every
``make test`` (``test_the_corpus_stays_fixed``): every crash found becomes a test.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cryptoffload.errors import CryptoffloadError

from .mutate import mutated
from .targets import TARGETS, Context

CORPUS = Path(__file__).parent / "corpus"
QUICK_EXAMPLES = 25
ROUND_EXAMPLES = 300
BUDGET_S = float(os.environ.get("CRYPTOFFLOAD_FUZZ_SECONDS", "0") or 0)


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> Context:
    return Context(tmp_path_factory.mktemp("fuzz") / "private")


class Crash(AssertionError):
    pass


def _check(ctx: Context, name: str, data: bytes, last: dict[str, bytes]) -> None:
    try:
        TARGETS[name].parse(ctx, data)
    except CryptoffloadError as exc:
        assert "\n" not in str(exc).strip(), f"{name}: a user error must be one line: {exc!r}"
    except Exception as exc:  # noqa: BLE001 -- any other exception is the crash looked for
        last[name] = data
        raise Crash(f"{name} crashed on a {len(data)}-byte input: {type(exc).__name__}: {exc}"[:500]) from exc


def _save(name: str, data: bytes) -> Path:
    folder = CORPUS / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"crash-{hashlib.sha256(data).hexdigest()[:16]}.bin"
    path.write_bytes(data)
    return path


def _share_s() -> float:
    """This target's share of the budget: the whole budget over the targets, times the xdist
    workers running them side by side."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    return BUDGET_S * workers / len(TARGETS)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_a_parser_returns_or_refuses_in_one_line(ctx: Context, name: str) -> None:
    seeds = TARGETS[name].seeds(ctx)
    for seed in seeds:   # the seeds are valid inputs: each must parse
        TARGETS[name].parse(ctx, seed)
    last: dict[str, bytes] = {}
    examples = ROUND_EXAMPLES if BUDGET_S else QUICK_EXAMPLES

    @settings(max_examples=examples, deadline=None, database=None, derandomize=not BUDGET_S,
              suppress_health_check=list(HealthCheck))
    @given(data=mutated(seeds))
    def one_round(data: bytes) -> None:
        _check(ctx, name, data, last)

    end = time.monotonic() + _share_s()
    rounds = 0
    while True:
        try:
            one_round()
        except Exception:   # a Crash, or hypothesis's group of several distinct ones
            if BUDGET_S and name in last:
                print(f"saved {_save(name, last[name])}")
            raise
        rounds += 1
        if time.monotonic() >= end:
            break
    if BUDGET_S:
        print(f"{name}: {rounds * examples:,} inputs in {_share_s():.0f} s, no crash")


def _corpus() -> list[tuple[str, Path]]:
    return [(p.parent.name, p) for p in sorted(CORPUS.glob("*/*.bin"))]


@pytest.mark.parametrize("name, path", _corpus() or [pytest.param(None, None, marks=pytest.mark.skip("corpus empty"))],
                         ids=lambda v: v.name if isinstance(v, Path) else str(v))
def test_the_corpus_stays_fixed(ctx: Context, name: str, path: Path) -> None:
    """Each input that once crashed a parser: now a value or a one-line refusal."""
    assert name in TARGETS, f"{path}: no target {name!r} (rename the folder to a target of targets.TARGETS)"
    _check(ctx, name, path.read_bytes(), {})


def test_every_target_has_valid_seeds(ctx: Context) -> None:
    """A target with no seed would fuzz random bytes only, which stop at the first check."""
    assert all(TARGETS[name].seeds(ctx) for name in TARGETS)


