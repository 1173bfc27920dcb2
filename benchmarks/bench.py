"""Measure batchlint's cold start and throughput; print a table for the README.

    python benchmarks/bench.py            # needs ../shared/corpus; downloads the XTuner wheel once
    pip install -e '.[bench]'             # adds yamllint, the yardstick for the hook comparison

Each number is the median wall time of several runs of the real command line,
so it includes interpreter start-up, as a user or pre-commit sees it.
"""

from __future__ import annotations

import glob
import os
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
CACHE = os.path.join(REPO, ".cache")


# As users run it: bytecode cached after the first run (some shells set
# PYTHONDONTWRITEBYTECODE, which would recompile every module on every run).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(command: list, runs: int) -> float:
    """Median seconds of `runs` executions (one warm-up run first)."""
    subprocess.run(command, capture_output=True, env=ENV)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, env=ENV)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def xtuner_configs() -> str | None:
    """The configs folder of the xtuner 0.2.0 wheel, downloaded once into .cache/."""
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


def main() -> None:
    batchlint = [sys.executable, "-m", "batchlint"]
    if shutil.which("batchlint"):
        batchlint = [shutil.which("batchlint")]
    rows = []

    bare = timed([sys.executable, "-c", "pass"], 20)
    version = timed(batchlint + ["--version"], 20)
    rows.append(("python -c pass", bare, ""))
    rows.append(("batchlint --version", version, f"+{(version - bare) * 1000:.0f} ms over bare Python"))

    yaml_files = sorted(glob.glob(os.path.join(CORPUS, "llamafactory", "examples", "**", "*.yaml"), recursive=True))[:20]
    if len(yaml_files) == 20:
        hook = timed(batchlint + ["check", "--force-exclude"] + yaml_files, 10)
        rows.append(("batchlint on 20 YAML configs (the hook)", hook, ""))
        if shutil.which("yamllint"):
            yl = timed([shutil.which("yamllint")] + yaml_files, 10)
            rows.append(("yamllint on the same 20 files", yl, f"batchlint is {yl / hook:.1f}x faster"))
        else:
            rows.append(("yamllint on the same 20 files", float("nan"), "not installed: pip install yamllint"))

    trees = [CORPUS] if os.path.isdir(CORPUS) else []
    configs = xtuner_configs()
    if configs:
        trees.append(configs)
    if trees:
        count = sum(len(files) for tree in trees for _, _, files in os.walk(tree))
        label = "corpus + XTuner configs" if configs else "corpus only (XTuner wheel not available)"
        one = timed(batchlint + ["check", "--exit-zero", "--jobs", "1"] + trees, 5)
        rows.append((f"{label}: {count} files, 1 process", one, f"{count / one:.0f} files/s"))
        whole = timed(batchlint + ["check", "--exit-zero"] + trees, 5)
        rows.append((f"{label}: {count} files, default (one per core)", whole,
                     f"{count / whole:.0f} files/s, {one / whole:.2f}x the single process"))
        cache = tempfile.mkdtemp(prefix="batchlint-bench-cache-")
        cached = batchlint + ["check", "--exit-zero", "--cache-dir", cache] + trees
        start = time.perf_counter()
        subprocess.run(cached, capture_output=True, env=ENV)  # cold: fills the cache
        cold = time.perf_counter() - start
        rows.append((f"{label}: cold run with --cache-dir (fills it)", cold, ""))
        warm = timed(cached, 5)
        rows.append((f"{label}: warm rerun with --cache-dir", warm, f"{warm / cold:.2f} of the cold run"))
        shutil.rmtree(cache, ignore_errors=True)

    width = max(len(r[0]) for r in rows)
    print(f"{'command'.ljust(width)}  {'median':>9}  note")
    for label, seconds, note in rows:
        print(f"{label.ljust(width)}  {seconds * 1000:7.0f} ms  {note}")
    print(f"\n{os.cpu_count()} CPUs, Python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
