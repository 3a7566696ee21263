"""A multi-node run through a torchrun rendezvous, without a scheduler.

This node (the one `python -m runner remeasure --launcher torchrun` runs on) holds the c10d rendezvous and a report
address, and prints the command the other nodes run: `python -m runner node RECIPE --nodes N --rdzv-endpoint
HOST:PORT --rdzv-id ID --report HOST:PORT`. Each joining node checks its GPUs against the recipe, sends its software
stack to this node and waits: once every node has reported, the stacks are compared (a node that differs fails the
run, named by its hostname with the difference, before anything trains), each node is told to go, and every node
runs the recipe's script with its torchrun joining the rendezvous (rendezvous.py). The joining nodes stream their
output back, so this node has every node's log, and rank 0's (wherever the rendezvous placed it) is the one parsed.
Protocol: lines of UTF-8 text over TCP; the first line from a node is its stack as JSON with the run's token (a
per-run secret printed in the join command: a connection without it is closed unheard, so a stray or rogue joiner
is never counted as a node nor its output taken as a log), the answer is `ok` or `refused: <why>`, then the node's
output lines follow until it closes. The first line is read only up to MAX_JOIN_LINE bytes and within
JOIN_LINE_TIMEOUT_S, before the token is looked at: a connection that sends more, or nothing, is closed unheard and
costs this node no more memory than that. The report address listens on the interface of this node's rendezvous
host, not on every interface. The token travels to the joining node in its environment (OPENRECIPES_JOIN_TOKEN, set
by the printed command) or in a file (--token-file), never on its command line, where any user of the machine reads
it (`ps`); the recipe's script does not inherit it.
"""

from __future__ import annotations

import datetime as dt
import hmac
import json
import os
import secrets
import shlex
import socket
import socketserver
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from generator import figures
from runner.launchers import nodes as node_checks
from runner.launchers.common import confirm, end_of_runs, env_refusal, figures_of, recorded_command, run_folder, shown_script
from runner.records import Measured, Outcome, Shown, Stop, Target

OK = "ok"
REFUSED = "refused: "
TOKEN_KEY = "token"
TOKEN_ENV = "OPENRECIPES_JOIN_TOKEN"  # the joining node's token (generator/check/env.py reserves OPENRECIPES_*)
MAX_JOIN_LINE = 64 * 1024  # a node's stack as JSON is a few hundred bytes
JOIN_LINE_TIMEOUT_S = 60.0
MAX_TOKEN_FILE = 4096


def new_token() -> str:
    return secrets.token_hex(16)


@dataclass
class _Joined:
    index: int
    stack: dict[str, Any]
    answer: threading.Event = field(default_factory=threading.Event)
    reply: str = ""
    closed: threading.Event = field(default_factory=threading.Event)


