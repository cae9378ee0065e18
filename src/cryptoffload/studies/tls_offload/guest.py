"""Mode 3 (kTLS) of the TLS-offload study as measured in a Linux guest, beside the model.

Why a stored guest run: this machine's kernel has no ``tls`` module, so the study can only
model kTLS here. ``make ktls`` (``apps/tls/guest.py``) boots Debian's kernel, which has it, under
QEMU's TCG emulation and runs the study's fetch series there, every kTLS fetch verified by the
kernel's counters; its JSON is stored as package data (``studies/data/tls_guest.json``). What
that run measured is real -- which process spent the CPU, in user or system mode, and the kTLS
counters -- but every time is an emulated CPU's: the absolute milliseconds are inflated (several
times, unevenly across instructions), so the study reads ratios and the user/system split from
it, never speed. It answers the paper's second future-work question -- how much server CPU
kTLS saves per request and per byte, and where it goes -- with that caveat in every row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any, Optional

from cryptoffload.apps.tls.guest import GuestCellSummary, summarize
from cryptoffload.checks import load_json
from cryptoffload.errors import InputError
from cryptoffload.io import read_input_text
from cryptoffload.profiles.sensitivity import interval_text, t_multiplier
from cryptoffload.report.provenance import provenance_word, stored_from
from cryptoffload.report.result import Claim, Table
from cryptoffload.report.rows import column, table_of
from cryptoffload.sim.tls import smartnic as nic

#: the guest run of ``make ktls``, shipped as package data
GUEST_RESULT = "tls_guest.json"
#: ``--guest-result none``: leave the guest tables out
NO_GUEST = "none"


def load_guest(path: Optional[str]) -> Optional[dict[str, Any]]:
    """The guest run: from ``path``, else the stored one when present; None for ``"none"`` or
    when nothing is stored."""
    if path is not None and path.lower() == NO_GUEST:
        return None
    if path is not None:
        text = read_input_text(path, "--guest-result")
    else:
        stored = resources.files("cryptoffload.studies.data").joinpath(GUEST_RESULT)
        if not stored.is_file():
            return None
        text = stored.read_text(encoding="utf-8")
    data = load_json("--guest-result", text, error=InputError)  # strict: no NaN, no key twice
    if not isinstance(data, dict) or data.get("kind") != "bench":
        kind = data.get("kind") if isinstance(data, dict) else type(data).__name__
        raise InputError(f"--guest-result: not a `tls bench --guest` result (kind {kind!r})")
    host = data.get("host")
    if not isinstance(host, dict) or not host.get("machine") or not host.get("date"):
        raise InputError("--guest-result: a stored guest run names the machine and date it ran on (host.machine, "
                         "host.date, as `tls bench --guest` writes them); run `make ktls` again")
    return data


def provenance_of(guest: dict[str, Any]) -> str:
    """What the guest run measured and what was emulated, in one cell."""
    g, h = guest.get("guest", {}), guest.get("host", {})
    host = h.get("machine", {}).get("cpu", "host not recorded")
    return stored_from(h, f"measured in an emulated guest: kernel {g.get('kernel', '?')}, {g.get('cpu_model', '?')}, "
                          f"{h.get('emulation', 'QEMU TCG')} on {host}, {h.get('date')}; CPU split and kTLS counters "
                          "measured, times emulated")


@dataclass(frozen=True)
class GuestRow:
    server: str = column()
    file: str = column()
    provenance: str = column()
    fetches: int = column()
    ktls_verified: Optional[int] = column()
    fetch_ms: float = column()
    worker_cpu_ms: Optional[float] = column()
    user_ms: float = column()
    system_ms: float = column()
    ktls_over_tls_cpu: Optional[float] = column()
    model_ktls_over_tls_cpu: Optional[float] = column()


def _tls_twin(cells: list[GuestCellSummary], c: GuestCellSummary) -> Optional[GuestCellSummary]:
    """The user-space TLS cell of the same TLS version and file as kTLS cell ``c``."""
    return next((t for t in cells if t.mode == "tls" and t.tls_version == c.tls_version and t.file == c.file), None)


def _ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return a / b if a is not None and b and math.isfinite(a) and math.isfinite(b) else None


def guest_rows(cells: list[GuestCellSummary], prov: str, costs: nic.TlsCostModel) -> list[GuestRow]:
    """Every guest cell; kTLS rows with their CPU over user-space TLS's, and the model's."""
    rows = []
    for c in cells:
        twin = _tls_twin(cells, c) if c.mode == "ktls" else None
        model = _ratio(costs.cost("ktls", c.size).cpu_s, costs.cost("tls", c.size).cpu_s) if twin else None
        rows.append(GuestRow(c.name, c.file, prov, c.fetches, c.ktls_engaged if c.mode == "ktls" else None,
                             c.fetch_ms, c.cpu_ms, c.user_ms, c.system_ms,
                             _ratio(c.cpu_ms, twin.cpu_ms) if twin else None, model))
    return rows


@dataclass(frozen=True)
class SavingRow:
    tls_version: str = column()
    file: str = column()
    provenance: str = column()
    saved_ms: Optional[float] = column()
    saved_pct: Optional[float] = column()
    saved_ns_per_byte: Optional[float] = column()
    user_moved_ms: float = column()
    system_added_ms: float = column()


def saving_rows(cells: list[GuestCellSummary]) -> list[SavingRow]:
    """kTLS against user-space TLS, per TLS version and file: the worker CPU saved per request,
    per byte (the 64 MB saving beyond the 2 KB one, over the extra bytes), and where it went
    (user time that left, system time that came)."""
    rows: list[SavingRow] = []
    small_saving: dict[Optional[str], tuple[int, float]] = {}
    for c in sorted((c for c in cells if c.mode == "ktls"), key=lambda c: (c.tls_version or "", c.size)):
        twin = _tls_twin(cells, c)
        if twin is None:
            continue
        saved = twin.cpu_ms - c.cpu_ms if twin.cpu_ms is not None and c.cpu_ms is not None else None
        per_byte = None
        if saved is not None and c.tls_version in small_saving and c.size > small_saving[c.tls_version][0]:
            size0, saved0 = small_saving[c.tls_version]
            per_byte = 1e6 * (saved - saved0) / (c.size - size0)
        elif saved is not None:
            small_saving[c.tls_version] = (c.size, saved)
        rows.append(SavingRow(c.tls_version or "-", c.file, "derived (from the stored guest run; emulated times)",
                              saved, 100 * saved / twin.cpu_ms if saved is not None and twin.cpu_ms else None,
                              per_byte, twin.user_ms - c.user_ms, c.system_ms - twin.system_ms))
    return rows


def guest_tables(guest: dict[str, Any], costs: nic.TlsCostModel, label: str, inputs: list[str]) -> list[Table]:
    """The guest's cells beside the model's kTLS/TLS CPU ratio, and what kTLS saved there."""
    cells = summarize(guest)
    prov = provenance_of(guest)
    counts = guest.get("counts", {})
    return [table_of(GuestRow, guest_rows(cells, prov, costs), id="ktls_guest",
                        title="Mode 3 for real: nginx in a Linux guest with kTLS (stored `make ktls` run; QEMU TCG, "
                              "so times are emulated), per fetch, beside the model's kTLS/TLS CPU ratio",
                        provenance="mixed", key_columns=2, inputs=inputs,
                        column_provenance={"model_ktls_over_tls_cpu": label},
                        note=f"curl fetches per server: {counts}; every kTLS fetch verified by /proc/net/tls_stat "
                             "(TlsTxSw rose; ktls_verified counts them). worker_cpu_ms from schedstat; user_ms / "
                             "system_ms from clock ticks (10 ms steps). The model's ratio is on this machine's "
                             "measured costs, the guest's on an emulated CPU: compare the ratios, not the times."),
            table_of(SavingRow, saving_rows(cells), id="ktls_guest_saving",
                        title="Server CPU kTLS saves over user-space TLS, and where it goes (from the stored guest "
                              "run; emulated)",
                        provenance="mixed", key_columns=2,
                        note="saved = user-space TLS worker CPU - kTLS worker CPU per request; per byte: the 64 MB "
                             "saving beyond the 2 KB one over the extra bytes; user_moved / system_added: the "
                             "encryption leaving user space (OpenSSL) for the kernel (sendfile), in 10 ms ticks.")]


#: what moves a guest saving's band: the two fetch series' own run-to-run noise
GUEST_NOISE = "run-to-run noise of the kTLS and user-space TLS worker CPU"


@dataclass(frozen=True)
class SavingBand:
    """A saving's band from the stored run's own noise: ``saved = 1 - kTLS CPU / TLS CPU``, the
    ratio times a t-interval (``sensitivity.CONFIDENCE``) of the combined relative standard error
    of the two per-fetch means, on the smaller series' degrees of freedom; ``fetches`` says how
    many the smaller series had."""

    low_pct: float
    high_pct: float
    fetches: int


def saving_band(ktls: GuestCellSummary, tls: GuestCellSummary) -> Optional[SavingBand]:
    """The band of kTLS's CPU saving over user-space TLS (``None`` when either series has fewer
    fetches than a t-interval is computed from, or no CPU reading)."""
    if ktls.cpu_ms is None or not tls.cpu_ms or ktls.cpu_rse is None or tls.cpu_rse is None:
        return None
    n = min(ktls.fetches, tls.fetches)
    k = t_multiplier(n)
    if k is None:
        return None
    r, se = ktls.cpu_ms / tls.cpu_ms, math.hypot(ktls.cpu_rse, tls.cpu_rse)
    return SavingBand(100 * (1 - r * (1 + k * se)), 100 * (1 - r * (1 - k * se)), n)


def _saving_claim(r: SavingRow, b: Optional[SavingBand], fetches: int) -> Claim:
    """One saving as a claim: no paper value (the paper asks the question), so kind ``claim``;
    banded by the stored run's own noise when both series have enough fetches for a t-interval,
    and saying so when they do not or when the band holds no saving at all."""
    claim = Claim(paper="future work: how much server CPU kTLS saves per request and per byte, and where it goes",
                  provenance=provenance_word(r.provenance), table="ktls_guest_saving", key=[r.tls_version, r.file],
                  ours=f"kTLS in an emulated guest ({r.tls_version}, {r.file}): {r.saved_pct:.1f} % less worker CPU "
                       f"than user-space TLS ({r.saved_ns_per_byte:.2f} ns/byte, emulated); {r.user_moved_ms:.0f} "
                       f"ms user time left, {r.system_added_ms:.0f} ms system time came (the encryption moved into "
                       "the kernel)",
                  why=f"{interval_text(fetches)} (re-measure with `make ktls`)")
    if b is None:
        return claim
    zero = ("; the band holds no saving at all: this run does not show one" if b.low_pct <= 0 <= b.high_pct else "")
    return replace(claim, why=zero.lstrip("; "), band=[b.low_pct, b.high_pct], most_sensitive=GUEST_NOISE,
                   effect=r.saved_pct, band_method=f"{interval_text(b.fetches)} x the combined relative standard error "
                                                   "of the two per-fetch means")


def guest_claims(guest: dict[str, Any]) -> list[Claim]:
    """What kTLS saved on 64 MB in the guest, and where the CPU went, per TLS version: a claim
    each (the card lists it with its provenance -- derived from the stored run, as its row -- and
    links the saving table), beside the paper's second future-work question, banded by the
    stored run's own fetch-to-fetch noise."""
    cells = summarize(guest)
    found = []
    for r in saving_rows(cells):
        if r.saved_ns_per_byte is not None and r.saved_pct is not None:
            ktls = next(c for c in cells if c.mode == "ktls" and (c.tls_version or "-") == r.tls_version
                        and c.file == r.file)
            twin = _tls_twin(cells, ktls)
            found.append(_saving_claim(r, saving_band(ktls, twin) if twin else None,
                                       min(ktls.fetches, twin.fetches) if twin else ktls.fetches))
    return found
