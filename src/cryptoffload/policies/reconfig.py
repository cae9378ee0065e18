"""Reconfiguration policies for an FPGA with cipher slots (Niwa, Maeda and Yamaguchi, IPSJ TACS
2005), one interface for the simulators and the real runtime.

A policy answers, for each request when it may start: encrypt in software or on the FPGA, and
whether to start a reconfiguration (to which circuits). :meth:`ReconfigPolicy.decide` is the
readable rule that the SimPy model and a real proxy call; :meth:`ReconfigPolicy.kernel_args` hands
the same rule to the compiled fast path. Tests hold the two to identical results.

Policies of the paper: Software, Hardware, Nopredict, Predict, Fix5, Fix-All, Oracle. Beyond it
(its section 7.2): Predict-online, Predict-3gram, Parallel (software and FPGA encrypt at once).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence, TypedDict

import numpy as np

from cryptoffload.errors import ConfigError
from cryptoffload.policies import ngram
from cryptoffload.sim.reconfig import fast
from cryptoffload.sim.reconfig.platform import ReconfigPlatform
from cryptoffload.sim.reconfig.server import Decision, FpgaView
from cryptoffload.workloads.request_trace import Trace

__all__ = ["FpgaView", "Decision", "KernelArgs", "PolicyContext", "ReconfigPolicy", "POLICIES", "PAPER_POLICIES",
           "BEYOND_POLICIES", "INTERVAL_POLICIES", "make_policy", "prepare_policies", "run_policy", "same_pair"]


def same_pair(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return (a[0] == b[0] and a[1] == b[1]) or (a[0] == b[1] and a[1] == b[0])


@dataclass
class PolicyContext:
    """Everything a policy may learn from before the run: the history trace (for n-gram
    tables), the trace to be served (only the oracle may read its future), the FPGA cost table."""

    history_cipher: np.ndarray
    history_size: np.ndarray
    cipher: np.ndarray
    size: np.ndarray
    slices_pct: np.ndarray
    seed: int
    k: int
    states: ngram.IntervalStates | None = None
    window: float = ngram.WINDOW_BYTES


class KernelArgs(TypedDict):
    """A prepared policy as the compiled fast path takes it (:func:`cryptoffload.sim.reconfig.fast.run_kernel`'s
    keywords): the same rule as :meth:`ReconfigPolicy.decide`, as arrays."""

    mode: int
    pred_a: np.ndarray | None
    pred_b: np.ndarray | None
    fixed: np.ndarray | None
    initial: tuple[int, int]


class ReconfigPolicy:
    """Base class; subclasses set ``name``, ``label``, ``mode`` and prepare predictions.

    It is what the SimPy server model asks of a policy
    (:class:`~cryptoffload.sim.reconfig.server.ServerPolicy`: ``mode``, ``initial``, ``fixed``,
    ``decide``), and, through :meth:`kernel_args`, what the fast path asks."""

    name = "base"
    label = "Base"
    paper = True
    mode = fast.OVERLAP
    description = ""
    fixed_window: float | None = None  # an interval of its own, not the one the study tunes

    def __init__(self) -> None:
        self.pred_a: np.ndarray | None = None
        self.pred_b: np.ndarray | None = None
        self.fixed: np.ndarray | None = None
        self.initial: tuple[int, int] = (0, 1)
        self.prediction_sources: np.ndarray | None = None

    def prepare(self, ctx: PolicyContext) -> None:
        """Compute whatever the decision rule needs (predictions are trace-only, see ngram)."""
        self.initial = ngram.ZerothOrder(ctx.history_cipher, ctx.k).pair
        model = self.predictor(ctx)
        if model is not None:
            self._set_prediction(model.predict(ctx.cipher, ctx.size, ctx.states))

    def predictor(self, ctx: PolicyContext) -> ngram.Predictor | None:
        """The prediction model of an overlap policy (None: the policy predicts nothing)."""
        return None

    def _set_prediction(self, pred: ngram.Prediction) -> None:
        self.pred_a, self.pred_b, self.prediction_sources = pred.pred_a, pred.pred_b, pred.source

    def predicted(self, i: int) -> tuple[int, int]:
        assert self.pred_a is not None and self.pred_b is not None, "prepare() first"
        return int(self.pred_a[i]), int(self.pred_b[i])

    # ---- the decision rule (the paper's Fig. 6 for the overlap policies) -------------------
    def decide(self, i: int, cipher: int, view: FpgaView,
               cost: Callable[[str], float] | None = None) -> Decision:
        if view.now < view.reconfig_until:
            return Decision("software")
        if cipher in view.loaded:
            return Decision("fpga")
        want = self.predicted(i)
        if same_pair(want, view.loaded):
            return Decision("software")
        return Decision("software", reconfigure_to=want)

    def kernel_args(self) -> KernelArgs:
        return {"mode": self.mode, "pred_a": self.pred_a, "pred_b": self.pred_b,
                "fixed": self.fixed, "initial": self.initial}


class Software(ReconfigPolicy):
    name, label, mode = "software", "Software", fast.SOFTWARE
    description = "no FPGA: every request encrypted by the host"

    def decide(self, i: int, cipher: int, view: FpgaView,
               cost: Callable[[str], float] | None = None) -> Decision:
        return Decision("software")


class Hardware(ReconfigPolicy):
    name, label, mode = "hardware", "Hardware", fast.HARDWARE
    description = "always the FPGA; reconfigure on every miss and wait for it (no overlap, no prediction)"

    def decide(self, i: int, cipher: int, view: FpgaView,
               cost: Callable[[str], float] | None = None) -> Decision:
        if cipher in view.loaded:
            return Decision("fpga")
        return Decision("fpga", reconfigure_to=(cipher, -1), blocking=True)  # -1: keep the MRU circuit


class Nopredict(ReconfigPolicy):
    name, label = "nopredict", "Nopredict"
    description = "overlap: software while reconfiguring to two random circuits"

    def predictor(self, ctx: PolicyContext) -> ngram.Predictor:
        return ngram.RandomPair(ctx.history_cipher, ctx.k, ctx.seed)


class Predict(ReconfigPolicy):
    name, label = "predict", "Predict"
    description = "overlap + the paper's static 2-gram over 5 MB intervals (0th-order fallback)"

    def predictor(self, ctx: PolicyContext) -> ngram.Predictor:
        return ngram.TwoGram(ctx.history_cipher, ctx.history_size, ctx.k, ctx.window)


class PredictPaperInterval(Predict):
    name, label = "predict-5mb", "Predict (5 MB)"
    description = "Predict with the paper's fixed 5 MB interval, whatever interval the others use"
    fixed_window = 5 * 1024 * 1024


class Oracle(ReconfigPolicy):
    name, label = "oracle", "Oracle"
    description = "overlap + perfect knowledge of the next interval's two main ciphers"

    def predictor(self, ctx: PolicyContext) -> ngram.Predictor:
        return ngram.OracleNext(ctx.history_cipher, ctx.k, ctx.window)


class Fixed(ReconfigPolicy):
    """Circuits fixed on the FPGA for the whole run; other ciphers in software."""

    mode = fast.FIXED

    def __init__(self, count: int | None) -> None:
        super().__init__()
        self.count = count

    def prepare(self, ctx: PolicyContext) -> None:
        super().prepare(ctx)
        fixed = np.zeros(ctx.k, dtype=bool)
        if self.count is None:
            fixed[:] = True
        else:
            fixed[np.argsort(ctx.slices_pct, kind="stable")[: self.count]] = True
        self.fixed = fixed

    def decide(self, i: int, cipher: int, view: FpgaView,
               cost: Callable[[str], float] | None = None) -> Decision:
        assert self.fixed is not None
        return Decision("fpga" if self.fixed[cipher] else "software")


class Fix5(Fixed):
    name, label = "fix5", "Fix5"
    description = "the five smallest circuits resident, the rest in software"

    def __init__(self) -> None:
        super().__init__(5)


class FixAll(Fixed):
    name, label = "fix-all", "Fix-All"
    description = "every circuit resident (an unrealistically large FPGA)"

    def __init__(self) -> None:
        super().__init__(None)


class PredictOnline(ReconfigPolicy):
    name, label, paper = "predict-online", "Predict-online", False
    description = "overlap + 2-gram warm-started from history, updated as intervals complete, decayed"

    def __init__(self, decay: float = 0.9999) -> None:
        super().__init__()
        self.decay = decay

    def predictor(self, ctx: PolicyContext) -> ngram.Predictor:
        return ngram.OnlineTwoGram(ctx.history_cipher, ctx.history_size, ctx.k, self.decay, ctx.window)


class Predict3Gram(ReconfigPolicy):
    name, label, paper = "predict-3gram", "Predict-3gram", False
    description = "overlap + 3-gram (two previous intervals), backing off to 2-gram and 0th order"

    def predictor(self, ctx: PolicyContext) -> ngram.Predictor:
        return ngram.ThreeGram(ctx.history_cipher, ctx.history_size, ctx.k, ctx.window)


class Parallel(Predict):
    name, label, paper, mode = "parallel", "Parallel", False, fast.PARALLEL
    description = ("software and FPGA encrypt at the same time; each request goes where it finishes "
                   "first; reconfiguration (2-gram prediction) only while the FPGA is idle")

    def decide(self, i: int, cipher: int, view: FpgaView,
               cost: Callable[[str], float] | None = None) -> Decision:
        if cost is None:
            raise ConfigError("the parallel policy needs service-time estimates")
        loaded = view.loaded
        reconf = None
        until = view.reconfig_until
        if cipher not in loaded and view.fpga_free <= view.now and view.reconfig_until <= view.now:
            want = self.predicted(i)
            if not same_pair(want, loaded):
                reconf, loaded = want, want
                until = view.now + cost("reconfig")
        sw_fin = max(view.now, view.sw_free) + cost("software")
        hw_fin = max(view.now, view.fpga_free, until) + cost("fpga") if cipher in loaded else float("inf")
        return Decision("fpga" if hw_fin <= sw_fin else "software", reconfigure_to=reconf)


POLICIES: dict[str, Callable[[], ReconfigPolicy]] = {
    cls.name: cls
    for cls in (Software, Hardware, Nopredict, Predict, PredictPaperInterval, Fix5, FixAll, Oracle,
                PredictOnline, Predict3Gram, Parallel)
}
PAPER_POLICIES = ("software", "hardware", "nopredict", "predict", "predict-5mb", "fix5", "fix-all", "oracle")
BEYOND_POLICIES = ("predict-online", "predict-3gram", "parallel")
INTERVAL_POLICIES = ("predict", "oracle", "predict-online", "predict-3gram", "parallel")
"""Policies whose predictions depend on the prediction interval the study chooses."""


def make_policy(name: str) -> ReconfigPolicy:
    try:
        return POLICIES[name.lower()]()
    except KeyError:
        raise ConfigError(f"unknown policy '{name}' (known: {', '.join(POLICIES)})") from None


def prepare_policies(names: Sequence[str], trace: Trace, history: Trace, platform: ReconfigPlatform, seed: int,
                     window: float, decay: float = 0.9999) -> dict[str, ReconfigPolicy]:
    """The named policies, prepared on ``history`` for ``trace`` with prediction interval
    ``window`` bytes (a policy with a ``fixed_window`` uses its own).

    Predictions depend on the request sequence only, never on timing, so one preparation serves
    every rate at which the trace is replayed.
    """
    cipher = np.asarray(trace.cipher, dtype=np.int64)
    size = np.asarray(trace.size, dtype=np.int64)
    hc = np.asarray(history.cipher, dtype=np.int64)
    hs = np.asarray(history.size, dtype=np.int64)
    states: dict[float, ngram.IntervalStates] = {}
    out: dict[str, ReconfigPolicy] = {}
    for name in names:
        pol = make_policy(name)
        w = float(pol.fixed_window or window)
        if w not in states:
            states[w] = ngram.interval_states(cipher, size, platform.k, w)
        if isinstance(pol, PredictOnline):
            pol.decay = decay
        pol.prepare(PolicyContext(hc, hs, cipher, size, platform.slices_pct, seed, platform.k, states[w], w))
        out[name] = pol
    return out


def run_policy(policy: ReconfigPolicy, time: np.ndarray, trace: Trace, platform: ReconfigPlatform) -> fast.KernelResult:
    """One prepared policy over ``trace`` arriving at ``time``, on the compiled fast path."""
    return fast.run_kernel(time, np.asarray(trace.cipher, dtype=np.int64), np.asarray(trace.size, dtype=np.float64),
                           platform.sw_seconds_per_byte, platform.fpga_seconds_per_byte, platform.packet_overhead,
                           platform.reconfig_time, **policy.kernel_args())
