"""Fuzz batchlint: mutated real configs and a catalogue of hostile inputs,
each linted through `lint_file` with raw bytes, with W unknown and known.

    python fuzz/fuzz.py --count 20000 --seed 1 --jobs 2 [--save DIR] [--shared]

Seeds (fuzz/corpus.py): fuzz/seeds/, examples/, the configs in tests/ (files,
and strings written inline next to a file name), every rule's examples, and
with --shared the upstream corpus in ../shared/corpus. Mutations
(fuzz/mutate.py): hostile values swapped in where rules read them, key
renames, directives, unicode, nesting, long lines, byte damage. The catalogue
(fuzz/hostile.py) runs first.

Each input is linted with W unknown, W 8 (target global batch 64) and W 7; a
big one (over 64 kB) once; every third also through `explain -w 8 -w 7` with
its text and JSON output. Per input it measures: a crash (an exception
escaping, or a result whose error starts with "internal error"), named by the
innermost batchlint frame of its traceback (the "site"); the wall time of each
lint (over 2 s is a hang, named by where the lint was at 2 s); and the
worker's peak RSS over its size at start (over 500 MB is a memory failure, and the worker restarts).
A worker that does not answer within the per-input timeout, or grows past
KILL_MB, is asked where it is, killed and replaced. Each crash site gets one
minimal reproducer (delta debugging over lines, then characters). A site is
labelled by layer: reader (lint/sources), engine, or rules/frameworks.

The inputs depend only on --seed and the seed files, so a run over a given
tree is reproducible; `--only N` re-runs input N alone, `--hostile` only the
catalogue, and `--save DIR` writes every failing input, each site's
reproducer and summary.json.
"""

from __future__ import annotations

import argparse
import atexit
import itertools
import json
import multiprocessing
import multiprocessing.connection
import os
import random
import resource
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import corpus  # noqa: E402
import hostile  # noqa: E402
import mutate  # noqa: E402

REPO = corpus.REPO
HANG_SECONDS = 2.0
MEMORY_MB = 500
TIMEOUT_SECONDS = 8.0  # per input (all its W runs): past this the worker is killed
KILL_MB = 2000  # a worker past this is killed while it runs
# RLIMIT_AS of a worker over its size at start: an allocation past it is a
# MemoryError (with a traceback), not an exhausted machine.
ADDRESS_HEADROOM_MB = 6000
# (world size, target global batch) each input is linted with.
RUNS = ((None, None), (8, 64), (7, None))
BIG_BYTES = 64 << 10
BIG_RUNS = ((8, 64),)
# Every EXPLAIN_EVERY-th input also goes through `explain -w 8 -w 7` (and its text and JSON).
EXPLAIN = "explain"
EXPLAIN_WORLDS = (8, 7)
EXPLAIN_EVERY = 3
FAKE_DIR = os.path.join(REPO, "fuzz", ".inputs")  # never written: inputs are linted from memory


@dataclass
class Input:
    index: int  # -1 and below: the hostile catalogue
    name: str  # file name, whose suffix gives the format
    data: bytes
    origin: str  # the seed and mutations, or the catalogue entry
    path: str = ""  # where it is linted (a file name next to the configs it names)
    runs: tuple = RUNS

    @property
    def lint_path(self) -> str:
        return self.path or os.path.join(FAKE_DIR, self.name)


@dataclass
class Outcome:
    crash: Optional[str] = None  # the site
    detail: str = ""  # the traceback or error
    world: Optional[int] = None  # the W it crashed with
    seconds: float = 0.0  # the slowest lint of the input
    rss_mb: float = 0.0  # the worker's peak RSS after it
    hang: bool = False
    memory: bool = False
    killed: str = ""  # "timeout" | "memory" | "died"
    hang_site: str = ""  # where a slow or killed lint was (innermost batchlint frame)


# --------------------------------------------------------------------------- inputs


def generate(seed: int, count: int, seeds: list) -> list:
    """`count` fuzzed inputs; input i depends only on (seed, i) and the seed list."""
    return list(Fuzzed(seed, count, seeds))


