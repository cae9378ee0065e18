"""A real nginx serving files in the SmartNIC TLS paper's four modes, what this machine can
really do, and measurements of it.

The paper (``cryptoffload.papers.PAPERS["smartnic-tls"]``) moves nginx's TLS encryption onto a
BlueField-2 DPU through kernel TLS (kTLS) and times wget fetches in four modes: plain HTTP, TLS
in user space (OpenSSL), kTLS, and kTLS with the NIC encrypting. Asking OpenSSL for kTLS is not the same as getting it: without the kernel's
``tls`` module OpenSSL silently encrypts in user space. So this package keeps three things
apart:

* :mod:`.nginx` -- start and stop a real nginx in one of the modes (what was *requested*);
* :mod:`.detect` -- what the kernel, the NICs, nginx and OpenSSL support, and, from the
  kernel's ``/proc/net/tls_stat`` counters and nginx's access log, what really *ran*;
* :mod:`.measure` -- fetch series with the real clients (curl, wget), an interleaved bench of
  the modes with the server's CPU per request, and wrk load sweeps.
"""

from cryptoffload.apps.tls.nginx import NginxServer
from cryptoffload.sim.tls.smartnic import SERVING_MODES

__all__ = ["SERVING_MODES", "NginxServer"]
