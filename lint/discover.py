"""Which files to lint: the paths given, directories walked, excludes applied.

`discover` never raises for a path: a path that does not exist, a folder that
cannot be listed and a file that cannot be stat'ed are `problems` (the CLI
reports them and exits 2 after linting everything else); a file skipped for a
reason worth knowing is a `notice`.

While walking a folder:
- `SKIPPED_DIRS`, the config's `exclude`, and (unless `respect_gitignore` is
  off) what git ignores are pruned before descending (lint/gitignore.py);
- folders that training runs write (`checkpoint-500/`, `wandb/run-*`, Hydra's
  `outputs/<date>/`, ...) are pruned, and files they write are dropped
  (`is_run_artifact`);
- symlinks to folders are not followed (a link cycle, or a link to `/`, costs
  nothing); a symlink to a file is linted when it stays inside the project;
- only regular files are linted: a FIFO, socket or device (or a link to one)
  is skipped with a notice, and never opened (opening a FIFO blocks).

A file named on the command line is linted even when the config excludes it
(unless `force_exclude`: pre-commit names every file) and even when git
ignores it (as ruff does, `force_exclude` or not: git's ignore rules do not
apply to the tracked files pre-commit passes). Run artifacts, special files and
links leaving the project are skipped with a notice, named or not.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from collections.abc import Iterator

from .config import Configs, Settings
from .lazy_pattern import LazyPattern
from .lean_dataclass import field, lean_dataclass
from .sources import format_of, is_shell_script

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

# Folders no one wants linted; pruned before descending.
# https://bford.info/cachedir/: a folder holding this file is a cache, never a source of configs.
CACHE_TAG = "CACHEDIR.TAG"

SKIPPED_DIRS = {
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "node_modules", "__pycache__",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".batchlint_cache", "site-packages", ".eggs", "build", "dist",
    # The rest of ruff's default excludes; editors' folders hold JSON with comments (.vscode/launch.json).
    ".bzr", ".direnv", ".git-rewrite", ".ipynb_checkpoints", ".pants.d", ".pyenv", ".pytype", ".vscode",
    "__pypackages__", "_build", "buck-out", ".idea",
}


def display_path(path: str, root: str = "") -> str:
    """`path` relative to `root` (default: the working directory) when inside
    it, else as given; forward slashes, no leading `./`."""
    try:
        cwd = os.getcwd()
    except OSError:  # the working directory is gone: as before, without the cache
        return _display_path(path, root)
    return _cached_display_path(path, root, cwd)  # asked several times per file linted


@functools.lru_cache(maxsize=4096)
def _cached_display_path(path: str, root: str, cwd: str) -> str:
    return _display_path(path, root)  # `cwd` is part of the key: relative paths depend on it


def _display_path(path: str, root: str) -> str:
    absolute = os.path.abspath(path)
    root = os.path.abspath(root or os.getcwd())
    if absolute == root:
        return "."
    inside = root.rstrip(os.sep) + os.sep
    if absolute.startswith(inside):  # os.path.relpath's answer, without its second walk of both paths
        return absolute[len(inside):].lstrip(os.sep).replace(os.sep, "/") or "."  # POSIX keeps a leading //
    return os.path.normpath(path).replace(os.sep, "/")


@lean_dataclass
class Discovery:
    files: list = field(default_factory=list)  # to lint, in order: each path's files, paths in the order given
    notices: list = field(default_factory=list)  # one line each: skipped, and why (stderr `batchlint: notice: ...`)
    problems: list = field(default_factory=list)  # one line each: could not look (the CLI exits 2 after linting)


def discover(paths: list, settings: Settings | Configs, force_exclude: bool = False, respect_gitignore: bool = True,
             project=None) -> Discovery:
    """The files to lint under `paths`. Each folder's files come sorted by name, then its
    subfolders', each sorted (the order of `os.walk` with sorted lists); paths in the order
    given; a file reached twice (also through a link) only the first time. `project`
    (lint/project.py), when given, is the boundary a file symlink must not leave."""
    found = Discovery()
    seen: set = set()

    def add(path: str, key: str) -> None:
        if key not in seen:
            seen.add(key)
            found.files.append(path)

    for path in paths:
        try:
            info = os.stat(path)
        except OSError as exc:
            if os.path.lexists(path):  # a dangling link, a loop, a folder we may not search
                found.problems.append(f"cannot read {display_path(path)}: {exc.strerror or exc}")
            else:
                found.problems.append(f"no such file or directory: {path}")
            continue
        shown = display_path(path)
        real = os.path.realpath(path)
        if project is not None and real != os.path.abspath(path) and not project.contains(real):
            found.notices.append(f"skipped {shown}: it links outside the project")
            continue
        if stat.S_ISDIR(info.st_mode):
            if _artifact_parts(shown.split("/"), is_dir=True):
                found.notices.append(f"skipped {shown}: a folder training runs write, not configs")
                continue
            for file, key in _walk(path, real, shown, settings, respect_gitignore, project, found):
                add(file, key)
            continue
        name = os.path.basename(path)
        suffixless = "." not in name
        if not stat.S_ISREG(info.st_mode):
            found.notices.append(f"skipped {shown}: {_not_regular(info.st_mode)}")
            continue
        if not (format_of(path) or suffixless):
            continue
        if force_exclude and settings.excludes(path):
            continue
        if is_run_artifact(path):
            found.notices.append(f"skipped {shown}: written by a training run, not a config")
            continue
        if suffixless and not format_of(path) and not _shebang_script(path):
            continue
        add(path, real)
    return found


def _walk(top: str, real_top: str, shown_top: str, settings: Settings | Configs, respect_gitignore: bool, project,
          found: Discovery) -> Iterator[tuple]:
    """(path, real path) of each file to lint under the folder `top`."""
    from . import gitignore

    excluded = settings.excludes  # Settings, or config.Configs: each path by its nearest config

    # (folder, its real path, its path components as shown, its name, the ignore rules where it sits)
    parts = tuple(part for part in shown_top.split("/") if part != ".")
    outer = gitignore.above(top, found.notices) if respect_gitignore else None
    stack = [(top, real_top, parts, os.path.basename(real_top), outer)]
    while stack:
        folder, real_folder, parts, folder_name, outer = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            if folder == top:  # the path the user named: the run cannot do what was asked (exit 2)
                found.problems.append(f"cannot list {display_path(folder)}: {exc.strerror or exc}")
            else:  # met while walking: a notice, and the run goes on
                found.notices.append(f"skipped {display_path(folder)}: cannot list it ({exc.strerror or exc})")
            continue
        if any(entry.name == CACHE_TAG for entry in entries):
            continue  # a cache folder (batchlint's own, or any tool's that follows the convention)
        rules = None
        if respect_gitignore:
            names = {entry.name for entry in entries}
            rules = gitignore.enter(outer, folder, names, found.notices)
        subfolders = []
        for entry in entries:
            name = entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if (name in SKIPPED_DIRS or _artifact_dir(name, folder_name)
                        or (rules is not None and rules.ignored(name, True))
                        or excluded(entry.path)):
                    continue
                subfolders.append(entry)
                continue
            if not (format_of(name) or "." not in name) or _artifact_file(name, parts):
                continue
            if (rules is not None and rules.ignored(name, False)) or excluded(entry.path):
                continue
            path = entry.path
            shown = "/".join(parts + (name,))
            key = os.path.join(real_folder, name)
            try:
                if entry.is_symlink():
                    info = os.stat(path)
                    if stat.S_ISDIR(info.st_mode):
                        continue  # a link to a folder: not followed
                    key = os.path.realpath(path)
                    if project is not None and not project.contains(key):
                        found.notices.append(f"skipped {shown}: it links outside the project")
                        continue
                    regular = stat.S_ISREG(info.st_mode)
                else:
                    regular = entry.is_file(follow_symlinks=False)
                    if not regular:
                        info = entry.stat(follow_symlinks=False)
            except OSError as exc:  # a dangling link, a loop: a notice, as for any file that is not a config
                what = "a link to nothing" if os.path.islink(path) and not os.path.exists(path) else "cannot read it"
                found.notices.append(f"skipped {shown}: {what} ({exc.strerror or exc})")
                continue
            if regular and not os.access(path, os.R_OK):
                found.notices.append(f"skipped {shown}: not readable")
                continue
            if not regular:
                found.notices.append(f"skipped {shown}: {_not_regular(info.st_mode, entry.is_symlink())}")
                continue
            if "." not in name and not _shebang_script(path):
                continue
            yield path, key
        for entry in reversed(subfolders):  # popped in name order
            inner = rules.child(entry.name) if rules is not None else None
            stack.append((entry.path, os.path.join(real_folder, entry.name), parts + (entry.name,), entry.name, inner))


def _not_regular(mode: int, link: bool = False) -> str:
    from .project import kind_of

    return f"a link to {kind_of(mode)}, not a regular file" if link else f"not a regular file ({kind_of(mode)})"


def _shebang_script(path: str) -> bool:
    """A launch script without a suffix (`train`, `run`) that starts with a shell shebang.
    Read without blocking, and only when it is a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        head = os.read(fd, 128)
    except OSError:
        return False
    finally:
        os.close(fd)
    return is_shell_script(path, head)