class Fuzzed:
    """The fuzzed inputs as a sequence made on demand: a long run never holds them all."""

    def __init__(self, seed: int, count: int, seeds: list):
        self.seed, self.count, self.seeds = seed, count, seeds
        self.by_format: dict = {}
        for s in seeds:
            self.by_format.setdefault(corpus.fmt_of(s.name), []).append(s)

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int) -> Input:
        if not 0 <= index < self.count:
            raise IndexError(index)
        return make_input(self.seed, index, self.seeds, self.by_format)


def make_input(seed: int, index: int, seeds: list, by_format: dict) -> Input:
    rng = random.Random(f"{seed}:{index}")
    base = rng.choice(seeds)
    fmt = corpus.fmt_of(base.name)
    others = [s.data.decode("utf-8", "replace") for s in rng.sample(by_format[fmt], min(2, len(by_format[fmt])))]
    data, applied = mutate.mutate(rng, base.data, fmt, others)
    runs = RUNS if len(data) <= BIG_BYTES else BIG_RUNS  # parsing dominates a big input: once is enough
    if index % EXPLAIN_EVERY == 0 and len(data) <= BIG_BYTES:
        runs += ((EXPLAIN, 64),)
    return Input(index, base.name, data, f"{base.origin} + {'+'.join(applied)}", base.path, runs)


def catalogue() -> list:
    return [Input(-1 - i, entry.name, entry.data, f"hostile:{entry.key}", runs=entry.runs)
            for i, entry in enumerate(hostile.CATALOGUE)]


# --------------------------------------------------------------------------- linting one input


_LINT = None


def _lint_setup():
    """Import batchlint once per process, and keep each crash's traceback even
    when the engine turns it into an "internal error" result."""
    global _LINT
    if _LINT is not None:
        return _LINT
    from batchlint import engine
    from batchlint.config import Settings
    from batchlint.rules import RULES

    seen = {"tb": None}
    original = engine.check_file
    if not getattr(original, "_fuzz_wrapped", False):
        def check_file(*args, **kwargs):
            try:
                return original(*args, **kwargs)
            except BaseException:
                seen["tb"] = sys.exc_info()
                raise

        check_file._fuzz_wrapped = True
        engine.check_file = check_file
    _LINT = (engine, Settings, RULES, seen)
    return _LINT


def lint_once(item: Input, world, target) -> tuple:
    """(site or None, detail, seconds) of one lint of `item` (or of `explain`
    with W 8 and 7, for the run whose world is EXPLAIN)."""
    if world == EXPLAIN:
        return explain_once(item, target)
    engine, Settings, RULES, seen = _lint_setup()
    seen["tb"] = None
    options = engine.Options(world_size=world, global_batch=target)
    start = time.perf_counter()
    try:
        with _slow_watch():
            result = engine.lint_file(item.lint_path, Settings(root=REPO), options, RULES, raw=item.data)
    except (MemoryError, KeyboardInterrupt):
        raise  # a memory failure, for the caller to record; or the user stopping the run
    except BaseException as exc:  # noqa: BLE001 - everything that escapes is the finding
        return site_of(exc.__traceback__, exc), _format(exc), time.perf_counter() - start
    elapsed = time.perf_counter() - start
    error = getattr(result, "error", None)
    if isinstance(error, str) and error.startswith("internal error"):
        if seen["tb"] is not None:
            _, exc, tb = seen["tb"]
            return site_of(tb, exc), _format(exc) + "\n" + error, elapsed
        return "engine: " + error.splitlines()[0][:200], error, elapsed
    return None, "", elapsed


_SCRATCH = {"dir": None}


def explain_once(item: Input, target) -> tuple:
    """`batchlint explain -w 8 -w 7` on `item` as the CLI runs it: written to a
    scratch folder (explain reads files), the table built as text and JSON."""
    from batchlint import project
    from batchlint.config import Settings
    from batchlint.explain import as_json, as_text, explain

    folder = os.path.join(_scratch(), str(os.getpid()))
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, item.name)
    with open(path, "wb") as handle:
        handle.write(item.data)
    settings = Settings(root=folder)
    start = time.perf_counter()
    try:
        with _slow_watch(), project.using(project.find_project([path], settings)):
            found = explain(path, settings, EXPLAIN_WORLDS, target)
            as_text(found, EXPLAIN_WORLDS)
            json.dumps(as_json(found, EXPLAIN_WORLDS))
    except (MemoryError, KeyboardInterrupt):
        raise
    except OSError:
        pass  # the CLI reports an unreadable file as such
    except BaseException as exc:  # noqa: BLE001
        return site_of(exc.__traceback__, exc), _format(exc), time.perf_counter() - start
    return None, "", time.perf_counter() - start


