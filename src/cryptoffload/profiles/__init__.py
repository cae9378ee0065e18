"""Cost profiles (data, not code): TOML tables where every number cites its source."""

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
