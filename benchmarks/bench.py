"""Measure batchlint against its speed budgets (issue 28), as ratios taken in one run; print the table.

    python benchmarks/bench.py              # everything, growth to ~48,000 files included (~10 minutes)
    python benchmarks/bench.py --quick      # without the growth
    python benchmarks/bench.py --instructions   # the one-file lints and the tree in instructions (valgrind)
    pip install -e '.[bench]'               # adds yamllint, the yardstick for the hook comparison

Needs ../shared/corpus for the tree, the editor and the growth (skipped without it) and downloads XTuner
0.2.0's configs once. Each number is the median of several runs of the real command line, start-up
included, as a user or pre-commit sees it: wall time, and CPU time (user + system of the child), which
a loaded machine disturbs less. The budgets, each a ratio taken in this same run:
- one file, every format (JSON, YAML, Python, TOML, a launch script): at most +50 ms of CPU over bare Python;
- the tree (the corpus and XTuner's configs) on one worker: at most 2.0x the CPU of merely parsing its
  files (`benchmarks/parse_only.py`: the same files through ast, libyaml, tomllib, json);
- the default worker count never slower in wall time than one worker; a warm `--cache-dir` run at most
  0.25x the parse's CPU;
- the editor: at most 50 ms p95 from an edit to its diagnostics (`benchmarks/editor.py`);
- `-w 8` at most 1.2x the CPU of the same run without it; growth linear in the files.
"""

from __future__ import annotations

import glob
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CORPUS = os.path.normpath(os.path.join(REPO, "..", "shared", "corpus"))
# Outside the repository: a tree inside it would be one project with batchlint's own tests (their scripts
# are in view of every config linted), which no user's tree is.
CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "batchlint-bench")
# One file of each format a pre-commit hook or an editor hands over alone.
ONE_FILE = ("examples/deepspeed/ds_zero2_fixed.json", "examples/swift/qwen2_5_sft_fixed.yaml",
            "examples/xtuner/internlm2_7b_sp4_sft_fixed.py", "examples/torchtitan/llama3_8b_fixed.toml",
            "examples/deepspeed/train.sh")


def small_project(example: str) -> str:
    """`example` in a project of its own: a git repository holding its folder of examples (its launch
    script beside it), as a user's small training repository. Linted where it stands, a file of this
    repository has batchlint's own tests in view: every script of them is searched for its callers and
    every install command for the release in force. The caller deletes the folder."""
    folder = tempfile.mkdtemp(prefix="batchlint-bench-one-")
    shutil.copytree(os.path.dirname(os.path.join(REPO, example)), os.path.join(folder, "configs"))
    subprocess.run(["git", "init", "-q", folder], check=True, capture_output=True)
    return os.path.join(folder, "configs", os.path.basename(example))


# As users run it: bytecode cached after the first run (some shells set
# PYTHONDONTWRITEBYTECODE, which would recompile every module on every run).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measured(command: list, runs: int) -> tuple:
    """Median (wall, CPU) seconds of `runs` executions (one warm-up run first)."""
    warm_up = subprocess.run(command, capture_output=True, env=ENV)
    # A crash or a missing install would be timed as fast: Python's traceback exits 1, as findings do.
    if warm_up.returncode not in (0, 1) or b"Traceback (most recent call last)" in warm_up.stderr:
        sys.exit(f"benchmark stopped: {' '.join(command[:3])} ... exited {warm_up.returncode}:\n"
                 f"{warm_up.stderr.decode(errors='replace')[-2000:]}")
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, env=ENV)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def instructions(command: list) -> float:
    """Millions of instructions the command runs, counted by valgrind's callgrind: the same on a
    busy machine as on a quiet one, where CPU time is not (slow: valgrind runs ~50x slower)."""
    with tempfile.TemporaryDirectory(prefix="batchlint-bench-") as folder:
        out = os.path.join(folder, "callgrind.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + command,
                       capture_output=True, env=ENV)
        with open(out, encoding="utf-8") as handle:
            for line in handle:
                if line.startswith(("summary:", "totals:")):
                    return int(line.split()[1]) / 1e6
    return float("nan")


