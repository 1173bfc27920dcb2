"""Discovery: which files a run lints (lint/discover.py, lint/gitignore.py).

Every tree is built in tmp_path; the git ones are `git init`ed (skipped when
git is missing). Paths are given relative to the tree, as a user types them.
"""

import os
import shutil
import stat
import subprocess
import sys
import textwrap
import threading

import pytest

from batchlint.config import Settings
from batchlint.discover import Discovery, discover, display_path, is_run_artifact
from batchlint.project import Project, find_project, git_root

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


def make(root, *paths, text="x: 1\n"):
    for path in paths:
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(text)


def git_init(root):
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def run(paths, root, **kwargs):
    """discover() from inside `root`, its settings anchored there; files as given."""
    settings = Settings(root=str(root))
    found = discover(list(paths), settings, **kwargs)
    assert isinstance(found, Discovery)
    return found


def names(found):
    return [os.path.normpath(f).replace(os.sep, "/") for f in found.files]


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def repo(tree):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    git_init(tree)
    return tree


# --- .gitignore ----------------------------------------------------------------------------------------


def test_a_gitignored_folder_is_not_linted(repo):
    make(repo, "train.yaml", "wandb_old/run.yaml", "logs/a/b.yaml", "scratch.tmp.yaml")
    (repo / ".gitignore").write_text("wandb_old/\n/logs\n*.tmp.yaml\n")
    assert names(run(["."], repo)) == ["train.yaml"]


def test_negation_re_includes(repo):
    make(repo, "gen/a.yaml", "gen/keep.yaml", "data/x.json", "data/keep/y.json")
    (repo / ".gitignore").write_text("gen/*.yaml\n!gen/keep.yaml\ndata/*\n!data/keep/\n")
    assert names(run(["."], repo)) == ["data/keep/y.json", "gen/keep.yaml"]


def test_a_file_in_an_excluded_folder_cannot_be_re_included(repo):
    make(repo, "out/keep.yaml", "out/other.yaml")
    (repo / ".gitignore").write_text("out/\n!out/keep.yaml\n")  # as git: the folder is gone, and all in it
    assert names(run(["."], repo)) == []


def test_a_nested_gitignore_applies_to_its_folder_and_below(repo):
    make(repo, "top.json", "sub/a.json", "sub/deep/b.json", "sub/local.yaml", "sub/deep/local.yaml",
         "other/local.yaml", "sub/x/only_here.yaml", "x/only_here.yaml")
    (repo / "sub" / ".gitignore").write_text("*.json\n/local.yaml\nx/\n")  # /local.yaml: sub/local.yaml only
    assert names(run(["."], repo)) == ["top.json", "other/local.yaml", "sub/deep/local.yaml", "x/only_here.yaml"]


def test_a_deeper_gitignore_wins(repo):
    make(repo, "a.json", "sub/a.json", "sub/b.json")
    (repo / ".gitignore").write_text("*.json\n")
    (repo / "sub" / ".gitignore").write_text("!a.json\n")
    assert names(run(["."], repo)) == ["sub/a.json"]


def test_double_star_and_directory_only_patterns(repo):
    make(repo, "a/gen/x.yaml", "a/b/gen/y.yaml", "c/gen", "keep/z.yaml", "tmp/q/r.yaml", "tmp/s.yaml")
    (repo / ".gitignore").write_text("**/gen/\ntmp/**\n")  # gen/: folders only, so the file c/gen stays
    assert names(run(["."], repo)) == ["keep/z.yaml"]
    (repo / "c" / "gen").write_text("#!/bin/bash\ntorchrun train.py\n")
    assert names(run(["."], repo)) == ["c/gen", "keep/z.yaml"]


def test_git_info_exclude(repo):
    make(repo, "mine.yaml", "local/notes.yaml")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("local/\n")
    assert names(run(["."], repo)) == ["mine.yaml"]


def test_gitignores_above_the_walked_folder_apply(repo):
    make(repo, "configs/a.yaml", "configs/gen/b.yaml", "configs/sub/gen/c.yaml")
    (repo / ".gitignore").write_text("gen/\n")
    (repo / "configs" / ".gitignore").write_text("/sub/\n")
    assert names(run(["configs"], repo)) == ["configs/a.yaml"]
    assert names(run([os.path.join("configs", "sub")], repo)) == []  # named: walked, but gen/ still ignored


