"""Let the emulated network's bridge forward between its own namespaces, whatever the host's firewall says.

With bridge netfilter on (``br_netfilter`` loaded: ``net.bridge.bridge-nf-call-iptables = 1``), frames a
bridge switches between two of its ports also cross iptables' ``FORWARD`` chain; Docker loads it and sets
that chain's policy to ``DROP``, so two supervisors on the emulated network could not reach each other
while both still reach the master (that traffic is ``INPUT``, not ``FORWARD``). The kernel offers no
per-bridge opt-out: a bridge's own ``nf_call_iptables 0`` only matters while the global sysctl is 0, and
turning the sysctl off would undo Docker's isolation of its own bridges.

So each cluster adds one iptables chain of its own, ``storm-planner-<bridge>``, holding one rule (accept
what enters *and* leaves its bridge), and one jump to it at the top of ``FORWARD``. Nothing else is
touched: traffic from or to any other interface goes on through ``FORWARD`` as before. ``cluster down``
(and an ``up`` that finds an earlier one's leftovers) deletes the jump and the chain, exactly what was
added. The rules are added on every host that has ``iptables`` (``apt-get install iptables``; ``make
system-packages`` installs it); without it they are skipped, and the reachability probe
(``reachability.py``) tells whether the bridge forwards anyway.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from .syscmd import run

CHAIN_PREFIX = "storm-planner-"
BRIDGE_NF_SYSCTL = Path("/proc/sys/net/bridge/bridge-nf-call-iptables")
_IPTABLES = "iptables"


def chain_for(bridge: str) -> str:
    """The chain of one cluster's bridge (iptables allows 28 characters; a bridge name has at most 15)."""
    return CHAIN_PREFIX + bridge


def iptables_available() -> bool:
    return shutil.which(_IPTABLES) is not None


def bridge_calls_iptables() -> bool | None:
    """Whether bridged frames cross iptables here (None: ``br_netfilter`` is not loaded)."""
    try:
        return BRIDGE_NF_SYSCTL.read_text().strip() == "1"
    except OSError:
        return None


def allow_forwarding(bridge: str) -> bool:
    """Add the cluster's chain and its jump; returns False (nothing added) without iptables."""
    if not iptables_available():
        return False
    remove_forwarding(bridge)   # leftovers of a crashed `up` of the same cluster: never two jumps
    chain = chain_for(bridge)
    _iptables("-N", chain)
    _iptables("-A", chain, *_accept_rule(bridge))
    _iptables("-I", "FORWARD", "1", "-j", chain)
    return True


def remove_forwarding(bridge: str) -> bool:
    """Delete the jump(s) to the cluster's chain and the chain; returns whether anything was there."""
    if not iptables_available():
        return False
    chain = chain_for(bridge)
    removed = False
    while _iptables("-C", "FORWARD", "-j", chain, check=False).returncode == 0:
        _iptables("-D", "FORWARD", "-j", chain)
        removed = True
    if _iptables("-S", chain, check=False).returncode == 0:
        _iptables("-F", chain)
        _iptables("-X", chain)
        removed = True
    return removed


def forwarding_allowed(bridge: str) -> bool:
    """The cluster's chain holds its rule and ``FORWARD`` jumps to it."""
    chain = chain_for(bridge)
    return (iptables_available()
            and _iptables("-C", chain, *_accept_rule(bridge), check=False).returncode == 0
            and _iptables("-C", "FORWARD", "-j", chain, check=False).returncode == 0)


def forward_policy() -> str | None:
    """``FORWARD``'s policy (``ACCEPT``, ``DROP``), None when iptables cannot tell."""
    if not iptables_available():
        return None
    result = _iptables("-S", "FORWARD", check=False)
    for line in result.stdout.splitlines():
        if line.startswith("-P FORWARD "):
            return line.split()[2]
    return None


def likely_cause(bridge: str) -> str:
    """What usually stops a bridge forwarding between its ports, with this host's facts."""
    calls = bridge_calls_iptables()
    if calls is None:
        nf = "bridge netfilter is off (br_netfilter not loaded)"
    else:
        nf = f"net.bridge.bridge-nf-call-iptables = {int(calls)}"
    if not iptables_available():
        rules = ("iptables is not installed, so the bridge's accept rule was not added "
                 "(apt-get install iptables; `make system-packages`)")
    elif forwarding_allowed(bridge):
        rules = (f"FORWARD policy {forward_policy()}, the accept rule in chain {chain_for(bridge)} is in place: "
                 f"look for another firewall dropping bridged traffic (nftables, iptables-legacy, ebtables)")
    else:
        rules = (f"FORWARD policy {forward_policy()} and the accept rule in chain {chain_for(bridge)} is missing "
                 f"(removed by hand or by a firewall reload?)")
    return (f"likely bridge netfilter with iptables' FORWARD policy DROP, as Docker sets it: {nf}; {rules}; "
            f"check with `iptables -S FORWARD`")


def _accept_rule(bridge: str) -> list[str]:
    return ["-i", bridge, "-o", bridge, "-j", "ACCEPT"]


def _iptables(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    # -w: wait for the xtables lock rather than fail while Docker or firewalld holds it.
    return run([_IPTABLES, "-w", *args], check=check)
