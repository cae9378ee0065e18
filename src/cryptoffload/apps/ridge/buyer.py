"""The buyer as an HTTP client of the platform and the CSP.

It asks the platform to finalize, gets R, r and the masked system from it and w' with its
proof from the CSP (both only against the buyer token), checks the proof against that system
(:func:`~.proofs.verify_solution`: a wrong w' is :class:`~.proofs.CspProofError`, and no
model), and recovers the model as exact fractions within the bounds of the records it was
sold (:func:`~.protocol.recover_model`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from cryptoffload.apps._credentials import token_hash
from cryptoffload.apps.ridge import messages as m
from cryptoffload.apps.ridge.messages import ProtocolError
from cryptoffload.apps.ridge.params import RidgeParams
from cryptoffload.apps.ridge.peer import Peer, client_session, fetch_session
from cryptoffload.apps.ridge.proofs import Solution, verify_solution
from cryptoffload.apps.ridge.protocol import MaskSecret, RidgeModel, recover_model
from cryptoffload.checks import JsonDict
from cryptoffload.errors import ConfigError


@dataclass
class BuyerResult:
    model: RidgeModel
    params: RidgeParams
    records: int
    system_digest: str
    upload_key: str
    solve_key: str
    timings: dict[str, float] = field(default_factory=dict)
    excluded_providers: list[str] = field(default_factory=list)

    def to_dict(self) -> JsonDict:
        return {"coef": [float(c) for c in self.model.coef], "fractions": [str(f) for f in self.model.fractions],
                "records": self.records, "params": m.params_to_dict(self.params), "system_digest": self.system_digest,
                "upload_key": self.upload_key, "solve_key": self.solve_key, "timings": self.timings,
                "excluded_providers": self.excluded_providers}


async def run_buyer(platform_url: str, csp_url: str, token: str, *, cafile: Path | Sequence[Path] | None = None,
                    timeout: float = 600.0, insecure_http: bool = False) -> BuyerResult:
    """Finalize (if needed), then R, r and the masked system from the platform, w' and its
    proof from the CSP, the proof checked, and the model. The counts the platform reports
    (records, uploads, providers, the uploads' digest, the contributions the CSP left out)
    must be the ones it committed to at the CSP. Providers left out (their sums overflowed)
    are in ``excluded_providers``; the model is of the others."""
    t: dict[str, float] = {}
    async with client_session(cafile, timeout) as session:
        csp = Peer(session, csp_url, "CSP", insecure_http=insecure_http)
        platform = Peer(session, platform_url, "platform", insecure_http=insecure_http)
        info = await fetch_session(csp)
        if token_hash(token) != info.buyer_token_sha256:
            raise ConfigError("the buyer token does not match the one the CSP issued (buyer.token)")
        relayed = await fetch_session(platform)
        if relayed.fingerprint != info.fingerprint:
            raise ConfigError("the platform serves another CSP session than the CSP at --csp (fingerprints differ)")
        ufp, sfp = info.upload_pk.fingerprint, info.solve_pk.fingerprint
        s = time.perf_counter()
        fin = await platform.post(m.new_message(m.FINALIZE, ufp), m.FINALIZED, ufp, token)
        t["finalize"] = time.perf_counter() - s
        s = time.perf_counter()
        mask = await platform.post(m.new_message(m.MASK_REQUEST, sfp), m.MASK, sfp, token)
        d, n = info.params.d, info.solve_pk.n
        R_raw = mask.get("R")
        if not isinstance(R_raw, list) or len(R_raw) != d:
            raise ProtocolError("the platform sent a malformed R", 502)
        R = [m.hex_to_ints(row, d, n, "R") for row in R_raw]
        r = m.hex_to_ints(mask.get("r"), d, n, "r")
        digest = mask.get("system_digest")
        if not isinstance(digest, str) or digest != fin.get("system_digest"):
            raise ProtocolError("the platform's R, r belong to another system than the one it finalized", 502)
        coef = await csp.post(m.new_message(m.COEFFICIENTS_REQUEST, sfp, system_digest=digest), m.COEFFICIENTS,
                              sfp, token)
        w_prime = m.hex_to_ints(coef.get("w_prime"), d, n, "w_prime")
        proof = m.hex_to_ints(coef.get("proof"), d, n, "proof")
        if coef.get("system_digest") != digest:
            raise ProtocolError("the CSP's w' belongs to another system than the platform's R, r", 502,
                                code="digest_mismatch")
        try:
            system = m.decode_ciphertexts(mask.get("system"), info.solve_pk, count=d * d + d, name="system")
            sold = m.int_field(coef, "records", 1, info.params.max_records)
        except ProtocolError as exc:
            raise ProtocolError(f"invalid answer: {exc}", 502, code="bad_answer") from None
        if system.digest != digest:
            raise ProtocolError("the platform's masked system is not the one the CSP solved (digests differ)", 502,
                                code="digest_mismatch")
        for name in ("records", "uploads", "providers", "uploads_sha256", "excluded"):
            if coef.get(name) != fin.get(name):
                raise ProtocolError(f"the platform reports {name} = {fin.get(name)!r}, but committed "
                                    f"{coef.get(name)!r} at the CSP", 502, code="commitment_mismatch")
        t["fetch"] = time.perf_counter() - s
    s = time.perf_counter()
    v = system.values
    verify_solution(info.solve_pk, [v[i * d:(i + 1) * d] for i in range(d)], v[d * d:], Solution(w_prime, proof))
    t["verify"] = time.perf_counter() - s
    s = time.perf_counter()
    model = recover_model(w_prime, MaskSecret(R, r), info.params, info.solve_pk, sold)
    t["recover"] = time.perf_counter() - s
    records = mask.get("records")
    listed = fin.get("excluded_providers")
    left_out = [str(x) for x in listed] if isinstance(listed, list) else []
    return BuyerResult(model, info.params, records if isinstance(records, int) else -1, digest,
                       ufp.hex(), sfp.hex(), t, left_out)