def test_respect_gitignore_false_lints_ignored_files(repo):
    make(repo, "train.yaml", "gen/a.yaml")
    (repo / ".gitignore").write_text("gen/\n")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("train.yaml\n")
    assert names(run(["."], repo)) == []
    assert names(run(["."], repo, respect_gitignore=False)) == ["train.yaml", "gen/a.yaml"]


def test_a_file_named_explicitly_is_linted_even_when_ignored(repo):
    make(repo, "gen/a.yaml", "b.yaml")
    (repo / ".gitignore").write_text("gen/\nb.yaml\n")
    assert names(run(["gen/a.yaml", "b.yaml"], repo)) == ["gen/a.yaml", "b.yaml"]
    # Like ruff, also with force_exclude (which applies the config's exclude): pre-commit names
    # tracked files, and git's ignore rules do not apply to tracked files.
    assert names(run(["gen/a.yaml"], repo, force_exclude=True)) == ["gen/a.yaml"]


def test_a_folder_named_explicitly_is_walked_even_when_ignored(repo):
    make(repo, "gen/a.yaml", "gen/b.tmp.yaml")
    (repo / ".gitignore").write_text("gen/\n*.tmp.yaml\n")
    assert names(run(["gen"], repo)) == ["gen/a.yaml"]


def test_outside_a_git_repository_gitignore_is_not_read(tree):
    # As ruff: its walker (the `ignore` crate) needs a .git for .gitignore files to count.
    if git_root(str(tree)) is not None:
        pytest.skip("the temporary folder is inside a git repository")
    make(tree, "a.yaml", "gen/b.yaml")
    (tree / ".gitignore").write_text("gen/\n")
    assert names(run(["."], tree)) == ["a.yaml", "gen/b.yaml"]


@needs_git
def test_a_repository_nested_in_the_walk_has_its_own_rules(tree):
    if git_root(str(tree)) is not None:
        pytest.skip("the temporary folder is inside a git repository")
    make(tree, "plain/gen/a.yaml", "plain/b.yaml", "repo/gen/c.yaml", "repo/d.yaml", "repo/inner/gen/e.yaml",
         "repo/inner/f.yaml", "repo/inner/g.yaml")
    (tree / "plain" / ".gitignore").write_text("gen/\n")  # not a repository: not read
    git_init(tree / "repo")
    (tree / "repo" / ".gitignore").write_text("gen/\n")
    git_init(tree / "repo" / "inner")  # a repository inside: the outer rules stop at it
    (tree / "repo" / "inner" / ".gitignore").write_text("g.yaml\n")
    assert names(run(["."], tree)) == ["plain/b.yaml", "plain/gen/a.yaml", "repo/d.yaml", "repo/inner/f.yaml",
                                       "repo/inner/gen/e.yaml"]


def test_an_ignored_folder_is_never_listed(repo, monkeypatch):
    make(repo, "a.yaml", *(f"wandb_dump/{i}/config.yaml" for i in range(50)))
    (repo / ".gitignore").write_text("wandb_dump/\n")
    listed = []
    scandir = os.scandir

    def counting(path="."):
        listed.append(os.path.basename(os.path.abspath(path)))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", counting)
    assert names(run(["."], repo)) == ["a.yaml"]
    assert "wandb_dump" not in listed and len(listed) == 1


@needs_fifo
def test_a_fifo_named_gitignore_does_not_hang_the_walk(repo):
    make(repo, "a.yaml")
    os.mkfifo(repo / ".gitignore")
    found = guarded(lambda: run(["."], repo))
    assert names(found) == ["a.yaml"]
    assert any(".gitignore" in n and "not applied" in n for n in found.notices)