def count_instructions(batchlint: list) -> None:
    """`bench.py --instructions`: the one-file lints in instructions over bare Python's, and the
    large tree on one worker over its parse (a few minutes: valgrind runs ~50x slower)."""
    bare = instructions([sys.executable, "-c", "pass"])
    print(f"python -c pass: {bare:.0f} M instructions")
    for example in ONE_FILE:
        path = small_project(example)
        try:
            command = batchlint + ["check", path]
            subprocess.run(command, capture_output=True, env=ENV)  # as measured(): bytecode written first
            lint = instructions(command)
        finally:
            shutil.rmtree(os.path.dirname(os.path.dirname(path)), ignore_errors=True)
        print(f"one file: {os.path.basename(example)}: +{lint - bare:.0f} M instructions over bare Python")
    # In a larger project (this repository: ~1,100 files, its tests' scripts in view), as pre-commit runs it:
    # the project-wide searches (the scripts that launch it, the install commands) are most of it.
    command = batchlint + ["check", os.path.join(REPO, ONE_FILE[1])]
    lint = instructions(command)
    print(f"one file in this repository: {ONE_FILE[1]}: +{lint - bare:.0f} M instructions over bare Python")
    trees = _trees()
    if trees:
        parse = instructions([sys.executable, os.path.join(HERE, "parse_only.py")] + trees)
        command = batchlint + ["check", "--exit-zero", "--jobs", "1"] + trees
        subprocess.run(command, capture_output=True, env=ENV)
        lint = instructions(command)
        print(f"large tree, 1 process: parse only {parse / 1000:.2f} G, batchlint {lint / 1000:.2f} G "
              f"instructions: {lint / parse:.2f}x (the budget, in CPU: 2.0x)")


def _trees() -> list:
    """The large tree: the corpus and XTuner 0.2.0's configs, those of them at hand."""
    trees = [CORPUS] if os.path.isdir(CORPUS) else []
    configs = xtuner_configs()
    return trees + [configs] if configs else trees


def timed(command: list, runs: int) -> float:
    return measured(command, runs)[0]


def xtuner_configs() -> str | None:
    """The configs folder of the xtuner 0.2.0 wheel, downloaded once into the user's cache folder."""
    target = os.path.join(CACHE, "xtuner-0.2.0")
    configs = os.path.join(target, "xtuner", "configs")
    if os.path.isdir(configs):
        return configs
    os.makedirs(target, exist_ok=True)
    result = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "xtuner==0.2.0", "-d", target],
        capture_output=True,
    )
    wheels = glob.glob(os.path.join(target, "xtuner-0.2.0-*.whl"))
    if result.returncode or not wheels:
        return None
    with zipfile.ZipFile(wheels[0]) as wheel:
        wheel.extractall(target, [n for n in wheel.namelist() if n.startswith("xtuner/configs/")])
    return configs


def w_cost(batchlint: list, rows: list) -> None:
    """What `-w` costs and how a run grows (issue 24): the corpus on one worker with and without `-w 8`,
    and four copies of it in one folder (one project: each config's name is in four times the files)."""
    if not os.path.isdir(CORPUS):
        return
    folder = tempfile.mkdtemp(prefix="batchlint-bench-copies-")
    try:
        for copy in range(4):
            shutil.copytree(CORPUS, os.path.join(folder, f"c{copy}"))
        one = measured(batchlint + ["check", "--exit-zero", "--jobs", "1", os.path.join(folder, "c0")], 3)[1]
        one_w = measured(batchlint + ["check", "--exit-zero", "--jobs", "1", "-w", "8", os.path.join(folder, "c0")], 3)[1]
        four = measured(batchlint + ["check", "--exit-zero", "--jobs", "1", folder], 3)[1]
        four_w = measured(batchlint + ["check", "--exit-zero", "--jobs", "1", "-w", "8", folder], 3)[1]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    rows.append(("corpus, 1 process: CPU with -w 8 / without", one_w, f"{one_w / one:.2f}x (budget 1.2x)"))
    rows.append(("4 copies of the corpus in one folder: CPU / one copy", four, f"{four / one:.2f}x (budget 4.6x)"))
    rows.append(("4 copies: CPU with -w 8 / without", four_w, f"{four_w / four:.2f}x (budget 1.2x)"))


