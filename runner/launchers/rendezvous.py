"""The c10d rendezvous of a multi-node run, and the `torchrun` a recipe's run script calls under it.

A recipe's script says how it launches on one node (`torchrun --standalone --nproc-per-node 8 ...`). Across nodes
the runner runs that same script, unchanged, on every node, with `torchrun` defined as a bash function that calls
`python -m runner.launchers.rendezvous`: torch's own torchrun parser reads the script's arguments, then the
rendezvous replaces what makes it single-node (`--standalone`, `--nnodes`, the rdzv options): c10d backend, the
endpoint on the first node, the run id and the node count. Everything else the script passes (processes per node,
the module or file and its arguments, restarts) is kept as torch parsed it, so nothing of the script is re-parsed
by the runner or turned into shell code.
"""

from __future__ import annotations

import re
import secrets
import socket
import sys
from dataclasses import dataclass
from typing import Any

from runner.launchers.refusals import LaunchRefused
from runner.outcomes import Outcome

ENV_NODES = "OPENRECIPES_NNODES"
ENV_ENDPOINT = "OPENRECIPES_RDZV_ENDPOINT"
ENV_ID = "OPENRECIPES_RDZV_ID"
ENV_PYTHON = "OPENRECIPES_PYTHON"  # the interpreter with torch and the runner (the same path on every node)

_HOST = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]+\])$")
_RUN_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_TORCHRUN = re.compile(r"(?:^|[\s;&|(`/])torchrun(?:\s|$)", re.M)

# The script every node runs: the recipe's run.sh beside it, with `torchrun` joining the rendezvous. Fixed text:
# nothing of the recipe is pasted into it. `torchrun` is an executable first on PATH (not a shell function), so
# the script finds it however it starts it: plainly, or through `exec`, `env X=1`, `timeout 3600`, `nohup`, `time`.
WRAPPER = """#!/usr/bin/env bash
# Written by the OpenRecipes runner. Runs the recipe's script (run.sh, beside this file) with its `torchrun` joining
# the c10d rendezvous named by OPENRECIPES_RDZV_ENDPOINT, OPENRECIPES_RDZV_ID and OPENRECIPES_NNODES.
set -e
shim=$(mktemp -d "${TMPDIR:-/tmp}/openrecipes-torchrun.XXXXXX")
trap 'rm -rf "$shim"' EXIT
printf '#!/usr/bin/env bash\\nexec "${OPENRECIPES_PYTHON:-python3}" -m runner.launchers.rendezvous "$@"\\n' \\
  > "$shim/torchrun"
chmod +x "$shim/torchrun"
export PATH="$shim:$PATH"
set +e
bash "$(dirname "$0")/run.sh"
"""

# Commands that start the command after them (with their own options and values first): the torchrun they start
# is found on PATH, as a plain one is.
_PASS_THROUGH = {"exec", "env", "timeout", "nohup", "time", "nice", "stdbuf", "setsid", "command", "numactl",
                 "taskset", "ionice", "chrt"}
# Launchers that start torchrun themselves on nodes of their choosing: under the runner's launch they would start
# it again, outside the rendezvous.
_OWN_LAUNCHERS = {"srun", "mpirun", "mpiexec", "pdsh", "ssh", "salloc", "sbatch"}


