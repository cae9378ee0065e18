"""Model family: TLS offload to a SmartNIC on a management node (the tls-offload study; Miyakawa
et al.).

* :mod:`.smartnic` -- ``TlsCostModel``: CPU seconds, delay and wire bytes per request per mode.
* :mod:`.node` -- a management node (cores + the NIC's link) serving a Poisson stream, and the
  clients-per-core planner.
"""
