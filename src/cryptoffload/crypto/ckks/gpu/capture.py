"""One whole homomorphic program captured once and replayed for every new input: a CUDA graph on
the GPU, the recorded launches on the twin.

Why it is sound: homomorphic evaluation is data-oblivious -- which ops run, on which levels, with
which keys and which launch shapes, is fixed by the program and the inputs' levels and scales,
never by the encrypted values (the argument the in-storage HE-CNN paper builds on). So the
launches of one run are the launches of every run on inputs of the same shape, and replaying them
with new input residues in the same buffers computes the new result. On the GPU that removes the
host from the loop: one graph launch instead of a few hundred kernel launches per image.

How: :func:`capture` runs the program once untimed (every cache of the backend -- device tables,
conversion plans, kernels, a plan's lazily encoded biases -- is filled, so the captured run copies
nothing from the host), copies the example inputs into buffers of its own, then runs the program
on those buffers while recording: on CuPy inside ``Stream.begin_capture`` / ``end_capture`` with a
memory pool of its own (the graph writes into its intermediate buffers at every replay, so no
other allocation may ever be handed that memory), on the twin through the launcher's recording
(which keeps every array a launch reaches alive). :class:`Captured` then copies each new input into
its buffer, replays, and returns a copy of the outputs.

The twin's replay is what makes this testable without a GPU: if any device work of the program
escaped the launch code (a copy made by the host, a value decided from the data), the replayed
result would differ from a direct run, and the tests compare them bit for bit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence, TypeAlias

from cryptoffload import cuda
from cryptoffload.crypto.ckks.backend import Ciphertext
from cryptoffload.crypto.ckks.errors import CkksError
from cryptoffload.crypto.ckks.gpu.scheme import RawCt

if TYPE_CHECKING:
    from cryptoffload.crypto.ckks.gpu.backend import RnsCkksBackend
    from cryptoffload.crypto.ckks.gpu.launch import Launcher, Recording

#: What a captured program returns: a ciphertext, or lists and tuples of them (nested).
CtTree: TypeAlias = "Ciphertext | list[CtTree] | tuple[CtTree, ...]"
#: The same shape over the raw ciphertexts the capture holds.
RawTree: TypeAlias = "RawCt | list[RawTree] | tuple[RawTree, ...]"


class Captured:
    """A captured program (see the module docstring): call it with ciphertexts shaped like the
    example inputs (same level, scale and size); returns what the program returned, as new
    ciphertexts."""

    def __init__(self, backend: RnsCkksBackend, launcher: Launcher, inputs: list[RawCt], outputs: RawTree,
                 replay: Callable[[], None], keep: Sequence[object], launches: int) -> None:
        self.backend = backend
        self.launcher = launcher   # the backend's launch code the program was captured through
        self.inputs = inputs
        self.outputs = outputs
        self._replay = replay
        self._keep = list(keep)
        #: kernel launches one replay stands for (what one direct run issues)
        self.launches = launches

    def __call__(self, *cts: Ciphertext) -> CtTree:
        be = self.backend
        if len(cts) != len(self.inputs):
            raise CkksError(f"captured program: {len(cts)} inputs, it was captured with {len(self.inputs)}")
        for i, (ct, buf) in enumerate(zip(cts, self.inputs)):
            raw = be._own(ct, Ciphertext, "captured program")
            if (raw.level, raw.size) != (buf.level, buf.size) or raw.scale != buf.scale:
                raise CkksError(f"captured program: input {i} is {raw!r}, it was captured for {buf!r}; capture "
                                "again for inputs of another level, scale or size")
            self.launcher.copy(buf.data, raw.data)
        self._replay()
        return _map(self.outputs, lambda r: be._ct(RawCt(be.scheme.ar.copy(r.data), r.level, r.scale)))


def _map(outputs: RawTree, fn: Callable[[RawCt], Ciphertext]) -> CtTree:
    if isinstance(outputs, list):
        return [_map(o, fn) for o in outputs]
    if isinstance(outputs, tuple):
        return tuple(_map(o, fn) for o in outputs)
    return fn(outputs)


def _raws(out: object) -> RawTree:
    """The raw ciphertexts of what a program returned (checked: ciphertexts in lists and tuples)."""
    if isinstance(out, list):
        return [_raws(o) for o in out]
    if isinstance(out, tuple):
        return tuple(_raws(o) for o in out)
    if not isinstance(out, Ciphertext):
        raise CkksError(f"captured program: returns a {type(out).__name__}; it must return ciphertexts")
    return out.raw


def capture(backend: RnsCkksBackend, fn: Callable[..., object], examples: Sequence[Ciphertext]) -> Captured:
    """Capture ``fn(*examples)`` on ``backend`` (a :class:`~.backend.RnsCkksBackend` with a
    CUDA kernel set); see the module docstring."""
    ar = backend.scheme.ar
    launcher = ar.launcher
    if launcher is None:
        raise CkksError(f"capture: the {ar.kernels!r} kernel set does not go through the launch code; "
                        "use kernels='cuda-host' (the twin's default) or the gpu backend")
    fn(*examples)                                               # warm-up: fills every cache
    inputs = [RawCt(ar.copy(backend._own(c, Ciphertext, "capture").data), c.raw.level, c.raw.scale)
              for c in examples]
    wrapped = [backend._ct(r) for r in inputs]
    before = launcher.count
    if ar.xp.__name__.split(".")[0] == "cupy":
        outputs, replay, rec = _capture_graph(backend, launcher, fn, wrapped)
    else:
        launcher.start_recording()
        try:
            outputs = _raws(fn(*wrapped))
        finally:
            rec = launcher.stop_recording()
        replay = rec.replay
    return Captured(backend, launcher, inputs, outputs, replay, [rec, wrapped], launcher.count - before)


def _capture_graph(backend: RnsCkksBackend, launcher: Launcher, fn: Callable[..., object],
                   wrapped: list[Ciphertext]) -> tuple[RawTree, Callable[[], None], Recording]:
    """The CUDA graph of ``fn(*wrapped)`` (GPU only: needs CuPy)."""
    cp = cuda.cupy()
    pool = cp.cuda.MemoryPool()
    stream = cp.cuda.Stream(non_blocking=True)
    backend.synchronize()
    launcher.start_recording()
    try:
        with cp.cuda.using_allocator(pool.malloc), stream:
            stream.begin_capture()
            try:
                outputs = _raws(fn(*wrapped))
            finally:
                graph = stream.end_capture()
    finally:
        rec = launcher.stop_recording()
    rec.keep.extend([pool, stream, graph])

    def replay() -> None:
        current = cp.cuda.get_current_stream()
        stream.wait_event(current.record())      # the inputs' copies are on the current stream
        graph.launch(stream=stream)
        current.wait_event(stream.record())      # what reads the outputs waits for the replay

    return outputs, replay, rec


__all__ = ["Captured", "capture"]