def torchrun_problems(script: str) -> list[str]:
    """Why the script's torchrun would not join the runner's rendezvous (one line each, naming the script's
    line), or []: a torchrun under srun/mpirun/ssh, by an absolute path, or as python -m torch.distributed.run."""
    import shlex

    problems = []
    for number, raw in enumerate(script.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "torch.distributed.run" in line or "torch.distributed.launch" in line:
            problems.append(f"run line {number}: python -m torch.distributed.run/launch is not the torchrun the "
                            "runner turns into a rendezvous; call `torchrun` by name")
            continue
        try:
            lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
            lexer.whitespace_split = True
            words = list(lexer)
        except ValueError:
            words = line.split()
        command: list[str] = []
        for word in [*words, ";"]:
            if word and set(word) <= set(";&|()"):
                problems += _command_problems(command, number)
                command = []
            else:
                command.append(word)
    return problems


def _command_problems(words: list[str], number: int) -> list[str]:
    names = [w for w in words if "=" not in w or w.startswith("-")]
    starts = [w.rsplit("/", 1)[-1] for w in names]
    if "torchrun" not in starts:
        return []
    at = starts.index("torchrun")
    launcher = next((w for w in starts[:at] if w in _OWN_LAUNCHERS), None)
    if launcher:
        return [f"run line {number}: torchrun is started by {launcher}, which places its processes itself; under "
                "the runner's launch (one task per node) call torchrun directly"]
    if names[at] != "torchrun":
        return [f"run line {number}: torchrun is called by its path ({names[at]}), which passes by the rendezvous; "
                "call it by name (`torchrun`)"]
    return []


class RendezvousError(LaunchRefused, ValueError):
    """An endpoint or run id that cannot be used; the message says which and why."""

    outcome = Outcome.USAGE


@dataclass(frozen=True)
class Rendezvous:
    endpoint: str  # host:port of the c10d store, on the first node
    run_id: str
    nodes: int

    def env(self, python: str | None = None) -> dict[str, str]:
        """What the wrapper and `python -m runner.launchers.rendezvous` read on each node."""
        return {ENV_NODES: str(self.nodes), ENV_ENDPOINT: self.endpoint, ENV_ID: self.run_id,
                ENV_PYTHON: python or sys.executable}


def check_endpoint(text: str) -> str:
    """host:port, as torchrun's --rdzv-endpoint takes it (a host name, an IPv4 address or a bracketed IPv6 one)."""
    host, sep, port = text.rpartition(":")
    if not sep or not _HOST.match(host) or not port.isdigit() or not 0 < int(port) < 65536:
        raise RendezvousError(f"rendezvous endpoint {text!r}: give HOST:PORT (a host name or address and a port "
                              "1-65535) that every node can reach")
    return text


def check_run_id(text: str) -> str:
    if not _RUN_ID.match(text):
        raise RendezvousError(f"rendezvous id {text!r}: 1-64 letters, digits, '.', '_' or '-'")
    return text


def new_run_id() -> str:
    return f"openrecipes-{secrets.token_hex(4)}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return int(s.getsockname()[1])


def _routable_address() -> str | None:
    """This machine's address on its default route (a UDP socket's source address; nothing is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: a route is chosen, no packet leaves
            address = str(s.getsockname()[0])
        except OSError:
            return None
    return None if _loopback_name(address) else address


def _loopback_name(name: str) -> bool:
    """A name or address that means "this machine" wherever it is read (localhost, 127.x, ::1)."""
    import ipaddress

    bare = name.strip("[]").lower()
    if bare in ("", "localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"):
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False


def this_host() -> str:
    """This machine's name as the other nodes reach it: its FQDN or host name, never `localhost` (which
    socket.getfqdn() answers where /etc/hosts lists the machine's name on 127.0.0.1), else its address on the default
    route. The name is the one torch's c10d recognises as this machine's (so this node hosts the store).
    RendezvousError when none is found (pass --rdzv-endpoint)."""
    for name in (socket.getfqdn(), socket.gethostname()):
        if name and not _loopback_name(name):
            return name
    address = _routable_address()
    if address:
        return address
    raise RendezvousError("this machine's name is a loopback name, which the other nodes cannot reach: pass "
                          "--rdzv-endpoint HOST:PORT with an address they reach")


def check_reachable(endpoint: str) -> str:
    """An endpoint other nodes are told to use: refused when its host is a loopback address."""
    host = endpoint.rpartition(":")[0]
    if _loopback_name(host):
        raise RendezvousError(f"rendezvous endpoint {endpoint!r} is a loopback address: the other nodes would reach "
                              "themselves; give this node's name or an address they reach")
    return endpoint


def bind_address(host: str) -> str:
    """The address to listen on for `host`: its address here when that is not a loopback one (the interface the
    other nodes reach), else every interface (a /etc/hosts that maps the name to 127.0.1.1 says nothing of how the
    others resolve it; the run's token keeps strangers out)."""
    try:
        addresses = [str(info[4][0]) for info in socket.getaddrinfo(host.strip("[]"), None, type=socket.SOCK_STREAM)]
    except OSError:
        return ""
    return next((a for a in addresses if not _loopback_name(a)), "")


def launches_torchrun(script: str) -> bool:
    """Whether a run script calls `torchrun` (a multi-node run needs one: it is what joins the rendezvous), plainly
    or through a command that starts it (exec, env, timeout, nohup, ...)."""
    lines = [line for line in script.splitlines() if not line.lstrip().startswith("#")]
    return bool(_TORCHRUN.search("\n".join(lines)))


def torchrun_args(argv: list[str], rdzv: Rendezvous) -> Any:
    """torchrun's arguments as torch parses them, made multi-node: c10d at the endpoint, N nodes, the run id."""
    from torch.distributed.run import parse_args

    args = parse_args(argv)
    args.standalone = False
    args.nnodes = f"{rdzv.nodes}:{rdzv.nodes}"
    args.rdzv_backend = "c10d"
    args.rdzv_endpoint = rdzv.endpoint
    args.rdzv_id = rdzv.run_id
    return args


def from_env(environ: dict[str, str]) -> Rendezvous:
    missing = [k for k in (ENV_NODES, ENV_ENDPOINT, ENV_ID) if not environ.get(k)]
    if missing:
        raise RendezvousError(f"{', '.join(missing)} not set: this torchrun runs only under the runner's multi-node "
                              "launch (python -m runner remeasure --launcher torchrun|slurm, or python -m runner node)")
    nodes = environ[ENV_NODES]
    if not nodes.isdigit() or int(nodes) < 1:
        raise RendezvousError(f"{ENV_NODES}={nodes!r}: a node count is expected")
    return Rendezvous(check_endpoint(environ[ENV_ENDPOINT]), check_run_id(environ[ENV_ID]), int(nodes))


def main(argv: list[str] | None = None) -> int:
    import os

    from torch.distributed.run import run

    try:
        rdzv = from_env(dict(os.environ))
    except RendezvousError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args = torchrun_args(sys.argv[1:] if argv is None else argv, rdzv)
    print(f"openrecipes-rendezvous: c10d at {rdzv.endpoint}, id {rdzv.run_id}, {rdzv.nodes} nodes x "
          f"{args.nproc_per_node} processes", file=sys.stderr, flush=True)
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