# ---------------------------------------------------------------------------
# Files that training runs write. They look like configs (a Trainer's
# `checkpoint-500/config.json`, Hydra's `.hydra/config.yaml`, wandb's
# `files/config.yaml`) but are copies or records: never the source to fix.
# Matched on path components: folder names that only the tools create, and
# file names that only they write. Generic names (`runs/`, `outputs/`,
# `config.yaml`, `args.json`) are matched only where a tool puts them.

# Folders, wherever they are.
_RUN_DIR_NAMES = frozenset({
    ".hydra",            # Hydra: <run dir>/.hydra/{config,hydra,overrides}.yaml
    "lightning_logs",    # PyTorch Lightning: lightning_logs/version_<N>/hparams.yaml, config.yaml
    "mlruns",            # MLflow's local tracking store: mlruns/<exp>/<run>/meta.yaml, params/
    "mlartifacts",       # MLflow server's default artifact root
    "nemo_experiments",  # NeMo's exp_manager default: nemo_experiments/<name>/<date>/hparams.yaml
    "swanlog",           # SwanLab: swanlog/run-<date>/files/config.yaml
    ".aim",              # Aim's repository
})
_RUN_DIR = LazyPattern(
    r"checkpoint-\d+"           # transformers.Trainer (LLaMA-Factory, ms-swift, axolotl, TRL): checkpoint-500/
    r"|checkpoint_\d+"          # accelerate save_state with automatic_checkpoint_naming: checkpoints/checkpoint_3/
    r"|global_step\d+"          # DeepSpeed engine.save_checkpoint: global_step500/ (mp_rank_00_model_states.pt)
    r"|global_step_\d+"         # verl: checkpoints/<project>/<exp>/global_step_100/actor/
    r"|iter_\d{7}"              # Megatron-LM / NeMo: iter_0000500/
    r"|mp_rank_\d{2}(?:_\d{3})*"  # Megatron model-parallel shards inside iter_<N>/: mp_rank_00/, mp_rank_00_001/
    r"|step-\d+"                # torchtitan: outputs/checkpoint/step-1000/
    r"|epoch_\d+"               # torchtune checkpointers: <output_dir>/epoch_0/
    r"|.*\bstep=\d+.*"          # Lightning / NeMo 2 checkpoint folders: megatron_gpt--val_loss=2.1-step=500-...
    r"|v\d+-\d{8}-\d{6}"        # ms-swift run folder: output/v0-20240101-120000/ (args.json, checkpoint-N/)
)
_WANDB_RUN = LazyPattern(r"(?:offline-)?run-.+|latest-run|sweep-.+")  # under a folder named wandb
_HYDRA_DAY = LazyPattern(r"\d{4}-\d{2}-\d{2}")  # outputs/<%Y-%m-%d>/<%H-%M-%S>/, multirun/<date>/<time>/<job>/

