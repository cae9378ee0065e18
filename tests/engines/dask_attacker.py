"""A second process that tries to run code on a Dask cluster, as another local program would:
run by tests/engines/test_dask.py as ``python dask_attacker.py SPEC.json``.

SPEC: ``targets`` (``[kind, address, op]``: the scheduler's ``run_function``, a worker's or a
nanny's ``run`` -- each executes a pickled function in that process), ``modes`` (how to
connect, below), ``marker_dir`` (each attempt's function writes a file there: it exists only
if the code ran), ``timeout`` (seconds per attempt), and the credential files the modes use.

Modes: ``client-plain`` (``distributed.Client(address)``, no security; scheduler only),
``client-tcp`` (the same on the address rewritten to ``tcp://``), ``tcp`` (the raw call over
plain TCP), ``tls-no-cert`` (TLS, the server not checked, no client certificate),
``other-ca`` (TLS with a certificate of another CA, trusting that CA only), ``other-ca-trusting``
(the same, trusting the cluster's real CA), ``real`` (the cluster's own credentials: the
control that shows an attempt *can* succeed). Prints ``{"<kind>/<mode>": "ran" | "refused: ..."}``
as JSON.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import sys
from pathlib import Path
from typing import Any


def touch(path: str) -> str:
    Path(path).write_text("ran\n", encoding="ascii")
    return "ran"


def _context(ca: str | None, cert: str | None, key: str | None) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    if ca:
        ctx.load_verify_locations(ca)
    else:
        ctx.verify_mode = ssl.CERT_NONE
    if cert:
        ctx.load_cert_chain(cert, key)
    return ctx


def _connection(mode: str, address: str, spec: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The address to dial and the connection arguments of ``mode``."""
    real, other = spec["real"], spec["other"]
    if mode == "tcp":
        return address.replace("tls://", "tcp://"), {}
    ctx = {"tls-no-cert": lambda: _context(None, None, None),
           "other-ca": lambda: _context(other["ca"], other["cert"], other["key"]),
           "other-ca-trusting": lambda: _context(real["ca"], other["cert"], other["key"]),
           "real": lambda: _context(real["ca"], real["cert"], real["key"])}[mode]()
    return address, {"ssl_context": ctx, "require_encryption": True}


async def _raw(kind: str, address: str, op: str, mode: str, marker: str, spec: dict[str, Any]) -> str:
    from distributed.core import rpc
    from distributed.protocol.pickle import dumps

    dial, args = _connection(mode, address, spec)
    r = rpc(dial, connection_args=args, timeout=spec["timeout"])
    try:
        await asyncio.wait_for(getattr(r, op)(function=dumps(touch), args=dumps((marker,))), spec["timeout"] * 3)
        return "ran"
    finally:
        await r.close_rpc()


async def _client(address: str, mode: str, marker: str, spec: dict[str, Any]) -> str:
    from distributed import Client

    dial = address.replace("tls://", "tcp://") if mode == "client-tcp" else address
    client = await asyncio.wait_for(Client(dial, asynchronous=True, timeout=spec["timeout"]), spec["timeout"] * 3)
    try:
        await client.run_on_scheduler(touch, marker)
        return "ran"
    finally:
        await client.close()


async def _attempt(kind: str, address: str, op: str, mode: str, spec: dict[str, Any]) -> tuple[str, str]:
    marker = str(Path(spec["marker_dir"]) / f"{kind.replace(' ', '_')}-{mode}")
    try:
        if mode.startswith("client-"):
            return f"{kind}/{mode}", await _client(address, mode, marker, spec)
        return f"{kind}/{mode}", await _raw(kind, address, op, mode, marker, spec)
    except BaseException as exc:   # noqa: BLE001 - every failure is a refusal to report
        return f"{kind}/{mode}", f"refused: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"


async def main(spec: dict[str, Any]) -> dict[str, str]:
    jobs = [_attempt(kind, address, op, mode, spec) for kind, address, op in spec["targets"] for mode in spec["modes"]
            if not (mode.startswith("client-") and op != "run_function")]
    return dict(await asyncio.gather(*jobs))


if __name__ == "__main__":
    import logging

    logging.disable(logging.CRITICAL)   # distributed logs each refused handshake; the JSON says it
    print(json.dumps(asyncio.run(main(json.loads(Path(sys.argv[1]).read_text())))))
