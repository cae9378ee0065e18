"""The figures of a ``make gpu-check`` run beside their targets, and the one screen it prints.

Targets (benchmarks/paillier_gpu.py, benchmarks/ckks_gpu.py, docs/crypto/paillier-gpu.md,
docs/crypto/ckks-gpu.md), all on one H100: Paillier n = 1024 >= 1,000,000 enc/s and >= 300,000
CRT dec/s, n = 2048 >= 100,000 enc/s, 20M ciphertexts aggregated in <= 2 s with transfers;
the HE-CNN image in <= 20 ms (goal 5 ms), >= 1,000 images/s batched, <= 500 kernel launches per
image, and the GPU's predictions equal to the twin's and SEAL's.

A figure is read from the JSON a step wrote, never computed from other figures. In the dry
run (mode ``twin``) every figure is the CPU twin's: its label says ``[twin]`` and no target is
marked met or missed. Standard library only (the GPU machine runs it before installing).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Any

AGGREGATE_TARGET_COUNT = 20_000_000
WIDTH = 100


@dataclass(frozen=True)
class Figure:
    label: str
    source: str                   # which step's JSON: paillier, ckks, batch, peer
    path: tuple[str, ...]         # "{be}": the CKKS backend of the mode (gpu, or gpu-twin)
    unit: str = ""
    scale: float = 1.0
    op: str | None = None         # ">=", "<=", "==", ">": how the target is met
    target: Any = None
    note: str = ""


def _paillier(bits: int, what: str, key: str, target: float | None) -> Figure:
    return Figure(f"Paillier n={bits} {what}", "paillier", ("sizes", str(bits), "device", key), "/s",
                  op=">=" if target else None, target=target)


FIGURES = [
    _paillier(1024, "enc/s, kernel", "encrypt_kernel_ops", 1e6),
    _paillier(1024, "enc/s, copies", "encrypt_with_copies_ops", 1e6),
    _paillier(1024, "CRT dec/s, kernel", "decrypt_kernel_ops", 3e5),
    _paillier(1024, "CRT dec/s, copies", "decrypt_with_copies_ops", 3e5),
    _paillier(2048, "enc/s, kernel", "encrypt_kernel_ops", 1e5),
    _paillier(2048, "enc/s, copies", "encrypt_with_copies_ops", 1e5),
    _paillier(2048, "CRT dec/s, kernel", "decrypt_kernel_ops", None),
    _paillier(2048, "CRT dec/s, copies", "decrypt_with_copies_ops", None),
    Figure("CKKS HE-CNN image, ms", "ckks", ("he_cnn", "{be}", "latency_s", "median"), "ms", 1e3, "<=", 20.0,
           "goal 5"),
    Figure("CKKS HE-CNN image, graph replay, ms", "ckks", ("he_cnn", "{be}", "capture", "latency_s_median"),
           "ms", 1e3),
    Figure("CKKS kernel launches per image", "ckks", ("he_cnn", "{be}", "launches_per_image"), "", 1.0, "<=", 500),
    Figure("CKKS host time per launch, us", "ckks", ("he_cnn", "{be}", "host_s_per_launch"), "us", 1e6),
    Figure("CKKS predictions equal, all backends", "ckks", ("targets", "predictions_equal_across_backends"),
           "", 1.0, "==", True),
    Figure("CKKS HE-CNN batched, images/s", "batch", ("batch", "images_per_s"), "/s", 1.0, ">=", 1000.0),
    Figure("DESILO / ours, rotate at N=2^16", "peer", ("configs", "keyswitch", "desilo_over_ours", "rotate"),
           "x", 1.0, ">", 1.0),
]


def dig(data: Any, path: tuple[str, ...]) -> Any:
    """The value at ``path``; where the walk meets a string first (a JSON's "n/a: why" or
    "failed: why" in place of a block), that string; else None."""
    for key in path:
        if isinstance(data, str):
            return data
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def met(value: Any, op: str | None, target: Any) -> bool | None:
    if op is None or value is None or isinstance(value, str):
        return None
    if op == "==":
        return value == target
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return {">=": value >= target, "<=": value <= target, ">": value > target}[op]


def _row(f: Figure, value: Any, twin: bool, why: str | None) -> dict[str, Any]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = value * f.scale
    target = None if f.op is None else f"{f.op} {_fmt(f.target, f.unit)}" + (f" ({f.note})" if f.note else "")
    return {"label": f.label + (" [twin]" if twin else ""), "source": f.source, "value": value, "unit": f.unit,
            "target": target,
            "met": None if twin else met(value, f.op, f.target), "device": "cpu-twin" if twin else "gpu",
            "why": why if value is None else None}


def _aggregate(bits: int, data: dict[str, Any], twin: bool, why: str | None) -> dict[str, Any]:
    """The aggregation's wall time, judged against the 2 s target only for 20M ciphertexts."""
    agg = dig(data.get("paillier"), ("sizes", str(bits), "aggregate")) or {}
    count = agg.get("ciphertexts")
    f = Figure(f"Paillier n={bits} aggregate {count:,} cts, s" if count else f"Paillier n={bits} aggregate, s",
               "paillier", (), "s", 1.0,
               "<=" if bits == 1024 else None, 2.0, "20M")
    row = _row(f, agg.get("device_wall_s"), twin, why)
    if row["met"] is not None and (count or 0) < AGGREGATE_TARGET_COUNT:
        row["met"] = None
        row["why"] = f"{count:,} aggregated: the target is for {AGGREGATE_TARGET_COUNT:,}"
    return row


