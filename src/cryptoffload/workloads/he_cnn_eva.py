"""The in-storage paper's CNN built from what the paper states, compiled the way EVA compiles it.

Why: the paper-calibrated program (``paper_calibrated_program``) spreads the paper's totals over
phases whose shares are *fitted* to its Table 2, so it reproduces Table 2 by construction and
predicts nothing. This module builds the program from the paper's stated inputs only, so the
simulation *predicts* Table 2 and Table 3 and the gap to the paper can be decomposed:

* **network** (section 4.2): MNIST 28x28, a convolution, a degree-2 polynomial activation
  ``a x^2 + b x + c``, a fully connected layer, the activation again, a fully connected output
  layer (Ishiyama et al., IEEE BigData 2020, which builds on CryptoNets), per-channel packing
  (one ciphertext per channel; rotations in the conv and FC layers). The paper does not list
  the layer sizes: kernel, stride and hidden width are CryptoNets' (assumed); the channel count
  is the one that makes the weights the paper's stated 3.3 GB (:func:`channels_for_weights`);
* **parameters** (section 4.2): EVA with ``input_scales = output_ranges = 30``,
  ``vec_size = 8192``; EVA's default lazy-waterline rescaler rescales by fixed 60-bit primes
  whenever a value's scale reaches ``60 + 30`` bits before a multiplication or an output, and
  its parameter selector adds the output's primes and a special prime as large as the largest
  (microsoft/EVA ``lazy_waterline_rescaler.h``, ``encryption_parameter_selector.h``);
  :func:`eva_coeff_modulus` replays those rules on this network: six data primes and a special
  prime of 60 bits (420 bits, within the 438 of N = 2^14 at 128-bit security);
* **data** (SEAL 3.6 layout): EVA encodes every constant at the level and scale of its use, so
  each weight (scalar or vector) is one full plaintext of ``N * limbs * 8`` bytes; each rotation
  step the program uses has its own Galois key, plus the relinearisation key, each
  ``L * 2 * (L + 1) * N * 8`` bytes for ``L`` data primes.

The op times are the FPGA model's (``sim/isc/fpga_cost.py``), so nothing here is fitted to a latency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from cryptoffload.crypto.ckks.params import MAX_PRIME_BITS, SEAL_SECURITY_BITS, CkksParams
from cryptoffload.errors import ConfigError, ProfileError
from cryptoffload.workloads.he_program import HEProgram
from cryptoffload.workloads.he_program_builder import ProgramBuilder

PAPER_INPUTS_PROFILE = "he_cnn_paper_inputs"
EVA_FIXED_RESCALE = 60  # microsoft/EVA lazy_waterline_rescaler.h: fixedRescale


@dataclass(frozen=True)
class CnnShape:
    """Layer sizes of the MNIST CNN: conv ``channels`` x ``kernel``^2 with ``stride``, FC to
    ``hidden`` neurons, FC to ``classes``."""

    channels: int = 5
    kernel: int = 5
    stride: int = 2
    image: int = 28
    hidden: int = 100
    classes: int = 10

    def __post_init__(self) -> None:
        for what in ("channels", "kernel", "stride", "image", "hidden", "classes"):
            v = getattr(self, what)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ConfigError(f"{what} must be a positive integer, got {v!r}")


class EvaBuilder(ProgramBuilder):
    """A :class:`ProgramBuilder` that also tracks each value's scale (bits) and rescales the way
    EVA's default lazy-waterline rescaler does: a product's scale is the sum of its operands';
    a value whose scale is ``>= fixed + waterline`` is rescaled by ``fixed`` bits (repeatedly)
    just before it feeds a multiplication or an output, never otherwise; constants are encoded
    at the waterline (the input scale); an addition of unequal scales first scales the lower
    operand up by a multiplication with a constant (no level)."""

    def __init__(self, params: CkksParams, waterline: int, fixed: int = EVA_FIXED_RESCALE) -> None:
        super().__init__(params)
        self.waterline, self.fixed = waterline, fixed
        self.scale: dict[str, int] = {}
        self._settled: dict[str, str] = {}
        self._ones = 0

    def input(self, name: str, level: int | None = None) -> str:
        self.scale[name] = self.waterline
        return super().input(name, level)

    def settle(self, a: str) -> str:
        """``a`` rescaled below the waterline (once per value: every later use reads the rescaled one)."""
        if a in self._settled:
            return self._settled[a]
        orig = a
        while self.scale[a] >= self.fixed + self.waterline:
            s = self.scale[a] - self.fixed
            a = super().rescale(a)
            self.scale[a] = s
        self._settled[orig] = a
        return a

    def _scaled(self, out: str, scale: int) -> str:
        self.scale[out] = scale
        return out

    def mul_plain(self, a: str, pt: str) -> str:
        a = self.settle(a)
        return self._scaled(super().mul_plain(a, pt), self.scale[a] + self.waterline)

    def mul(self, a: str, b: str) -> str:
        a = self.settle(a)
        b = a if b == a else self.settle(b)
        return self._scaled(super().mul(a, b), self.scale[a] + self.scale[b])

    def add(self, a: str, b: str) -> str:
        sa, sb = self.scale[a], self.scale[b]
        if sa != sb:
            lo = a if sa < sb else b
            self._ones += 1
            up = self._scaled(super().mul_plain(lo, f"one[{self._ones}]"), max(sa, sb))
            a, b = (up, b) if lo == a else (a, up)
        return self._scaled(super().add(a, b), max(sa, sb))

    def add_plain(self, a: str, pt: str) -> str:
        return self._scaled(super().add_plain(a, pt), self.scale[a])

    def relinearize(self, a: str) -> str:
        return self._scaled(super().relinearize(a), self.scale[a])

    def rotate(self, a: str, step: int) -> str:
        return self._scaled(super().rotate(a, step), self.scale[a])

    def mod_switch_to(self, a: str, level: int) -> str:
        s = self.scale[a]
        return self._scaled(super().mod_switch_to(a, level), s)

    def output(self, a: str) -> str:
        return self.settle(a)


def _build(b: EvaBuilder, shape: CnnShape) -> str:
    """The network on builder ``b``; returns the output value."""
    x = b.input("image")
    k, img = shape.kernel, shape.image
    b.phase = "conv"
    offsets = [dy * img + dx for dy in range(k) for dx in range(k)]
    shifted = {0: x} | {o: b.rotate(x, o) for o in offsets[1:]}
    conv = []
    for c in range(shape.channels):
        acc = None
        for j, o in enumerate(offsets):
            t = b.mul_plain(shifted[o], f"w_conv[{c},{j}]")
            acc = t if acc is None else b.add(acc, t)
        assert acc is not None, "kernel >= 1: at least one offset"
        conv.append(b.add_plain(acc, f"b_conv[{c}]"))

    def activation(v: str, tag: str) -> str:
        ax2 = b.mul_plain(b.relinearize(b.mul(v, v)), f"act_a[{tag}]")
        bx = b.mul_plain(v, f"act_b[{tag}]")
        return b.add_plain(b.add(ax2, bx), f"act_c[{tag}]")

    b.phase = "act1"
    act = [activation(v, f"1,{c}") for c, v in enumerate(conv)]
    b.phase = "fc1"
    steps = [1 << s for s in range(max(1, math.ceil(math.log2(img * img))))]
    packed = None
    for j in range(shape.hidden):
        acc = None
        for c in range(shape.channels):
            t = b.mul_plain(act[c], f"w_fc1[{j},{c}]")
            acc = t if acc is None else b.add(acc, t)
        assert acc is not None, "channels >= 1"
        for s in steps:
            acc = b.add(acc, b.rotate(acc, s))
        one = b.mul_plain(acc, f"mask_fc1[{j}]")
        packed = one if packed is None else b.add(packed, one)
    assert packed is not None, "hidden >= 1"
    packed = b.add_plain(packed, "b_fc1")
    b.phase = "act2"
    h = activation(packed, "2")
    b.phase = "fc2"
    steps2 = [1 << s for s in range(max(1, math.ceil(math.log2(shape.hidden))))]
    out = None
    for cls in range(shape.classes):
        acc = b.mul_plain(h, f"w_fc2[{cls}]")
        for s in steps2:
            acc = b.add(acc, b.rotate(acc, s))
        one = b.mul_plain(acc, f"mask_fc2[{cls}]")
        out = one if out is None else b.add(out, one)
    assert out is not None, "classes >= 1"
    return b.output(b.add_plain(out, "b_fc2"))


def eva_coeff_modulus(input_scale: int = 30, output_range: int = 30, fixed: int = EVA_FIXED_RESCALE) -> tuple[int, ...]:
    """The coefficient modulus EVA selects for this network (data primes, then the special prime):
    the network is run through :class:`EvaBuilder` on a roomy probe ring to count the rescales on
    its longest path and the output's scale; EVA's selector then puts the output's prime first
    (scale + range bits, at least the largest rescale prime), one ``fixed`` prime per rescale,
    and a special prime as large as the largest prime."""
    probe = EvaBuilder(CkksParams(16384, (fixed,) * 16, input_scale), input_scale, fixed)
    out = _build(probe, CnnShape(channels=1, kernel=2, image=4, hidden=2, classes=2))
    rescales = probe.p.levels - probe.level[out]
    size = probe.scale[out] + output_range
    top = fixed if rescales else 0
    if size > MAX_PRIME_BITS:  # EVA: 60-bit primes while 60 bits remain, then the rest (>= 20)
        top, head = MAX_PRIME_BITS, []
        while size >= MAX_PRIME_BITS:
            head.append(MAX_PRIME_BITS)
            size -= MAX_PRIME_BITS
        if size > 0:
            head.append(max(20, size))
    else:
        top = max(top, size)
        head = [top]
    return tuple(head) + (fixed,) * rescales + (top,)


def eva_params(vec_size: int = 8192, input_scale: int = 30, output_range: int = 30) -> CkksParams:
    """EVA's parameters for this network: ``N = 2 * vec_size`` raised until the modulus fits the
    128-bit security bound (EVA's selector), primes from :func:`eva_coeff_modulus`."""
    bits = eva_coeff_modulus(input_scale, output_range)
    n = 2 * vec_size
    while SEAL_SECURITY_BITS.get(n, 0) < sum(bits):   # EVA runs on SEAL: SEAL's table, to 32768
        n *= 2
        if n > max(SEAL_SECURITY_BITS):
            raise ConfigError(f"no ring dimension gives 128-bit security for {sum(bits)} bits of modulus")
    return CkksParams(n, bits, input_scale)


def eva_cnn(params: CkksParams, shape: CnnShape = CnnShape()) -> HEProgram:
    """The CNN as EVA schedules it (:class:`EvaBuilder`) under ``params``: rescales where the
    lazy waterline puts them, relinearisation right after each square, every constant (weights,
    biases, activation coefficients, masks) its own plaintext at its level."""
    if shape.image ** 2 > params.slots or shape.hidden > params.slots:
        raise ConfigError(f"a {shape.image}x{shape.image} image or {shape.hidden} neurons do not fit in {params.slots} slots")
    b = EvaBuilder(params, params.scale_bits)
    _build(b, shape)
    name = f"eva-cnn-c{shape.channels}-k{shape.kernel}-h{shape.hidden}"
    return HEProgram(name, "paper-inputs", params, b.ops, input_bytes={"image": params.ciphertext_bytes(params.levels)},
                     notes=[f"built from the paper's stated inputs: EVA parameters {list(params.coeff_mod_bits)}, "
                            f"{shape.channels} channels of {shape.kernel}x{shape.kernel} (stride {shape.stride}), "
                            f"{shape.hidden} hidden, {shape.classes} classes"])


def channels_for_weights(weight_bytes: float, params: CkksParams, shape: CnnShape = CnnShape()) -> int:
    """The channel count whose program reads ``weight_bytes`` of weight plaintexts (nearest):
    the weight bytes are affine in the channel count (per channel: conv kernel, bias,
    activation constants, one FC-1 weight per hidden neuron), so two small builds fix them."""
    w1 = eva_cnn(params, replace(shape, channels=1)).weight_bytes
    w2 = eva_cnn(params, replace(shape, channels=2)).weight_bytes
    per, fixed = w2 - w1, 2 * w1 - w2
    if per <= 0:
        raise ConfigError("the weight bytes do not grow with the channel count")
    return max(1, round((weight_bytes - fixed) / per))


@dataclass(frozen=True)
class PaperInputs:
    """The paper's stated inputs, read from ``profiles/he_cnn_paper_inputs.toml``."""

    params: CkksParams
    shape: CnnShape
    weights_gb: float
    keys_gb: float
    touched_gb: float
    profile: str


def load_paper_inputs(profile: str = PAPER_INPUTS_PROFILE) -> PaperInputs:
    from cryptoffload.profiles import load_profile

    fields = ("eva.vec_size", "eva.input_scale", "eva.output_range", "network.kernel", "network.stride",
              "network.image", "network.hidden", "network.classes", "totals.weights_gb", "totals.keys_gb",
              "totals.touched_gb")
    prof = load_profile(profile, required=fields)
    v = prof.value
    params = eva_params(int(v("eva.vec_size")), int(v("eva.input_scale")), int(v("eva.output_range")))
    shape = CnnShape(1, int(v("network.kernel")), int(v("network.stride")), int(v("network.image")),
                     int(v("network.hidden")), int(v("network.classes")))
    channels = prof.get("network.channels")
    if channels is None:
        channels = channels_for_weights(v("totals.weights_gb") * 1e9, params, shape)
    elif channels < 1:
        raise ProfileError(f"{prof.path}: field 'network.channels' must be a positive integer")
    return PaperInputs(params, replace(shape, channels=int(channels)), v("totals.weights_gb"), v("totals.keys_gb"),
                       v("totals.touched_gb"), prof.path)


def paper_inputs_program(profile: str = PAPER_INPUTS_PROFILE) -> HEProgram:
    """The CNN of the paper's stated inputs (channels from its 3.3 GB unless the profile fixes them)."""
    inp = load_paper_inputs(profile)
    prog = eva_cnn(inp.params, inp.shape)
    prog.notes.append(f"channels {inp.shape.channels}: the count whose weights are the paper's "
                      f"{inp.weights_gb:g} GB ({inp.profile})")
    return prog


__all__ = ["CnnShape", "EVA_FIXED_RESCALE", "PAPER_INPUTS_PROFILE", "PaperInputs", "channels_for_weights",
           "eva_cnn", "eva_coeff_modulus", "eva_params", "load_paper_inputs", "paper_inputs_program"]