# Files, wherever they are.
_RUN_FILE_NAMES = frozenset({
    "trainer_state.json",          # transformers.Trainer, in output_dir and every checkpoint-N/
    "all_results.json",            # Trainer.save_metrics (examples, LLaMA-Factory): all_results.json,
    "train_results.json",          #   {train,eval,predict,test}_results.json
    "eval_results.json",
    "predict_results.json",
    "test_results.json",
    "training_args.bin",           # Trainer's pickled TrainingArguments
    "trainer_log.jsonl",           # LLaMA-Factory's log callback
    "llamaboard_config.yaml",      # LLaMA-Factory web UI's saved form, in the output dir
    "swanlab_public_config.json",  # LLaMA-Factory with SwanLab, in the output dir
    "zero_to_fp32.py",             # copied by DeepSpeed into each checkpoint folder
    "latest",                      # DeepSpeed's pointer to the newest global_step<N>
    "multirun.yaml",               # Hydra: the sweep's config, at the top of multirun/<date>/<time>/
    "wandb-metadata.json",         # wandb, in run-*/files/
    "wandb-summary.json",
    # Written by save_pretrained into every checkpoint and model folder (tokenizers, weight indexes):
    # data, never a config, though a 50,000-token vocabulary may hold any marker's bytes.
    "vocab.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "generation_config.json",
    "preprocessor_config.json",
    "model.safetensors.index.json",
    "pytorch_model.bin.index.json",
})