def _why(data: dict[str, Any], steps: dict[str, dict[str, Any]], source: str) -> str:
    """Why a figure of ``source`` may be missing: its step's note or status, if it wrote nothing."""
    if data.get(source) is not None:
        return "not in the step's JSON"
    step = steps.get(source, {})
    return step.get("note") or step.get("status") or "not run"


def figures(mode: str, data: dict[str, Any], steps: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Every figure of :data:`FIGURES` (and the aggregations) from the steps' JSON ``data``."""
    twin = mode != "gpu"
    be = "gpu-twin" if twin else "gpu"
    rows = []
    for f in FIGURES:
        path = tuple(be if p == "{be}" else p for p in f.path)
        value = dig(data.get(f.source), path)
        why = _why(data, steps, f.source)
        if isinstance(value, str):       # e.g. "n/a: the backend does not count kernel launches"
            value, why = None, value
        elif isinstance(value, dict) or isinstance(value, list):
            value, why = None, "varied between images (see the JSON)"
        rows.append(_row(f, value, twin, why))
        if f.path[-1] == "decrypt_with_copies_ops":
            rows.append(_aggregate(int(f.path[1]), data, twin, _why(data, steps, "paillier")))
    return rows


def _fmt(v: Any, unit: str = "") -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "NO"
    if isinstance(v, int) or (isinstance(v, float) and abs(v) >= 1000):
        return f"{v:,.0f}"
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"
    return str(v)


def _cuda_version(v: Any) -> str:
    """CUDA's integer version (13000) as 13.0."""
    return f"{v // 1000}.{v % 1000 // 10}" if isinstance(v, int) else str(v)


def _head(s: dict[str, Any]) -> list[str]:
    f = s.get("facts", {})
    d = f.get("device") or {}
    if s["mode"] == "gpu":
        driver = str(f.get("nvidia_smi") or "").split(",")[-1].strip() or "?"
        first = (f"gpu-check on {d.get('name')} ({d.get('multiprocessors')} SMs, "
                 f"sm_{str(d.get('compute_capability', '')).replace('.', '')}), driver {driver}, "
                 f"CUDA runtime {_cuda_version(f.get('cuda_runtime'))}")
        second = (f"Python {f.get('python')}, CuPy {d.get('cupy')}, CUDA driver API "
                  f"{_cuda_version(f.get('cuda_driver'))}, native CPU core: {'yes' if f.get('native_core') else 'no'}")
    else:
        first = "gpu-check DRY RUN on the CPU twins: no GPU figure below (every [twin] figure is the CPU's)"
        second = f"no GPU: {str(f.get('reason')).split(';')[0]}"
    return [first[:WIDTH], second[:WIDTH], f"{s['wall_s']:.0f} s of a {s['budget_s']:.0f} s budget, out: {s['out']}"[:WIDTH]]


def _steps(s: dict[str, Any]) -> list[str]:
    parts, bad = [], []
    for name, r in s["steps"].items():
        extra = f" {r['seconds']:.0f}s" if "seconds" in r else ""
        c = r.get("counts")
        if c:
            extra += " (" + ", ".join(f"{n} {k}" for k, n in c.items()) + ")"
        parts.append(f"{name} {r['status'].split(' (')[0]}{extra}")
        if r["status"] not in ("ok", "skipped") and r.get("tail"):
            bad.append(f"  {name}: {r['status']}: {r['tail'][-1]}"[:WIDTH])
    lines, cur = [], "steps:"
    for p in parts:
        if len(cur) + len(p) + 3 > WIDTH:
            lines.append(cur)
            cur = "      "
        cur += (" | " if cur.strip() != "steps:" and cur.strip() else " ") + p
    return lines + [cur] + bad


def render_summary(s: dict[str, Any]) -> str:
    """The one screen printed last: header, steps, figures beside targets, files."""
    twin = s["mode"] != "gpu"
    lines = ["=" * WIDTH, *_head(s), *_steps(s), "-" * WIDTH,
             f"{'figure':<50}{'CPU twin' if twin else 'measured':>14}  {'target':<24}{'met':>6}"]
    said = set()
    for r in s["figures"]:
        value = _fmt(r["value"], r["unit"]) if r["value"] is not None else "not measured"
        mark = "twin" if twin else {True: "yes", False: "NO", None: "-"}[r["met"]]
        lines.append(f"{r['label'][:49]:<50}{value:>14}  {(r['target'] or '')[:23]:<24}{mark:>6}")
        why = r.get("why")
        if why and (r.get("source"), why) not in said:     # a step's failure is said once, at its first figure
            said.add((r.get("source"), why))
            lines.append(f"    ({why})"[:WIDTH])
    fr = s.get("files", {})
    head = (f"files in OUT ({fr.get('count')} of at most {fr.get('limit')}"
            f"{'; OVER THE LIMIT: the rest will not come back' if fr.get('over_limit') else ''}): ")
    lines += ["-" * WIDTH, *textwrap.wrap(head + " ".join(fr.get("files", [])), WIDTH, subsequent_indent="  "),
              "=" * WIDTH]
    return "\n".join(ln[:WIDTH] for ln in lines)