class Collector:
    """The report address on this node: the joining nodes' stacks and their output (node-<i>-<host>.log)."""

    def __init__(self, run_dir: Path, console: TextIO, host: str, token: str) -> None:
        self.run_dir = run_dir
        self.token = token
        self.turned_away = 0  # connections without the run's token
        self.console = console
        self.joined: list[_Joined] = []
        self.lock = threading.Lock()
        self.arrived = threading.Condition(self.lock)
        collector = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                collector._serve(self.rfile, self.wfile, self.connection)

        self.server = socketserver.ThreadingTCPServer((host, 0), Handler, bind_and_activate=True)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def _first_line(self, rfile: Any, connection: socket.socket | None) -> bytes | None:
        """The first line, at most MAX_JOIN_LINE bytes and within JOIN_LINE_TIMEOUT_S; None when it is longer, cut
        short or late."""
        if connection is not None:
            connection.settimeout(JOIN_LINE_TIMEOUT_S)
        try:
            first = rfile.readline(MAX_JOIN_LINE + 1)
        except OSError:  # the timeout, or a reset
            return None
        if connection is not None:
            connection.settimeout(None)  # a joined node's output may pause for as long as its run does
        return first if first.endswith(b"\n") and len(first) <= MAX_JOIN_LINE else None

    def _turn_away(self) -> None:
        with self.lock:
            self.turned_away += 1

    def _serve(self, rfile: Any, wfile: Any, connection: socket.socket | None = None) -> None:
        first = self._first_line(rfile, connection)
        try:
            stack = json.loads(first.decode("utf-8", errors="replace")) if first is not None else None
        except (ValueError, RecursionError):
            stack = None
        given = stack.pop(TOKEN_KEY, None) if isinstance(stack, dict) else None
        if not isinstance(given, str) or not hmac.compare_digest(given.encode(), self.token.encode()):
            self._turn_away()
            return  # not a joiner of this run: never counted, never answered
        assert isinstance(stack, dict)
        with self.arrived:
            joined = _Joined(len(self.joined) + 1, stack)
            self.joined.append(joined)
            self.arrived.notify_all()
        try:
            joined.answer.wait()
            try:
                wfile.write((joined.reply + "\n").encode())
                wfile.flush()
            except OSError:
                return  # a node that refused itself has gone already
            if joined.reply != OK:
                return
            host = str(stack.get(node_checks.HOST_KEY, "node"))
            path = self.run_dir / f"node-{joined.index}-{host}.log"
            with path.open("w", encoding="utf-8") as log:
                for raw in rfile:
                    line = raw.decode("utf-8", errors="replace").rstrip("\n")
                    log.write(line + "\n")
                    log.flush()
                    self.console.write(f"[{host}] {line}\n")
        finally:
            joined.closed.set()

    def wait_for(self, count: int, timeout_s: float) -> list[_Joined]:
        """The first `count` nodes to report; TimeoutError when fewer came."""
        deadline = time.monotonic() + timeout_s
        with self.arrived:
            while len(self.joined) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{len(self.joined)} of {count} other nodes reported within {timeout_s:g} s")
                self.arrived.wait(min(left, 0.5))  # short waits: Ctrl-C is seen
            return list(self.joined[:count])

    def answer(self, reply: str) -> None:
        """Tells every node that reported and has no answer yet (a given answer stands)."""
        with self.lock:
            for joined in self.joined:
                if not joined.answer.is_set():
                    joined.reply = reply
                    joined.answer.set()

    def drain(self, timeout_s: float) -> None:
        """Waits for the joined nodes' output to end (their runs ended with this node's)."""
        deadline = time.monotonic() + timeout_s
        for joined in self.joined:
            joined.closed.wait(max(0.0, deadline - time.monotonic()))

    def close(self) -> None:
        self.answer(REFUSED + "the first node stopped")
        self.drain(5.0)  # the answers are written before the server goes
        self.server.shutdown()
        self.server.server_close()


def join(report: str, stack: dict[str, Any], token: str, timeout_s: float = 60.0) -> tuple[socket.socket, str]:
    """Connects to the first node's report address, sends this node's stack with the run's token; returns the
    socket and the answer."""
    host, _, port = report.rpartition(":")
    sock = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s)
    sock.settimeout(None)  # the answer comes when every node has reported
    sock.sendall((json.dumps(stack | {TOKEN_KEY: token}) + "\n").encode())
    answer = b""
    while not answer.endswith(b"\n"):
        chunk = sock.recv(4096)
        if not chunk:
            break
        answer += chunk
    return sock, answer.decode("utf-8", errors="replace").strip()


def join_token(args: Any, environ: dict[str, str]) -> str:
    """The run's token for `python -m runner node`: --token-file's first line, else $OPENRECIPES_JOIN_TOKEN.
    ValueError says what is missing; a token on the command line (--token) is refused."""
    if getattr(args, "token", None) is not None:
        raise ValueError(f"--token is not taken on the command line, where any user of this machine reads it (ps): "
                         f"run the join command as the first node prints it ({TOKEN_ENV}=... python -m runner node "
                         "...), or put the token in a file only you can read and pass --token-file FILE")
    if getattr(args, "token_file", None):
        try:
            with open(args.token_file, "rb") as handle:
                text = handle.read(MAX_TOKEN_FILE).decode("utf-8", errors="replace")
        except OSError as exc:
            raise ValueError(f"--token-file {args.token_file}: {exc.strerror or exc}") from None
        token = text.splitlines()[0].strip() if text.strip() else ""
    else:
        token = environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise ValueError(f"no token for this run: set {TOKEN_ENV} as the first node's join command does, or pass "
                         "--token-file FILE")
    return token


def node_run_env(environ: dict[str, str], recipe_env: dict[str, str], rdzv_env: dict[str, str]) -> dict[str, str]:
    """The environment a joining node runs the recipe's script in: its own without the run's token, the recipe's
    env, the rendezvous."""
    return {k: v for k, v in environ.items() if k != TOKEN_ENV} | recipe_env | rdzv_env