def test_pathspec_is_not_imported_for_named_files(repo):
    make(repo, "a.yaml")
    (repo / ".gitignore").write_text("*.json\n")
    code = textwrap.dedent("""
        import sys
        from batchlint.config import Settings
        from batchlint.discover import discover
        found = discover(["a.yaml"], Settings(root="."))
        assert found.files == ["a.yaml"], found
        assert "pathspec" not in sys.modules
        discover(["."], Settings(root="."))
        assert "pathspec" in sys.modules
    """)
    subprocess.run([sys.executable, "-c", code], cwd=repo, check=True)


# --- only regular files ---------------------------------------------------------------------------------


def guarded(call, seconds=20):
    """call(), failing the test instead of hanging when it blocks (a FIFO opened)."""
    result = []
    worker = threading.Thread(target=lambda: result.append(call()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "discovery blocked"
    return result[0]


@needs_fifo
def test_a_fifo_is_skipped_with_a_notice_walked_or_named(tree):
    make(tree, "a.yaml")
    os.mkfifo(tree / "pipe.yaml")
    os.mkfifo(tree / "train")  # no suffix: would be opened to look for a shebang
    found = guarded(lambda: run(["."], tree))
    assert names(found) == ["a.yaml"]
    assert sorted(found.notices) == ["skipped pipe.yaml: not a regular file (a FIFO)",
                                     "skipped train: not a regular file (a FIFO)"]
    named = guarded(lambda: run(["pipe.yaml", "train", "a.yaml"], tree))
    assert names(named) == ["a.yaml"]
    assert named.notices == ["skipped pipe.yaml: not a regular file (a FIFO)",
                             "skipped train: not a regular file (a FIFO)"]
    assert named.problems == []


@needs_fifo
def test_a_symlink_to_a_fifo_is_skipped(tree):
    os.mkfifo(tree / "pipe.bin")  # not a config's name: not looked at itself
    os.symlink("pipe.bin", tree / "link.yaml")
    found = guarded(lambda: run(["."], tree))
    assert found.files == []
    assert found.notices == ["skipped link.yaml: a link to a FIFO, not a regular file"]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_a_symlink_to_dev_zero_is_skipped(tree):
    make(tree, "a.yaml")
    os.symlink("/dev/zero", tree / "zero.yaml")
    found = guarded(lambda: run(["."], tree))
    assert names(found) == ["a.yaml"]
    assert found.notices == ["skipped zero.yaml: a link to a character device, not a regular file"]
    named = guarded(lambda: run(["zero.yaml"], tree))
    assert named.files == [] and named.notices == ["skipped zero.yaml: not a regular file (a character device)"]
    # With a project, /dev/zero is first of all outside it.
    bounded = guarded(lambda: run(["."], tree, project=Project((os.path.realpath(str(tree)),))))
    assert bounded.notices == ["skipped zero.yaml: it links outside the project"]


def test_a_symlink_to_a_file_outside_the_project_is_skipped(tmp_path, monkeypatch):
    project_dir, outside = tmp_path / "proj", tmp_path / "elsewhere"
    make(project_dir, "a.yaml", "shared/b.yaml")
    make(outside, "secret.yaml")
    os.symlink(outside / "secret.yaml", project_dir / "leak.yaml")
    os.symlink(project_dir / "shared" / "b.yaml", project_dir / "inside.yaml")
    monkeypatch.chdir(project_dir)
    project = Project((os.path.realpath(str(project_dir)),))
    found = run(["."], project_dir, project=project)
    assert names(found) == ["a.yaml", "inside.yaml"]  # shared/b.yaml is inside.yaml's target: once
    assert found.notices == ["skipped leak.yaml: it links outside the project"]
    named = run(["leak.yaml", "a.yaml"], project_dir, project=project)
    assert names(named) == ["a.yaml"] and named.notices == ["skipped leak.yaml: it links outside the project"]
    # Without a project there is no boundary to leave.
    assert names(run(["leak.yaml"], project_dir)) == ["leak.yaml"]


def test_the_project_find_project_gives_keeps_links_inside(tree):
    make(tree, "a.yaml")
    os.symlink(tree / "a.yaml", tree / "b.yaml")
    settings = Settings(root=str(tree))
    found = discover(["b.yaml"], settings, project=find_project(["b.yaml"], settings))
    assert found.files == ["b.yaml"] and found.notices == []


def test_directory_symlinks_are_not_followed(tree):
    make(tree, "real/a.yaml")
    os.symlink(tree / "real", tree / "alias")
    os.symlink(tree, tree / "real" / "loop")
    assert names(run(["."], tree)) == ["real/a.yaml"]
    # A folder named explicitly through a link is walked (its files are already seen here: once).
    assert names(run(["alias", "real"], tree)) == ["alias/a.yaml"]


# --- problems: reported, the rest still found ----------------------------------------------------------


def test_a_missing_path_is_a_problem_and_the_others_are_still_found(tree):
    make(tree, "a.yaml", "sub/b.yaml")
    found = run(["nope/", "a.yaml", "missing.yaml", "sub"], tree)
    assert names(found) == ["a.yaml", "sub/b.yaml"]
    assert found.problems == ["no such file or directory: nope/", "no such file or directory: missing.yaml"]


def test_a_dangling_symlink_met_walking_is_a_notice_and_named_a_problem(tree):
    """Met while walking (a link to a folder or file not checked out) it is skipped with a notice:
    the run's exit code is not changed by it. Named by the user, it cannot be checked (exit 2)."""
    make(tree, "a.yaml")
    os.symlink(tree / "gone.yaml", tree / "dangling.yaml")
    os.symlink(tree / "not-checked-out", tree / "vendored")
    found = run(["."], tree)
    assert names(found) == ["a.yaml"]
    assert found.problems == []
    assert found.notices == ["skipped dangling.yaml: a link to nothing (No such file or directory)",
                             "skipped vendored: a link to nothing (No such file or directory)"]
    named = run(["dangling.yaml"], tree)
    assert named.problems == ["cannot read dangling.yaml: No such file or directory"]


def test_a_folder_that_cannot_be_listed_is_a_problem(tree, monkeypatch):
    make(tree, "a.yaml", "locked/b.yaml", "z/c.yaml")
    scandir = os.scandir

    def refusing(path="."):
        if os.path.basename(os.path.normpath(path)) == "locked":
            raise PermissionError(13, "Permission denied", path)
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    found = run(["."], tree)
    assert names(found) == ["a.yaml", "z/c.yaml"]
    assert found.problems == [] and found.notices == ["skipped locked: cannot list it (Permission denied)"]
    named = run(["locked", "a.yaml"], tree)
    assert names(named) == ["a.yaml"] and named.problems == ["cannot list locked: Permission denied"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads folders whatever their mode")
def test_a_folder_without_permissions_is_a_problem(tree):
    make(tree, "a.yaml", "locked/b.yaml")
    os.chmod(tree / "locked", 0)
    try:
        found = run(["."], tree)
    finally:
        os.chmod(tree / "locked", stat.S_IRWXU)
    assert names(found) == ["a.yaml"]
    assert found.notices == ["skipped locked: cannot list it (Permission denied)"]


# --- order -------------------------------------------------------------------------------------------------


def test_order_is_the_paths_as_given_each_walked_in_sorted_order(tree):
    make(tree, "b/z.yaml", "b/a.yaml", "b/m/x.yaml", "a/y.yaml", "c.yaml")
    assert names(run(["b", "c.yaml", "a"], tree)) == ["b/a.yaml", "b/z.yaml", "b/m/x.yaml", "c.yaml", "a/y.yaml"]
    assert names(run(["a", "c.yaml", "b"], tree)) == ["a/y.yaml", "c.yaml", "b/a.yaml", "b/z.yaml", "b/m/x.yaml"]


def test_duplicates_are_removed_by_real_path(tree):
    make(tree, "a.yaml", "sub/b.yaml")
    os.symlink(tree / "sub" / "b.yaml", tree / "b_link.yaml")
    found = run(["sub/b.yaml", ".", "./a.yaml", "b_link.yaml", "sub"], tree)
    assert names(found) == ["sub/b.yaml", "a.yaml"]


# --- run artifacts ---------------------------------------------------------------------------------------


def test_files_training_runs_write_are_not_linted(tree):
    make(tree, "ds_config.json", "configs/hydra/config.yaml", "trainer_state.json",
         "out/checkpoint-500/ds_config.json", "out/checkpoint-500/config.json", "out/checkpoint-500/zero_to_fp32.py",
         "out/checkpoint-500/global_step500/mp_rank_00_model_states.json",
         "outputs/2024-01-01/12-00-00/.hydra/config.yaml", "outputs/2024-01-01/12-00-00/.hydra/overrides.yaml",
         "multirun/2024-01-01/12-00-00/0/.hydra/config.yaml", "multirun/2024-01-01/12-00-00/multirun.yaml",
         "wandb/run-20240101_120000-abc123/files/config.yaml", "wandb/latest-run/files/config.yaml",
         "lightning_logs/version_0/hparams.yaml", "logs/exp/version_3/hparams.yaml", "mlruns/0/meta.yaml",
         "saves/llama3/lora/train_2024/training_args.yaml", "saves/llama3/lora/train_2024/llamaboard_config.yaml",
         "output/v0-20240101-120000/args.json", "ckpt/global_step_100/actor/config.json",
         "ckpt/iter_0000100/mp_rank_00/x.json", "out/all_results.json", "out/train_results.json",
         "out/eval_results.json")
    make(tree, "out/checkpoint-500/latest", text="global_step500")
    assert names(run(["."], tree)) == ["ds_config.json", "configs/hydra/config.yaml"]


def test_tokenizer_and_weight_index_files_are_data_not_configs(tree):
    """A 50,000-token vocabulary holds any marker's bytes: it was past the reading limit (BL003)."""
    make(tree, "ds_config.json", "tests/assets/vocab.json", "model/tokenizer.json", "model/tokenizer_config.json",
         "model/special_tokens_map.json", "model/generation_config.json", "model/model.safetensors.index.json",
         "tests/unit/gpt2-vocab.json", "data/bert_vocab.json")
    assert names(run(["."], tree)) == ["ds_config.json"]


def test_a_run_artifact_named_explicitly_is_skipped_with_a_notice(tree):
    make(tree, "train.yaml", "out/trainer_state.json", "out/checkpoint-500/ds_config.json")
    found = run(["out/trainer_state.json", "out/checkpoint-500/ds_config.json", "train.yaml", "out/checkpoint-500"],
                tree)
    assert names(found) == ["train.yaml"]
    assert found.notices == [
        "skipped out/trainer_state.json: written by a training run, not a config",
        "skipped out/checkpoint-500/ds_config.json: written by a training run, not a config",
        "skipped out/checkpoint-500: a folder training runs write, not configs",
    ]


@pytest.mark.parametrize("path", [
    "trainer_state.json",
    "out/checkpoint-500/config.json",
    "out/checkpoint-500/ds_config.json",
    "out/checkpoint_3/custom.json",  # accelerate save_state
    "ckpt/global_step500/zero_pp_rank_0_mp_rank_00_optim_states.json",
    "ckpt/global_step_10/actor/huggingface/config.json",  # verl
    "ckpt/iter_0001000/mp_rank_00/model.json",  # Megatron
    "outputs/checkpoint/step-1000/x.json",  # torchtitan
    "out/epoch_0/config.json",  # torchtune
    "nemo/ckpts/megatron_gpt--val_loss=2.10-step=500-consumed_samples=8000.0/context/model.yaml",
    "outputs/2024-01-01/12-00-00/.hydra/config.yaml",
    "outputs/2024-01-01/12-00-00/train.yaml",
    "multirun/2024-05-06/07-08-09/3/.hydra/hydra.yaml",
    "sweeps/x/.hydra/config.yaml",
    "multirun.yaml",
    "wandb/run-20240101_120000-abc123/files/config.yaml",
    "wandb/offline-run-20240101_120000-abc123/files/config.yaml",
    "wandb/latest-run/files/config.yaml",
    "files/wandb-summary.json",
    "lightning_logs/version_0/hparams.yaml",
    "lightning_logs/version_0/config.yaml",
    "tb/my_model/version_12/hparams.yaml",
    "mlruns/0/1234abcd/meta.yaml",
    "nemo_experiments/gpt/2024-01-01_12-00-00/hparams.yaml",
    "saves/Qwen2-7B/lora/train_2024-01-01/training_args.yaml",
    "saves/Qwen2-7B/lora/train_2024-01-01/llamaboard_config.yaml",
    "output/v0-20240101-120000/args.json",
    "output/qwen/v12-20241231-235959/checkpoint-50/args.json",
    "out/checkpoint-500/zero_to_fp32.py",
    "zero_to_fp32.py",
    "out/all_results.json",
    "out/eval_results.json",
    "out/train_results.json",
    "trainer_log.jsonl",
])
def test_is_run_artifact(path):
    assert is_run_artifact(path)


@pytest.mark.parametrize("path", [
    "ds_config.json",
    "configs/hydra/config.yaml",
    "conf/config.yaml",
    "configs/wandb/default.yaml",  # a Hydra config group named wandb
    "wandb/config.yaml",
    "configs/checkpoint/default.yaml",
    "configs/checkpoints.yaml",
    "runs/exp1/config.yaml",  # runs/ holds real configs in some repos
    "outputs/config.yaml",
    "outputs/train.yaml",
    "experiments/2024-01-01/train.yaml",
    "args.json",
    "configs/args.json",
    "training_args.yaml",
    "configs/training_args.yaml",
    "hparams.yaml",
    "configs/hparams.yaml",
    "tutorial/step_1/config.yaml",
    "examples/deepspeed/ds_z3_config.json",
    "config.json",
    "scripts/latest_release.sh",
])
def test_is_not_run_artifact(path):
    assert not is_run_artifact(path)


def test_is_run_artifact_judges_the_path_below_the_working_directory(tmp_path, monkeypatch):
    inside = tmp_path / "checkpoint-7" / "repo"
    make(inside, "configs/a.yaml")
    monkeypatch.chdir(inside)
    assert not is_run_artifact("configs/a.yaml")
    assert not is_run_artifact(str(inside / "configs" / "a.yaml"))
    assert names(run(["."], inside)) == ["configs/a.yaml"]


# --- the rest of discovery, unchanged ---------------------------------------------------------------------


def test_shebang_scripts_excludes_and_skipped_dirs(tree):
    make(tree, "train", text="#!/bin/bash\ntorchrun train.py\n")
    make(tree, "notes", text="just text\n")
    make(tree, "node_modules/x.json", "legacy/old.yaml", "a.yaml", "README.md", ".vscode/launch.json", ".idea/x.json")
    settings = Settings(root=str(tree), exclude=("legacy",))
    assert discover(["."], settings).files == ["./a.yaml", "./train"]  # editors' folders are skipped, as ruff does
    assert discover(["legacy/old.yaml", "README.md", "notes"], settings).files == ["legacy/old.yaml"]
    assert discover(["legacy/old.yaml"], settings, force_exclude=True).files == []


def test_display_path_is_kept():
    assert display_path(os.path.join(os.getcwd(), "a", "b.yaml")) == "a/b.yaml"


@pytest.mark.skipif(os.sep != "/", reason="POSIX paths")
@pytest.mark.parametrize("path, root, shown", [
    ("/srv/repo/a/b.yaml", "/srv/repo", "a/b.yaml"),
    ("/srv/repo/./a//b.yaml", "/srv/repo/", "a/b.yaml"),
    ("/srv/repo", "/srv/repo", "."),
    ("/srv/repo/a/../b.yaml", "/srv/repo", "b.yaml"),
    ("/srv/repository/b.yaml", "/srv/repo", "/srv/repository/b.yaml"),  # a sibling sharing the prefix
    ("/other/./b.yaml", "/srv/repo", "/other/b.yaml"),
    ("//x.yaml", "/", "x.yaml"),  # POSIX keeps a leading //: still inside /
    ("//", "/", "."),
])
def test_display_path_is_relative_to_the_root_when_inside_it(path, root, shown):
    """As os.path.relpath tells a path inside the root, and the path as given (normalised) outside."""
    assert display_path(path, root) == shown
    inside = os.path.abspath(path) == os.path.abspath(root) or os.path.abspath(path).startswith(root.rstrip("/") + "/")
    assert shown == (os.path.relpath(os.path.abspath(path), root) if inside else os.path.normpath(path))
