"""The editor's latency: from an edit to its diagnostics, as `batchlint server` computes them.

    python benchmarks/editor.py [N]

For each of the largest real configs of the corpus (a 600-700 line verl YAML, NeMo's GPT config), opened
with a launch script that runs it, N edits (default 40) are made one at a time to a value in the middle of
the file, and each is linted as the server lints a changed buffer (lint/server/session.py, the buffers as
overlays). Twice: in a small project (the config and its launch script), and in its own repository (the
corpus's copy of the framework's repository around it), where every lint searches the repository's
scripts for the callers of the file. Printed: the median and the 95th percentile of the lint's wall time, in milliseconds, and the
server's typing pause (lint/server/protocol.py TYPING_PAUSE), which an editor adds before the lint starts.
No LSP transport is timed: stdio framing costs well under a millisecond per message.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "corpus"))
LARGEST = (
    ("verl/verl/trainer/config/_generated_ppo_trainer.yaml",
     "python3 -m verl.trainer.main_ppo --config-path=conf --config-name=_generated_ppo_trainer "
     "trainer.n_gpus_per_node=8 trainer.nnodes=1\n"),
    ("nemo/examples/nlp/language_modeling/conf/megatron_gpt_config.yaml",
     "python megatron_gpt_pretraining.py --config-path=conf --config-name=megatron_gpt_config "
     "trainer.devices=8 trainer.num_nodes=1\n"),
)


def latencies(config: str, launch: str, edits: int, in_repository: bool = False) -> list:
    from batchlint import project
    from batchlint.server.session import Document, Session, key

    folder = tempfile.mkdtemp(prefix="batchlint-editor-")
    try:
        subprocess_free_git = os.path.join(folder, ".git")
        os.makedirs(subprocess_free_git)  # a repository's top: the project the server sees
        if in_repository:  # the framework's repository as the corpus has it, the config at its place
            top = config.split("/")[0]
            shutil.copytree(os.path.join(CORPUS, top), os.path.join(folder, top))
            path = os.path.join(folder, config)
            launch = launch.replace("--config-path=conf", f"--config-path={os.path.dirname(config)}")
            # A repository sits on disk before an editor opens it: past the file system's clock tick, when
            # a file's stamp tells whether it changed (lint/project.py RACY_NS).
            time.sleep(project.RACY_NS / 1e9)
        else:
            path = os.path.join(folder, "conf", os.path.basename(config))
            os.makedirs(os.path.dirname(path))
            shutil.copy(os.path.join(CORPUS, config), path)
        script = os.path.join(folder, "train.sh")
        with open(script, "w", encoding="utf-8") as handle:
            handle.write("#!/bin/bash\n" + launch)
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        lines = text.split("\n")
        middle = next(i for i in range(len(lines) // 2, len(lines)) if ": " in lines[i] and lines[i].strip()[0] != "#")
        session = Session()
        session.put(Document(script, "file://" + script, "#!/bin/bash\n" + launch, 1))
        session.put(Document(path, "file://" + path, text, 1))
        session.lint(key(path))  # opened: the first lint
        times = []
        for edit in range(edits):
            changed = list(lines)
            changed[middle] = changed[middle] + (" " if edit % 2 else "")  # a keystroke, then undone
            session.put(Document(path, "file://" + path, "\n".join(changed), edit + 2))
            start = time.perf_counter()
            session.lint(key(path))
            times.append((time.perf_counter() - start) * 1000)
        return times
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    from batchlint.server.protocol import TYPING_PAUSE

    edits = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    if not os.path.isdir(CORPUS):
        print("the corpus (../shared/corpus) is not here: nothing to measure")
        return
    print(f"typing pause before a lint: {TYPING_PAUSE * 1000:.0f} ms")
    for config, launch in LARGEST:
        lines = sum(1 for _ in open(os.path.join(CORPUS, config), encoding="utf-8"))
        for in_repository in (False, True):
            times = latencies(config, launch, edits, in_repository)
            p95 = statistics.quantiles(times, n=20)[-1]
            where = "in its repository" if in_repository else "in a small project"
            print(f"{config} ({lines} lines), {where}, with its launch script open: edit -> diagnostics p50 "
                  f"{statistics.median(times):.1f} ms, p95 {p95:.1f} ms (+ the pause: p95 {p95 + TYPING_PAUSE * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