def _scratch() -> str:
    if _SCRATCH["dir"] is None:
        _SCRATCH["dir"] = tempfile.mkdtemp(prefix="batchlint-fuzz-")
        atexit.register(shutil.rmtree, _SCRATCH["dir"], True)
    return _SCRATCH["dir"]


# Where a slow lint was when it passed HANG_SECONDS (sampled by a timer signal),
# and who to tell (a worker tells the parent at once, in case it is then killed).
_SLOW = {"site": None, "notify": None}


class _slow_watch:
    """Sample the stack once when the lint passes HANG_SECONDS (main thread only)."""

    def __enter__(self):
        self.armed = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
        if self.armed:
            self.previous = signal.signal(signal.SIGALRM, _on_slow)
            signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
        return self

    def __exit__(self, *exc):
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
        return False


def _on_slow(signum, frame):
    _SLOW["site"] = site_of_frames(traceback.extract_stack(frame), "slow")
    if _SLOW["notify"] is not None:
        _SLOW["notify"](_SLOW["site"])


def run_input(item: Input) -> Outcome:
    """Lint `item` with each of its (W, target) runs, in this process."""
    outcome = Outcome()
    for world, target in item.runs:
        _SLOW["site"] = None
        try:
            site, detail, seconds = lint_once(item, world, target)
        except MemoryError as exc:
            outcome.memory = True
            outcome.hang_site = site_of(exc.__traceback__, exc)
            outcome.detail = f"MemoryError with W={world}"
            outcome.world = world
            break
        outcome.seconds = max(outcome.seconds, seconds)
        if seconds > HANG_SECONDS:
            outcome.hang = True
            outcome.hang_site = outcome.hang_site or _SLOW["site"] or "?"
            outcome.world = world if outcome.crash is None else outcome.world
        if site is not None and outcome.crash is None:
            outcome.crash, outcome.detail, outcome.world = site, detail, world
    return outcome


def _format(exc: BaseException) -> str:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return text if len(text) < 20_000 else text[:8000] + "\n...\n" + text[-8000:]


_PACKAGE_DIRS = None
_VALUE_MODULES = (os.sep + "document.py", os.sep + "plan.py")


def site_of(tb, exc: BaseException) -> str:
    """`file:line function (ExceptionType)` of the innermost batchlint frame."""
    return site_of_frames(traceback.extract_tb(tb), type(exc).__name__)


def site_of_frames(frames, kind: str) -> str:
    global _PACKAGE_DIRS
    if _PACKAGE_DIRS is None:
        import batchlint
        import batchlint.rules

        _PACKAGE_DIRS = (os.path.dirname(os.path.abspath(batchlint.__file__)),
                         os.path.dirname(os.path.abspath(batchlint.rules.__file__)))
    ours = [f for f in frames if os.path.abspath(f.filename).startswith(_PACKAGE_DIRS)]
    if kind in ("slow", "stopped"):  # a sampled stack: name the code at work, not a value class it builds
        ours = [f for f in ours if not f.filename.endswith(_VALUE_MODULES)] or ours
    frame = ours[-1] if ours else (frames[-1] if frames else None)
    if frame is None:
        return f"? ({kind})"
    name = os.path.abspath(frame.filename)
    # Outside batchlint (what the CLI does with its result, e.g. json.dumps): named by file.
    name = os.path.relpath(name, REPO) if name.startswith(REPO + os.sep) else "outside:" + os.path.basename(name)
    return f"{name}:{frame.lineno} {frame.name} ({kind})"


# --------------------------------------------------------------------------- workers