def node_main(args: Any) -> int:
    """`python -m runner node RECIPE ...`: this node joins a run started by `remeasure --launcher torchrun`
    elsewhere. It writes nothing into the registry (the first node writes the figures); its exit status is its run's
    (3 when it or the first node refused it). The run's token comes from its environment or --token-file."""
    import datetime as dt
    import os
    import subprocess
    import sys

    from generator.load import load_recipe
    from generator.problems import InputError
    from generator.registry import RECIPES_DIR, RootNotFound, display_path, find_root
    from runner import commit
    from runner.launchers.process import _default_signals_in_child
    from runner.launchers.rendezvous import WRAPPER, Rendezvous, RendezvousError, check_endpoint, check_run_id
    from runner.preflight import Refusal, check_entry, check_env

    recipe_path = Path(args.recipe)
    try:
        token = join_token(args, dict(os.environ))
        root = Path(args.root).absolute() if args.root else find_root(recipe_path)
        rdzv = Rendezvous(check_endpoint(args.rdzv_endpoint), check_run_id(args.rdzv_id), args.nodes)
        check_endpoint(args.report)
    except (ValueError, RootNotFound, RendezvousError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    workdir = Path(args.workdir).resolve()
    display = display_path(recipe_path, root)
    try:
        recipe = load_recipe(recipe_path, display, root / RECIPES_DIR).recipe
    except InputError as exc:
        print("\n".join(f"error: {p}" for p in exc.problems), file=sys.stderr)
        return 2
    refused = env_refusal(dict(recipe.env))
    if refused:
        print(f"error: {display}: {refused}", file=sys.stderr)
        return 2
    try:
        stack = node_checks.check_node(recipe_path, root)
        check_env(recipe, display)
        check_entry(recipe, display, workdir)
    except Refusal as exc:
        message = str(exc) if str(exc).startswith("node ") else f"node {node_checks.hostname()}: {exc}"
        join(args.report, {node_checks.HOST_KEY: node_checks.hostname(), "refused": message}, token)[0].close()
        print(f"error: {message}", file=sys.stderr)
        return node_checks.EXIT_REFUSED
    sock, answer = join(args.report, stack, token)
    if answer != OK:
        sock.close()
        print(f"error: {answer or 'the first node closed the connection'}", file=sys.stderr)
        return node_checks.EXIT_REFUSED
    run_dir = commit.runs_dir(root) / "node" / dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "run.sh").write_text(recipe.run, encoding="utf-8")
    (run_dir / "node.sh").write_text(WRAPPER, encoding="utf-8")
    env = node_run_env(dict(os.environ), dict(recipe.env), rdzv.env())
    proc = subprocess.Popen(["bash", str(run_dir / "node.sh")], cwd=workdir, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                            preexec_fn=_default_signals_in_child)
    assert proc.stdout is not None
    streaming = True
    try:
        for raw in proc.stdout:
            sys.stdout.buffer.write(raw)
            sys.stdout.flush()
            if streaming:
                try:
                    sock.sendall(raw)
                except OSError:
                    streaming = False  # the first node went away; this node's run goes on to its end
        return proc.wait()
    except KeyboardInterrupt:
        os.killpg(proc.pid, 15)
        proc.wait()
        return 130
    finally:
        sock.close()


# --- the launch: measure(target) ---------------------------------------------------------------------------


def _rendezvous(target: Target) -> Any:
    from runner.launchers import rendezvous as rv

    options = target.options
    if options.rdzv_endpoint:
        endpoint = rv.check_reachable(rv.check_endpoint(options.rdzv_endpoint))
    else:  # a dry run binds nothing: the port is chosen at launch
        endpoint = f"{rv.this_host()}:{'PORT' if options.dry_run else rv.free_port()}"
    run_id = rv.check_run_id(options.rdzv_id) if options.rdzv_id else rv.new_run_id()
    return rv.Rendezvous(endpoint, run_id, target.nodes)


def _join_command(target: Target, rdzv: Any, report: str, token: str) -> str:
    """What each other node runs to join (same checkout and Python at the same paths), as a shell line: the token
    in the command's environment, not among its arguments."""
    options = target.options
    argv = [sys.executable, "-m", "runner", "node", str(options.recipe), "--nodes", str(rdzv.nodes),
            "--rdzv-endpoint", rdzv.endpoint, "--rdzv-id", rdzv.run_id, "--report", report,
            "--workdir", str(options.workdir.resolve())]
    return f"{TOKEN_ENV}={shlex.quote(token)} {shlex.join(argv)}"


