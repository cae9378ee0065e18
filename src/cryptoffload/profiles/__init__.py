"""Cost profiles (data, not code): TOML tables where every number cites its source.

What flows in and out: TOML files in (the built-in ones beside this file, a user's, or one
``cryptoffload calibrate`` wrote); a :class:`Profile` of :class:`ProfileValue` out -- each
value with its source, its kind (*cited*, *assumed*, *fitted*, *derived*, *measured*,
*stored*) and, where it is uncertain, its plausible range -- read by the
simulators (``sim/``), the policies, the workloads and the studies, which carry the provenance
into their tables.

Modules (start with :mod:`.loader`):

* :mod:`.loader` -- reading, resolving (a built-in name or a path) and writing profiles;
* :mod:`.rules` -- what each field may hold, read from its name's unit (``_s``, ``_bytes``, ...);
* :mod:`.fits` -- which values were fitted, and to which of a paper's tables;
* :mod:`.sensitivity` -- a prediction's tornado table and joint band over its inputs' ranges.

Data: ``virtex2_ciphers.toml`` (FPGA reconfiguration), ``qat_dh8970.toml`` (QAT Paillier),
``tls_offload.toml`` (SmartNIC TLS), ``he_cnn_paper*.toml`` and ``isc_platforms.toml``
(in-storage HE-CNN), ``bsgs_u280.toml`` and ``heax_set_c.toml`` (multi-device BSGS).
"""

from cryptoffload.profiles.loader import (
    Profile,
    ProfileValue,
    builtin_profile_path,
    load_profile,
    resolve_profile,
    write_profile,
)

__all__ = [
    "Profile",
    "ProfileValue",
    "builtin_profile_path",
    "load_profile",
    "resolve_profile",
    "write_profile",
]
