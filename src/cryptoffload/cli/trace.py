"""``cryptoffload trace``: generate or inspect request traces."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from cryptoffload.checks import RATE_PER_S, REQUESTS, SEED
from cryptoffload.cli.root import console, json_option, number_option, print_json
from cryptoffload.io import check_output_file

app = typer.Typer(no_args_is_help=True, help="Generate or inspect request traces.")


@app.command("generate")
def trace_generate(
    out: Path = typer.Option(..., "--out", help="CSV file to write."),
    # an empty trace file is one `trace inspect` and the studies refuse; 10^8 requests are
    # 160 times the paper's log and several GB in memory
    requests: int = number_option(610_000, "--requests", bound=REQUESTS, help="Requests of the trace."),
    rate: Optional[float] = number_option(None, "--rate", bound=RATE_PER_S,
                                          help="Rescale to this mean rate (req/s); default: log time."),
    seed: int = number_option(1, "--seed", bound=SEED, help="Seed of the generator."),
) -> None:
    """Generate a web request trace from the inverse CDFs of the FPGA reconfiguration paper, as CSV."""
    from cryptoffload.crypto.ciphers import CIPHERS
    from cryptoffload.workloads.trace_log import save_trace_csv
    from cryptoffload.workloads.web_trace import generate_trace

    check_output_file(out)
    tr = generate_trace(requests, seed=seed)
    if rate is not None:
        tr = tr.rescaled(rate)
    save_trace_csv(tr, out, cipher_names=CIPHERS)
    console.print(f"wrote {out}: {len(tr):,} requests over {tr.span:,.1f} s ({tr.offered_rate:,.2f} req/s)",
                  markup=False)


@app.command("inspect")
def trace_inspect(
    path: Path,
    as_json: bool = json_option("requests, span, rate, clients, mean size, cipher mix, bad lines"),
) -> None:
    """Read a log (CSV or Common Log Format) and report what it holds, bad lines included."""
    import numpy as np

    from rich.markup import escape

    from cryptoffload.crypto.ciphers import DISPLAY_NAMES, CIPHERS
    from cryptoffload.workloads.trace_log import load_trace

    tr = load_trace(path, cipher_names=CIPHERS)
    if as_json:
        print_json({"path": str(path), "requests": len(tr), "span_s": float(tr.span),
                    "offered_rate_per_s": float(tr.offered_rate), "clients": int(len(np.unique(tr.client))),
                    "mean_size_bytes": float(tr.size.mean()),
                    "cipher_mix": {DISPLAY_NAMES[c]: float(m) for c, m in zip(CIPHERS, tr.cipher_mix("count"))},
                    "bad_lines": int(tr.bad_lines), "bad_examples": list(tr.bad_examples)})
        return
    console.print(f"{path}: {len(tr):,} requests, {tr.span:,.1f} s, {tr.offered_rate:,.2f} req/s, "
                  f"{len(np.unique(tr.client)):,} clients, mean size {tr.size.mean():,.0f} B", markup=False)
    mix = tr.cipher_mix("count")
    console.print("cipher mix: " + ", ".join(f"{DISPLAY_NAMES[c]} {m:.3f}" for c, m in zip(CIPHERS, mix)))
    if tr.bad_lines:
        # the examples are the file's own text: escaped, so a "[/x]" in it is shown, not read as markup
        console.print(f"[yellow]{tr.bad_lines} bad line(s)[/yellow], e.g.: " + escape("; ".join(tr.bad_examples)))