def measure(target: Target, out: TextIO) -> Measured:
    """One run across nodes through a c10d rendezvous held here (runner/launchers/torchrun.py): the other nodes
    join with the printed command, report their stacks (compared before anything trains) and stream their output
    back; rank 0's log, wherever it ran, is parsed as a local run's."""
    from runner.launchers.process import RunFailed, run_script, shell_quote_env
    from runner.launchers.refusals import PreflightRefused
    from runner.launchers.rendezvous import WRAPPER, bind_address
    from runner.logs import tail

    options, recipe = target.options, target.recipe
    if target.runs != 1:
        raise Stop(Outcome.USAGE, "--launcher torchrun makes one run per rendezvous: run it again for another")
    workdir = options.workdir.resolve()
    rdzv = _rendezvous(target)
    if options.dry_run:  # nothing is started, nothing listens: the plan and the join command are shown
        join = _join_command(target, rdzv, f"{rdzv.endpoint.rpartition(':')[0]}:PORT", "TOKEN")
        print(f"recipe: {target.source.id}\nwould hold a c10d rendezvous at {rdzv.endpoint}, id {rdzv.run_id}, "
              f"{rdzv.nodes} nodes; each of the other {rdzv.nodes - 1} node(s) would run:\n  {join}\n"
              "(PORT and TOKEN, the run's secret, are chosen at launch)\nrun.sh (the recipe's run):", file=out)
        for line in shown_script(recipe.run.rstrip("\n")):
            print(f"  | {line}", file=out)
        print("(dry run with --launcher torchrun: nothing launched, nothing listening, nothing written)", file=out)
        raise Shown()
    started = dt.datetime.now(dt.UTC)
    run_dir = run_folder(target, started)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "run.sh").write_text(recipe.run, encoding="utf-8")
    node_script = run_dir / "node.sh"
    node_script.write_text(WRAPPER, encoding="utf-8")
    shown = (f"cd {shlex.quote(str(workdir))} && {shell_quote_env(dict(recipe.env))} bash {shlex.quote(str(node_script))}"
             f"   (its torchrun: c10d at {rdzv.endpoint}, id {rdzv.run_id}, {rdzv.nodes} nodes)")
    confirm(target, shown, out)
    host = rdzv.endpoint.rpartition(":")[0]  # the report address sits on the rendezvous host's interface
    token = new_token()
    collector = Collector(run_dir, out, bind_address(host), token)
    try:
        report = f"{host}:{collector.port}"
        join = _join_command(target, rdzv, report, token)
        print(f"rendezvous: c10d at {rdzv.endpoint}, id {rdzv.run_id}, {rdzv.nodes} nodes. On each of the other "
              f"{rdzv.nodes - 1} node(s), from the same checkout and Python at the same paths, run:\n"
              f"  {join}", file=out, flush=True)
        try:
            joined = collector.wait_for(rdzv.nodes - 1, options.timeout or 600.0)
        except TimeoutError as exc:
            raise RunFailed(f"{exc}; nothing trained, nothing written") from None
        own = node_checks.node_stack(target.gpus)
        stacks = [own] + [j.stack for j in joined]
        problems = [str(s["refused"]) for s in stacks if "refused" in s] or node_checks.differences(stacks)
        if problems:
            collector.answer(REFUSED + "; ".join(problems))
            raise PreflightRefused("; ".join(problems) + "; nothing trained, nothing written")
        collector.answer(OK)
        wl = recipe.workload
        own_log = run_dir / f"node-0-{own[node_checks.HOST_KEY]}.log"
        launched = run_script(node_script, dict(os.environ) | dict(recipe.env) | rdzv.env(), workdir, own_log,
                              target.fmt or "openrecipes", recipe.result.steps_per_run,
                              figures.step_tokens(wl.global_batch, wl.row_tokens), recipe.gpu.count,
                              options.timeout, out, progress=not options.json)
        collector.drain(30.0)
    finally:
        collector.close()
    log_path, log = node_checks.rank0_log(run_dir, target.fmt or "openrecipes")
    result = figures_of(target, log, launched.wall_seconds, launched.returncode)
    rank0 = stacks[int(log_path.stem.split("-")[1])]
    environment = {k: v for k, v in rank0.items() if k != node_checks.HOST_KEY}
    command = (f"on each of {rdzv.nodes} nodes: " + recorded_command(workdir, run_dir / "run.sh", dict(recipe.env),
                                                                      target.root) + " (torchrun: c10d rendezvous)")
    extra = {"launcher": {"name": "torchrun", "nodes": rdzv.nodes, "rendezvous": "c10d on the first node"},
             "nodes": node_checks.evidence_nodes(stacks)}
    return Measured(end_of_runs(target, [result], started.date()), "launch", command, log.nccl_version, tail(log_path),
                    environment, extra)