def growth(batchlint: list, copies=(1, 4, 16, 64)) -> list:
    """CPU of one worker over N copies of the corpus in one folder (64 copies: ~48,000 files, launch
    scripts included), with and without `-w 8`: linear means the CPU per copy stays flat. Rows for the table."""
    rows: list = []
    if not os.path.isdir(CORPUS):
        return rows
    folder = tempfile.mkdtemp(prefix="batchlint-bench-growth-")
    try:
        made, first = 0, None
        for n in copies:
            for copy in range(made, n):
                shutil.copytree(CORPUS, os.path.join(folder, f"c{copy}"))
            made = n
            files = sum(len(names) for _, _, names in os.walk(folder))
            plain = measured(batchlint + ["check", "--exit-zero", "--jobs", "1", folder], 1)[1]
            given = measured(batchlint + ["check", "--exit-zero", "--jobs", "1", "-w", "8", folder], 1)[1]
            first = first or plain / n
            rows.append((f"growth: {n} copies of the corpus, {files} files, 1 process", plain,
                         f"CPU a copy {plain / n / first:.2f}x the first's (linear: 1.0); with -w 8 "
                         f"{given / plain:.2f}x (budget 1.2x)"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return rows


def editor_rows() -> list:
    """benchmarks/editor.py's latencies, edit -> diagnostics, on the corpus's largest verl and NeMo configs."""
    if not os.path.isdir(CORPUS):
        return []
    import editor  # benchmarks/editor.py, beside this script

    rows = []
    for config, launch in editor.LARGEST:
        for in_repository in (False, True):
            times = editor.latencies(config, launch, 40, in_repository)
            p95 = statistics.quantiles(times, n=20)[-1]
            where = "in its repository" if in_repository else "in a small project"
            rows.append((f"editor: edit -> diagnostics, {config.split('/')[-1]} {where}, launch script open",
                         statistics.median(times) / 1000, f"p50; p95 {p95:.0f} ms (budget p95 50 ms)"))
    return rows


def main() -> None:
    # The console script beside this interpreter (a venv's, as users run it), not a shell shim in front of it
    # (pyenv's), whose own start-up would be counted; else the one on PATH, else `python -m batchlint`.
    beside = os.path.join(os.path.dirname(sys.executable), "batchlint")
    found = beside if os.path.isfile(beside) else shutil.which("batchlint")
    batchlint = [found] if found else [sys.executable, "-m", "batchlint"]
    rows: list = []
    if "--growth" in sys.argv[1:]:
        rows = growth(batchlint)
        _print(rows)
        return
    if "--instructions" in sys.argv[1:] and "--w-cost" not in sys.argv[1:]:
        # valgrind follows an interpreter, not a shell shim (pyenv's) in front of the console script.
        count_instructions([sys.executable, "-m", "batchlint"])
        return
    if "--w-cost" in sys.argv[1:] and "--instructions" in sys.argv[1:]:
        if os.path.isdir(CORPUS):  # CPU time on a shared machine moves more than the 20% asked of -w
            plain = instructions(batchlint + ["check", "--exit-zero", "--jobs", "1", CORPUS])
            given = instructions(batchlint + ["check", "--exit-zero", "--jobs", "1", "-w", "8", CORPUS])
            print(f"corpus, 1 process: {plain / 1000:.2f} G instructions, with -w 8 {given / 1000:.2f} G: "
                  f"{given / plain:.2f}x (budget 1.2x)")
        return
    if "--w-cost" in sys.argv[1:]:
        w_cost(batchlint, rows)
        for label, seconds, note in rows:
            print(f"{label}  CPU {seconds * 1000:.0f} ms  {note}")
        return

    measure_all(batchlint, rows)
    _print(rows)


def measure_all(batchlint: list, rows: list) -> None:
    """Every budget's row, in one run."""
    version = subprocess.run(batchlint + ["--version"], capture_output=True, env=ENV)
    if version.returncode != 0:
        sys.exit(f"benchmark stopped: {' '.join(batchlint)} --version exited {version.returncode}; "
                 f"install batchlint first (pip install -e .)\n{version.stderr.decode(errors='replace')[-2000:]}")
    bare, bare_cpu = measured([sys.executable, "-c", "pass"], 20)
    rows.append(("python -c pass", bare, f"CPU {bare_cpu * 1000:.0f} ms"))
    rows.append(("batchlint --version", timed(batchlint + ["--version"], 20), ""))
    for example in ONE_FILE:
        path = small_project(example)
        try:
            wall, cpu = measured(batchlint + ["check", path], 20)
        finally:
            shutil.rmtree(os.path.dirname(os.path.dirname(path)), ignore_errors=True)
        rows.append((f"one file, in a small project: {os.path.basename(example)}", wall,
                     f"CPU +{(cpu - bare_cpu) * 1000:.0f} ms over bare Python (budget +50 ms)"))
    wall, cpu = measured(batchlint + ["check", os.path.join(REPO, ONE_FILE[1])], 10)
    rows.append((f"one file in this repository ({ONE_FILE[1]}: its tests' scripts in view)", wall,
                 f"CPU +{(cpu - bare_cpu) * 1000:.0f} ms over bare Python"))

    yaml_files = sorted(glob.glob(os.path.join(CORPUS, "llamafactory", "examples", "**", "*.yaml"), recursive=True))[:20]
    if len(yaml_files) == 20:
        hook = timed(batchlint + ["check", "--force-exclude"] + yaml_files, 10)
        rows.append(("batchlint on 20 YAML configs (the hook)", hook, ""))
        if shutil.which("yamllint"):
            yl = timed([shutil.which("yamllint")] + yaml_files, 10)
            rows.append(("yamllint on the same 20 files", yl, f"batchlint is {yl / hook:.1f}x faster"))
        else:
            rows.append(("yamllint on the same 20 files", float("nan"), "not installed: pip install yamllint"))

    trees = _trees()
    if trees:
        count = sum(len(files) for tree in trees for _, _, files in os.walk(tree))
        label = "corpus + XTuner configs" if len(trees) == 2 else "the trees at hand (corpus or XTuner wheel missing)"
        parse_wall, parse_cpu = measured([sys.executable, os.path.join(HERE, "parse_only.py")] + trees, 5)
        rows.append((f"{label}: parse only, 1 process", parse_wall, f"CPU {parse_cpu * 1000:.0f} ms"))
        one, one_cpu = measured(batchlint + ["check", "--exit-zero", "--jobs", "1"] + trees, 5)
        rows.append((f"{label}: {count} files, 1 process", one,
                     f"{count / one:.0f} files/s; CPU {one_cpu / parse_cpu:.2f}x parse only (budget 2.0x)"))
        whole = timed(batchlint + ["check", "--exit-zero"] + trees, 5)
        rows.append((f"{label}: {count} files, default workers", whole,
                     f"{count / whole:.0f} files/s, {one / whole:.2f}x the single process (budget >= 1)"))
        cache = tempfile.mkdtemp(prefix="batchlint-bench-cache-")
        try:
            cached = batchlint + ["check", "--exit-zero", "--cache-dir", cache] + trees
            start = time.perf_counter()
            subprocess.run(cached, capture_output=True, env=ENV)  # cold: fills the cache
            rows.append((f"{label}: cold run with --cache-dir (fills it)", time.perf_counter() - start, ""))
            warm, warm_cpu = measured(cached, 5)
            rows.append((f"{label}: warm rerun with --cache-dir", warm,
                         f"CPU {warm_cpu / parse_cpu:.2f}x parse only (budget 0.25x)"))
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    rows.extend(editor_rows())
    w_cost(batchlint, rows)
    if "--quick" not in sys.argv[1:]:
        rows.extend(growth(batchlint))



def _print(rows: list) -> None:
    width = max(len(r[0]) for r in rows)
    print(f"{'command'.ljust(width)}  {'median':>9}  note")
    for label, seconds, note in rows:
        print(f"{label.ljust(width)}  {seconds * 1000:7.0f} ms  {note}")
    # Other processes inflate CPU time too (shared caches, frequency): the load says how far to trust a run.
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\n{os.cpu_count()} CPUs, Python {sys.version.split()[0]}, load average {load:.2f} at the end")


if __name__ == "__main__":
    main()