def _worker(conn, parent_end):
    """Lint inputs until told to stop; report each outcome with the process's peak RSS.
    A lint still running after HANG_SECONDS, or asked by SIGUSR1, reports where it is
    at once (("where", site)), since the parent may kill it next."""
    parent_end.close()  # forked with it: held open here, it would hide the parent's exit
    parent = os.getppid()
    _lint_setup()
    try:
        limit = (_vm_mb() + ADDRESS_HEADROOM_MB) << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError):
        pass
    # A forked worker maps its parent's pages: its RSS starts at the parent's (a long test session's
    # hundreds of MB). What an input costs is the peak over that start, the peak reset where Linux can.
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        pass
    start_mb = _rss_now_mb()
    _SLOW["notify"] = lambda site: conn.send(("where", site))
    signal.signal(signal.SIGUSR1, lambda signum, frame: conn.send(
        ("where", site_of_frames(traceback.extract_stack(frame), "stopped"))))
    while True:
        try:
            while not conn.poll(1.0):
                if os.getppid() != parent:
                    return  # the parent is gone (killed): so is the run
            item = conn.recv()
        except (EOFError, OSError):
            return
        if item is None:
            return
        outcome = run_input(item)
        outcome.rss_mb = max(0.0, _peak_mb() - start_mb)
        conn.send(outcome)


def _rss_now_mb() -> float:
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1 << 20)
    except (OSError, ValueError, IndexError):
        return 0.0


