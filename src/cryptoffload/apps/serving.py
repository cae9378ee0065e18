"""What the command line sets and checks of the programs' servers and clients: the connection
limits every server starts with, a server URL's scheme, a token file.

Why a public module: the HTTP plumbing the servers share (:mod:`._http`, :mod:`._listen`,
:mod:`._credentials`) is this package's own business; the CLI needs only these few settings and
checks of it, named here once, so it depends on them and not on how the servers are built
(issue 36: no CLI or test module imports another package's private module).
"""

from __future__ import annotations

from cryptoffload.apps._credentials import read_secret
from cryptoffload.apps._http import check_url, limits, set_limits
from cryptoffload.apps._listen import ServerLimits

__all__ = ["ServerLimits", "check_url", "limits", "read_secret", "set_limits"]
