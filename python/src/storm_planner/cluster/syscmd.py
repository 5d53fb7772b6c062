"""Running the system commands that make and remove the emulated network (ip, tc, iptables)."""
from __future__ import annotations

import subprocess

from .errors import ClusterError


def run(command: list[str], *, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``command``, capturing its output (none of it reaches the CLI's stdout); with ``check``, a
    failure raises a :class:`ClusterError` quoting the command and what it said."""
    result = subprocess.run(command, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise ClusterError(f"emulated network: `{' '.join(command)}` failed: "
                           f"{(result.stderr or result.stdout).strip()}")
    return result