def _peak_mb() -> float:
    """The process's peak RSS since start or since its reset (VmHWM), else getrusage's."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _vm_mb() -> int:
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE") >> 20
    except (OSError, ValueError, IndexError):
        return 0


def diagnose_memory(item: Input) -> str:
    """Where `item` allocates its memory: rerun it in a worker allowed only
    MEMORY_MB more address space, so the allocation past it raises MemoryError."""
    global ADDRESS_HEADROOM_MB
    saved, ADDRESS_HEADROOM_MB = ADDRESS_HEADROOM_MB, MEMORY_MB
    try:
        outcome = run_isolated(item)
    finally:
        ADDRESS_HEADROOM_MB = saved
    return outcome.hang_site if outcome.memory else ""


class Worker:
    def __init__(self, context):
        self.context = context
        self.start()

    def start(self):
        self.conn, child = self.context.Pipe()
        self.process = self.context.Process(target=_worker, args=(child, self.conn), daemon=True)
        self.process.start()
        child.close()
        self.item = None
        self.started = 0.0
        self.where = ""

    def submit(self, item: Input):
        self.item, self.started, self.where = item, time.monotonic(), ""
        self.conn.send(item)

    def rss_mb(self) -> float:
        try:
            with open(f"/proc/{self.process.pid}/statm") as handle:
                return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1 << 20)
        except (OSError, ValueError, IndexError):
            return 0.0

    def receive(self):
        """The outcome of the running input, or None after a ("where", site) note."""
        message = self.conn.recv()
        if isinstance(message, tuple) and message and message[0] == "where":
            self.where = message[1]
            return None
        return message

    def stop_running(self, outcome: Outcome) -> Outcome:
        """Ask the stuck worker where it is, then kill and replace it."""
        try:
            os.kill(self.process.pid, signal.SIGUSR1)
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline and self.conn.poll(max(0.0, deadline - time.monotonic())):
                message = self.receive()
                if message is None and "stopped" in self.where:
                    break
        except (OSError, EOFError):
            pass
        outcome.hang_site = self.where or "?"
        self.restart()
        return outcome

    def restart(self):
        self.kill()
        self.start()

    def kill(self):
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.conn.close()

    def stop(self):
        try:
            self.conn.send(None)
        except (OSError, BrokenPipeError):
            pass
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)


def run_all(inputs, jobs: int, progress=None, on_result=None) -> dict:
    """index -> Outcome for every input (any iterable of Inputs, consumed as the
    workers take them), run in `jobs` worker processes; `on_result(item, outcome)`
    as each finishes."""
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    own_scratch = _SCRATCH["dir"] is None
    _scratch()  # made here, so workers (which exit without cleaning up) share it and it is removed below
    workers = [Worker(context) for _ in range(max(1, jobs))]
    pending = iter(inputs)
    left = True
    results: dict = {}
    done = 0
    try:
        while left or any(w.item is not None for w in workers):
            for worker in workers:
                if worker.item is None and left:
                    item = next(pending, None)
                    if item is None:
                        left = False
                    else:
                        worker.submit(item)
            busy = [w for w in workers if w.item is not None]
            ready = multiprocessing.connection.wait([w.conn for w in busy], timeout=0.05)
            for worker in busy:
                item = worker.item
                outcome = None
                if worker.conn in ready:
                    try:
                        outcome = worker.receive()
                    except (EOFError, OSError):
                        outcome = Outcome(killed="died", memory=True, hang_site=worker.where,
                                          detail=f"worker died (exit {worker.process.exitcode})")
                        worker.restart()
                    if outcome is not None and worker.item is not None:
                        worker.item = None
                        if outcome.rss_mb > MEMORY_MB or outcome.memory:
                            outcome.memory = True
                            worker.restart()
                elif time.monotonic() - worker.started > TIMEOUT_SECONDS:
                    outcome = worker.stop_running(Outcome(hang=True, killed="timeout", seconds=TIMEOUT_SECONDS,
                                                          detail=f"no answer in {TIMEOUT_SECONDS:.0f} s: killed"))
                elif (rss := worker.rss_mb()) > KILL_MB:
                    outcome = worker.stop_running(Outcome(memory=True, killed="memory", rss_mb=rss,
                                                          detail=f"RSS {rss:.0f} MB while running: killed"))
                if outcome is not None:
                    results[item.index] = outcome
                    if on_result is not None:
                        on_result(item, outcome)
                    done += 1
                    if progress and done % 1000 == 0:
                        progress(done)
    finally:
        for worker in workers:
            worker.stop()
        if own_scratch:
            shutil.rmtree(_SCRATCH["dir"], ignore_errors=True)
            _SCRATCH["dir"] = None
    return results


def run_isolated(item: Input, timeout: float = TIMEOUT_SECONDS) -> Outcome:
    """One input in a fresh worker (for tests that must survive a memory or time bomb)."""
    global TIMEOUT_SECONDS
    saved, TIMEOUT_SECONDS = TIMEOUT_SECONDS, timeout
    try:
        return run_all([item], 1)[item.index]
    finally:
        TIMEOUT_SECONDS = saved


# --------------------------------------------------------------------------- minimising


def minimise(item: Input, site: str, world, target, budget: int = 150, isolate: bool = True) -> Input:
    """A smaller input that still crashes at `site`: ddmin over lines, then over characters."""
    runs = ((world, target),)
    tries = [0]

    def still_fails(data: bytes) -> bool:
        if tries[0] >= budget:
            return False
        tries[0] += 1
        candidate = Input(item.index, item.name, data, item.origin, item.path, runs)
        outcome = run_isolated(candidate, timeout=10) if isolate else run_input(candidate)
        return outcome.crash == site

    data = item.data
    for split in (lambda d: d.splitlines(keepends=True), lambda d: [d[i:i + 1] for i in range(len(d))]):
        parts = split(data)
        if len(parts) > 20_000:  # characters of a big input: halve it by lines first
            continue
        parts = _ddmin(parts, lambda ps: still_fails(b"".join(ps)))
        data = b"".join(parts)
    return Input(item.index, item.name, data, item.origin, item.path, runs)


def _ddmin(parts: list, test) -> list:
    chunks = 2
    while len(parts) >= 2:
        size = max(1, len(parts) // chunks)
        reduced = False
        for start in range(0, len(parts), size):
            complement = parts[:start] + parts[start + size:]
            if complement and test(complement):
                parts = complement
                chunks = max(chunks - 1, 2)
                reduced = True
                break
        if not reduced:
            if chunks >= len(parts):
                break
            chunks = min(len(parts), chunks * 2)
    return parts


# --------------------------------------------------------------------------- reporting


@dataclass
class Summary:
    inputs: int = 0
    lints: int = 0
    crashes: int = 0
    sites: dict = field(default_factory=dict)  # site -> [Input, Outcome, count]
    hangs: list = field(default_factory=list)
    memory: list = field(default_factory=list)
    peak_rss: float = 0.0
    slowest: tuple = (0.0, None)
    seconds: float = 0.0
    failed: list = field(default_factory=list)  # (Input, Outcome) of every crash, hang and memory failure

    def add(self, item: Input, outcome: Outcome):
        if outcome.crash or outcome.hang or outcome.memory:
            self.failed.append((item, outcome))
        self.inputs += 1
        self.lints += len(item.runs)
        self.peak_rss = max(self.peak_rss, outcome.rss_mb)
        if outcome.seconds > self.slowest[0]:
            self.slowest = (outcome.seconds, item.origin)
        if outcome.crash:
            self.crashes += 1
            entry = self.sites.setdefault(outcome.crash, [item, outcome, 0])
            entry[2] += 1
            if len(item.data) < len(entry[0].data):  # keep the smallest input per site
                entry[0], entry[1] = item, outcome
        if outcome.hang:
            self.hangs.append((item, outcome))
        if outcome.memory:
            self.memory.append((item, outcome))


def layer(site: str) -> str:
    """Which part of batchlint a site is in: reader (lint/sources), engine, or ours."""
    path = site.split(":", 1)[0]
    if path.startswith(os.path.join("lint", "sources") + os.sep):
        return "reader"
    if path in (os.path.join("lint", n) for n in ("engine.py", "directives.py", "cli.py", "discover.py")) \
            or site.startswith("engine:"):
        return "engine"
    return "rules/frameworks"


def by_site(entries: list) -> dict:
    """site -> [(Input, Outcome)], for hangs and memory failures."""
    grouped: dict = {}
    for item, outcome in entries:
        grouped.setdefault(outcome.hang_site or "?", []).append((item, outcome))
    return grouped


def describe(item: Input, limit: int = 600) -> str:
    shown = repr(item.data if len(item.data) <= limit else item.data[:limit])
    more = "" if len(item.data) <= limit else f" ... ({len(item.data)} bytes in all)"
    return f"{item.name} [{item.origin}]: {shown}{more}"


def reproducer(item: Input, world, target=None) -> str:
    data = item.data if len(item.data) <= 2000 else item.data[:2000]
    tail = "" if len(item.data) <= 2000 else f"  # first 2000 of {len(item.data)} bytes: see --save"
    if world == EXPLAIN:
        return (f"# write these bytes to {item.name}, then: batchlint explain {item.name} -w 8 -w 7 "
                f"--global-batch {target}\n{data!r}{tail}")
    return (f"lint_file({item.name!r}, Settings(), Options(world_size={world!r}, global_batch={target!r}), RULES,\n"
            f"          raw={data!r}){tail}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--save", metavar="DIR", help="write every failing input and each site's reproducer here")
    parser.add_argument("--shared", action="store_true", help="also use ../shared/corpus as seeds, when present")
    parser.add_argument("--no-hostile", action="store_true", help="skip the hostile catalogue")
    parser.add_argument("--hostile", action="store_true", help="run only the hostile catalogue")
    parser.add_argument("--only", type=int, metavar="N", help="run only fuzzed input N (and print it)")
    parser.add_argument("--no-minimise", action="store_true", help="report crash inputs as found")
    args = parser.parse_args(argv)

    started = time.monotonic()
    seeds = corpus.load(shared=args.shared)
    if args.only is not None:
        by_format: dict = {}
        for s in seeds:
            by_format.setdefault(corpus.fmt_of(s.name), []).append(s)
        item = make_input(args.seed, args.only, seeds, by_format)
        print(describe(item, 4000))
        outcome = run_isolated(item)
        print(outcome.crash or "no crash", f"{outcome.seconds:.2f} s", f"{outcome.rss_mb:.0f} MB", outcome.hang_site)
        print(outcome.detail)
        return 1 if outcome.crash or outcome.hang or outcome.memory else 0

    hostile_inputs = [] if args.no_hostile else catalogue()
    fuzzed = Fuzzed(args.seed, 0 if args.hostile else args.count, seeds)
    total = len(hostile_inputs) + len(fuzzed)
    print(f"{len(seeds)} seeds; {total} inputs ({len(hostile_inputs)} hostile), "
          f"up to {len(RUNS)} lints each; {args.jobs} worker(s)", flush=True)

    def progress(done):
        print(f"  {done}/{total} in {time.monotonic() - started:.0f} s", flush=True)

    summary = Summary()
    run_all(itertools.chain(hostile_inputs, fuzzed), args.jobs, progress, on_result=summary.add)
    run_seconds = time.monotonic() - started

    saved = args.save
    if saved:
        os.makedirs(saved, exist_ok=True)
    report = {"inputs": summary.inputs, "lints": summary.lints, "crashes": summary.crashes,
              "sites": [], "hangs": [], "memory": []}
    for number, (site, (item, outcome, count)) in enumerate(sorted(summary.sites.items())):
        print(f"\n== crash site {number + 1} [{layer(site)}]: {site}  ({count} inputs)")
        small = item
        if not args.no_minimise:
            small = minimise(item, site, outcome.world, dict(item.runs).get(outcome.world))
        print(f"  input {item.index} from {item.origin}, W={outcome.world}")
        print("  " + reproducer(small, outcome.world, dict(item.runs).get(outcome.world)).replace("\n", "\n  "))
        last = [line for line in outcome.detail.strip().splitlines() if line.strip()][-1:]
        print(f"  -> {last[0] if last else ''}")
        report["sites"].append({"site": site, "layer": layer(site), "count": count, "world": outcome.world,
                                "name": small.name, "origin": item.origin,
                                "reproducer": small.data.decode("utf-8", "surrogateescape"),
                                "traceback": outcome.detail})
        if saved:
            _write(saved, f"site{number + 1:02d}-{small.name}", small.data)
    memory_sites = {}
    for item, outcome in summary.memory[:10]:  # where the memory went: rerun under a tight limit
        if outcome.hang_site in ("", "?"):
            outcome.hang_site = diagnose_memory(item) or "?"
        memory_sites[item.index] = outcome.hang_site
    for label, entries in (("hang", summary.hangs), ("memory", summary.memory)):
        for site, group in sorted(by_site(entries).items()):
            item, outcome = group[0]
            print(f"\n== {label} [{layer(site)}]: {site}  ({len(group)} inputs)")
            for item, outcome in group[:3]:
                print(f"  input {item.index}: {outcome.seconds:.1f} s, {outcome.rss_mb:.0f} MB {outcome.killed}".rstrip())
                print("    " + describe(item, 200))
            report["hangs" if label == "hang" else "memory"].append(
                {"site": site, "layer": layer(site), "count": len(group),
                 "inputs": [{"index": i.index, "origin": i.origin, "name": i.name, "seconds": round(o.seconds, 2),
                             "rss_mb": round(o.rss_mb), "killed": o.killed} for i, o in group]})
    summary.seconds = time.monotonic() - started

    print()
    print(f"inputs          {summary.inputs} ({summary.lints} lints)")
    print(f"crashes         {summary.crashes}")
    readers = sum(1 for s in summary.sites if layer(s) == "reader")
    print(f"distinct sites  {len(summary.sites)} ({readers} in lint/sources)")
    print(f"hangs (> {HANG_SECONDS:.0f} s)    {len(summary.hangs)}"
          f" ({sum(1 for _, o in summary.hangs if layer(o.hang_site) == 'reader')} in lint/sources)")
    print(f"> {MEMORY_MB} MB        {len(summary.memory)}"
          f" ({sum(1 for _, o in summary.memory if layer(o.hang_site) == 'reader')} in lint/sources)")
    print(f"peak RSS        {summary.peak_rss:.0f} MB")
    if summary.slowest[1] is not None:
        print(f"slowest input   {summary.slowest[0]:.2f} s ({summary.slowest[1]})")
    print(f"total time      {summary.seconds:.0f} s ({run_seconds:.0f} s linting)")

    if saved:
        for item, outcome in summary.failed:
            kind = "crash" if outcome.crash else "hang" if outcome.hang else "memory"
            _write(saved, f"{kind}-{item.index}-{item.name}", item.data)
        report.update(peak_rss_mb=round(summary.peak_rss), seconds=round(summary.seconds))
        with open(os.path.join(saved, "summary.json"), "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=1)
    return 1 if summary.crashes or summary.hangs or summary.memory else 0


def _write(folder: str, name: str, data: bytes):
    with open(os.path.join(folder, name.replace(os.sep, "_")), "wb") as handle:
        handle.write(data)


if __name__ == "__main__":
    sys.exit(main())
