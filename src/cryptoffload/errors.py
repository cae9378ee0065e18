"""User-facing errors.

Every mistake a user can make (bad profile, malformed trace, unknown policy, an output path
that cannot be written, a library or device missing here, ...) raises a subclass of
:class:`CryptoffloadError`. The CLI turns these into a one-line message and exit code 2.

Only what the user can fix derives from it. Internal signals -- a ring full or empty, an
engine closed, a job that raised, a native library call that failed -- are ordinary
exceptions: one that reaches the command line is a bug, printed with its traceback and a
request to report it, exit code 1.
"""


class CryptoffloadError(Exception):
    """Base class of errors caused by user input rather than by a bug."""


class ProfileError(CryptoffloadError):
    """A cost profile is missing, malformed, or lacks a field (message names file and field)."""


class TraceError(CryptoffloadError):
    """A request trace cannot be read or generated as asked."""


class ConfigError(CryptoffloadError):
    """An option value is out of range or names something unknown (policy, cipher, study)."""


class BackendUnavailable(CryptoffloadError):
    """An optional native library or accelerator is not present on this machine."""


class OutputError(CryptoffloadError):
    """An output path cannot be written as asked: a folder where a file was expected, a missing
    parent folder, an existing file that must not be overwritten, no permission, a full disk."""


class InputError(CryptoffloadError):
    """An input file cannot be read as asked: missing, unreadable, not a regular file (a folder,
    a FIFO, a device such as /dev/zero), larger than what that input can be, not text."""
