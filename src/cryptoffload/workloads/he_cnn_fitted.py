"""The paper-calibrated HE CNN program: the in-storage paper's totals spread over phases whose
shares are FITTED to its Table 2 (``profiles/he_cnn_paper.toml``).

Why it is kept: it matches Table 2 by construction, so it is shown only as a secondary row
labelled *fitted*, and as the last step of the gap decomposition (what remains once our
program's inputs are set to the paper's: when the paper's program needs its data). The
prediction is ``he_cnn_eva.paper_inputs_program``.
"""

from __future__ import annotations

from cryptoffload.crypto.ckks.params import CkksParams
from cryptoffload.errors import ProfileError
from cryptoffload.workloads.he_program import HEOp, HEProgram, OpTime
from cryptoffload.workloads.he_program_builder import ProgramBuilder


PAPER_PROFILE = "he_cnn_paper"
PHASE_FIELDS = ("level", "width", "weights_share", "keys_share", "compute_share")


def paper_calibrated_program(op_time: OpTime, profile: str = PAPER_PROFILE) -> HEProgram:
    """Build the program of ``profiles/he_cnn_paper.toml``.

    The profile gives the paper's totals (weights, keys, FPGA compute) and how they are spread
    over the program's phases; each phase becomes ops at its level: ``width`` accumulator
    chains, each weight a ``mul_plain`` + ``add``, each new key first used by a
    ``rotate`` + ``add``, and further rotations (re-using the phase's keys) until the phase's share of the
    compute, costed with ``op_time`` (the FPGA model), is reached. Weights, keys and rotations
    are interleaved evenly inside a phase (a new key is first used at evenly spaced rotations), so
    data is needed at an even rate within it.
    """
    from cryptoffload.profiles import load_profile

    prof = load_profile(profile, required=("params.poly_modulus_degree", "params.data_limbs",
                                           "params.prime_bits", "totals.weights_gb", "totals.keys_gb",
                                           "totals.compute_s"))
    n = int(prof.value("params.poly_modulus_degree"))
    limbs = int(prof.value("params.data_limbs"))
    pbits = int(prof.value("params.prime_bits"))
    params = CkksParams(n, tuple([pbits] * (limbs + 1)), int(prof.get("params.scale_bits", 30) or 30))
    phases = prof.section("phases")
    if not phases:
        raise ProfileError(f"{prof.path}: field 'phases' is missing")
    names = sorted(phases, key=lambda k: phases[k].get("order", 0.0))
    for ph in names:
        for f in PHASE_FIELDS:
            if f not in phases[ph]:
                raise ProfileError(f"{prof.path}: field 'phases.{ph}.{f}' is missing")
    for f in ("weights_share", "keys_share", "compute_share"):
        total = sum(phases[ph][f] for ph in names)
        if abs(total - 1.0) > 1e-3:
            raise ProfileError(f"{prof.path}: the phases' {f} add up to {total:.4f}, not 1; "
                               "change them so that they sum to 1")
    weights = prof.value("totals.weights_gb") * 1e9
    keys = prof.value("totals.keys_gb") * 1e9
    compute = prof.value("totals.compute_s")
    n_keys_total = max(1, round(keys / params.ksk_bytes))

    b = ProgramBuilder(params)
    srcs = [b.input("input")]
    key_pool: list[str] = []
    key_pool_prev: list[str] = []
    key_no = 0
    pt_no = 0
    carried_keys = 0.0
    for ph in names:
        cfg = phases[ph]
        b.phase = ph
        level = int(cfg["level"])
        width = int(cfg["width"])
        if not 0 <= level <= params.levels or width < 1:
            raise ProfileError(f"{prof.path}: phase {ph}: level must be 0..{params.levels} and width >= 1 "
                               f"(got level {level}, width {width}); fix 'phases.{ph}.level' or 'width'")
        srcs = [b.mod_switch_to(s, level) for s in srcs]
        n_pt = round(cfg["weights_share"] * weights / params.plaintext_bytes(level))
        carried_keys += cfg["keys_share"] * n_keys_total
        n_new = int(round(carried_keys))
        carried_keys -= n_new
        new_keys = [f"galois:{key_no + i + 1}" for i in range(n_new)]
        key_no += n_new
        key_pool_prev = key_pool
        if new_keys:
            key_pool = new_keys
        budget = cfg["compute_share"] * compute
        probe = HEOp(0, "probe", "mul_plain", level, (), "", 0, 0)
        t_pt = op_time(probe, params) + op_time(_probe("add", level), params)
        t_rot = op_time(_probe("rotate", level), params) + op_time(_probe("add", level), params)
        t_end = width * op_time(_probe("rescale", level), params)
        spare = budget - n_pt * t_pt - t_end
        n_rot = max(len(new_keys), round(spare / t_rot)) if key_pool else 0
        if n_rot and not key_pool:
            raise ProfileError(f"{prof.path}: phase {ph} needs rotations but no phase before it loads keys")
        if spare < len(new_keys) * t_rot - 0.5 * t_rot:
            raise ProfileError(f"{prof.path}: phase {ph}: its compute share ({budget * 1e3:.1f} ms) is too small "
                               f"for its {n_pt} weights and {len(new_keys)} keys on this FPGA model")
        # interleave weights and rotations evenly (Bresenham); new keys on the first rotations
        accs: list[str | None] = [None] * width
        total_units = n_pt + n_rot
        done_pt = done_rot = 0
        for u in range(total_units):
            want_pt = n_pt * (u + 1) // total_units if total_units else 0
            chain = u % width
            if done_pt < want_pt:
                t = b.mul_plain(srcs[chain % len(srcs)], f"w{pt_no}")
                pt_no += 1
                done_pt += 1
                accs[chain] = t if accs[chain] is None else b.add(accs[chain], t)  # type: ignore[arg-type]
            else:
                base = accs[chain] if accs[chain] is not None else srcs[chain % len(srcs)]
                # new keys first used at evenly spaced rotations; the others re-use loaded keys
                fresh = len(new_keys) * (done_rot + 1) // n_rot
                if fresh > len(new_keys) * done_rot // n_rot:
                    key = new_keys[fresh - 1]
                else:
                    loaded = new_keys[:fresh] if fresh else []
                    pool = loaded or key_pool_prev or key_pool
                    key = pool[done_rot % len(pool)]
                r = b._emit("rotate", (base,), level=b.level[base], out_level=b.level[base], keys=(key,))
                done_rot += 1
                accs[chain] = b.add(base, r)
        outs = [a if a is not None else srcs[i % len(srcs)] for i, a in enumerate(accs)]
        srcs = [b.rescale(a) if b.level[a] > 0 else a for a in outs]
    return HEProgram("paper-calibrated CNN", "paper-calibrated", params, b.ops,
                     input_bytes={"input": params.ciphertext_bytes(params.levels)},
                     notes=[f"built from {prof.path} ({prof.kind})"])


def _probe(op: str, level: int) -> HEOp:
    return HEOp(0, "probe", op, level, (), "", 0, 0)


__all__ = ["PAPER_PROFILE", "PHASE_FIELDS", "paper_calibrated_program"]