# The tokenizers library's JSON (a tokenizer.json under any name: gpt-neox's tests/data/.../gpt2.json)
# starts with these keys, in this order (serde writes its fields as declared).
_TOKENIZER_HEAD = LazyPattern(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"version"\s*:\s*"[^"]*"\s*,\s*"truncation"\s*:')


def is_vocabulary(path: str, head: bytes) -> bool:
    """Whether the file at `path`, starting with the bytes `head`, is a tokenizer's vocabulary or
    tokenizers JSON: data, though its tokens may hold any marker. A launch line names one beside its
    config (`--vocab-file gpt2-vocab.json`): never a config to read."""
    name = os.path.basename(path)
    return name.endswith(("-vocab.json", "_vocab.json")) or name in ("vocab.json", "tokenizer.json") \
        or _TOKENIZER_HEAD.match(head) is not None


def is_run_artifact(path: str, shown: Optional[str] = None) -> bool:
    """Whether `path` is a file that a training run writes (a checkpoint's copy of a config,
    Hydra's record of a run, a logger's files), never a config to lint. Judged on the
    components of its path as shown (relative to the working directory when inside it;
    `shown`: display_path(path), when the caller has it)."""
    return _artifact_parts((shown or display_path(path)).split("/"), is_dir=False)


def _artifact_parts(parts: list, is_dir: bool) -> bool:
    folders = parts if is_dir else parts[:-1]
    for i, name in enumerate(folders):
        if _artifact_dir(name, folders[i - 1] if i else ""):
            return True
    return not is_dir and _artifact_file(parts[-1], tuple(parts[:-1]))


@functools.lru_cache(maxsize=4096)  # the same folders are asked of every file below them
def _artifact_dir(name: str, parent: str) -> bool:
    # Each run folder's pattern holds a digit: most folders are tried without compiling it.
    return (name in _RUN_DIR_NAMES or (any(c.isdigit() for c in name) and _RUN_DIR.fullmatch(name) is not None)
            or (parent == "wandb" and _WANDB_RUN.fullmatch(name) is not None)
            or (parent in ("outputs", "multirun") and _HYDRA_DAY.fullmatch(name) is not None))


def _artifact_file(name: str, folders: tuple) -> bool:
    if name in _RUN_FILE_NAMES or name.endswith(("-vocab.json", "_vocab.json")):  # Megatron's gpt2-vocab.json
        return True
    if name == "hparams.yaml":  # Lightning's loggers: <save_dir>/<name>/version_<N>/hparams.yaml
        return bool(folders) and re.fullmatch(r"version_\d+", folders[-1]) is not None
    if name == "training_args.yaml":  # LLaMA-Factory web UI: saves/<model>/<method>/<run>/training_args.yaml
        return "saves" in folders
    return False
