"""The provider as a client: unreachable platforms and bad URLs are one-line errors."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import assert_user_error
from ridge_helpers import cli, free_port


def test_unreachable_platform_is_one_line(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    assert_user_error(cli(tmp_path, "ridge", "provider", "--platform", dead, "--data", "generate:n=10"),
                      "cannot reach the platform", dead)
    assert_user_error(cli(tmp_path, "ridge", "provider", "--platform", "ftp://x", "--data", "generate:n=10"),
                      "http://")
    assert not list(tmp_path.iterdir())
