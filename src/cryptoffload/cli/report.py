"""``cryptoffload report``: run every study (quick mode by default) and write the HTML report."""

from __future__ import annotations

from pathlib import Path

import typer

from cryptoffload.cli.root import console, err_console, progress_bar
from cryptoffload.errors import CryptoffloadError


def report(
    out: Path = typer.Option(Path("report"), "--out", help="Report folder (index.html + one folder per study)."),
    full: bool = typer.Option(False, "--full", help="Full mode instead of quick mode."),
    seed: int = typer.Option(1, "--seed"),
    calibrate: bool = typer.Option(True, "--calibrate/--no-calibrate",
                                   help="Measure this machine's cipher throughput for the 'this machine' tables."),
) -> None:
    """Run every available study (quick mode by default) and write OUT/index.html."""
    from cryptoffload.machine import machine_info
    from cryptoffload.report.html import write_index
    from cryptoffload.report.tables import render_result
    from cryptoffload.studies import STUDIES
    from cryptoffload.studies import bsgs_multidevice as bm
    from cryptoffload.studies import fpga_reconfig as st
    from cryptoffload.studies import isc_he_cnn as isc
    from cryptoffload.studies import paillier_offload as po
    from cryptoffload.studies import ridge as rg
    from cryptoffload.studies import tls_offload as tl

    results, failures = [], []
    sw_profile = None
    if calibrate:
        from cryptoffload.sim.calibrate import calibrate_ciphers

        sw_profile = str(calibrate_ciphers(out / "calibration" / "ciphers.toml", seconds=0.05 if not full else 0.3,
                                           progress=True))
    # One real encrypted MNIST inference (SEAL, per-channel packing): its op trace is what the
    # in-storage study simulates next to the paper-calibrated program.
    trace_path = None
    try:
        import json as _json

        from cryptoffload.apps.he_cnn.infer import infer_image

        (out / "he-cnn").mkdir(parents=True, exist_ok=True)
        inf_res = infer_image(0, trace_out=out / "he-cnn" / "trace.json")
        (out / "he-cnn" / "infer.json").write_text(_json.dumps(inf_res.as_dict(), indent=2, default=str))
        trace_path = out / "he-cnn" / "trace.json"
        console.print(f"encrypted MNIST inference (image 0): predicted {inf_res.prediction} "
                      f"(plaintext {inf_res.plain_prediction}, label {inf_res.label}) in "
                      f"{inf_res.seconds['evaluate']:.2f} s; trace written to {trace_path}")
    except CryptoffloadError as exc:
        failures.append(("he-cnn", str(exc)))
        err_console.print(f"error: he-cnn: {exc}", markup=False, highlight=False)
    runners = {
        "bsgs-multidevice": lambda prog: bm.run(bm.BsgsMultideviceConfig(quick=not full, seed=seed),
                                                out / "bsgs-multidevice", prog),
        "fpga-reconfig": lambda prog: st.run(st.FpgaReconfigConfig(quick=not full, seed=seed, sw_profile=sw_profile),
                                             out / "fpga-reconfig", prog),
        "isc-he-cnn": lambda prog: isc.run(isc.IscHeCnnConfig(quick=not full), out / "isc-he-cnn", prog),
        "isc-he-cnn-trace": lambda prog: isc.run(isc.IscHeCnnConfig(quick=not full, model=str(trace_path)),
                                                 out / "isc-he-cnn-trace", prog),
        "paillier-offload": lambda prog: po.run(po.PaillierOffloadConfig(quick=not full, seed=seed),
                                                out / "paillier-offload", prog),
        "ridge": lambda prog: rg.run(rg.RidgeConfig(quick=not full, seed=seed), out / "ridge", prog),
        "tls-offload": lambda prog: tl.run(tl.TlsOffloadConfig(quick=not full, seed=seed), out / "tls-offload", prog),
    }
    names = [n for n in STUDIES if n in runners]
    if trace_path is not None:
        names.insert(names.index("isc-he-cnn") + 1, "isc-he-cnn-trace")
    for name in names:
        try:
            with progress_bar() as prog:
                res = runners[name](prog)
        except CryptoffloadError as exc:  # one study's bad input must not hide the others
            failures.append((name, str(exc)))
            err_console.print(f"error: study {name}: {exc}", markup=False, highlight=False)
            continue
        render_result(res, console)
        results.append((res, name))
    index = write_index(results, out, machine_info(), failures)
    console.print(f"wrote {index}")
