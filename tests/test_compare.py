"""`batchlint explain --compare REV`: on a temporary git repository, each kind of change a review
asks "what does this do to the global batch?" about, and the changes that move nothing."""

import json
import os
import shutil
import subprocess

import pytest

from conftest import run

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

# ms-swift SFT: 2 x 8 x (W 8 / sp 1) = 128 sequences per step when train.sh launches it.
SWIFT = """\
# ms-swift SFT
model: Qwen/Qwen2.5-7B-Instruct
tuner_type: lora
max_length: 4096
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
sequence_parallel_size: 1
output_dir: output
"""
TRAIN = """\
#!/bin/bash
NPROC_PER_NODE=8 \\
swift sft \\
    --config configs/sft.yaml
"""
# DeepSpeed's own launcher on 8 GPUs: 4 x 4 x 8 = 128.
DS = """\
{
  "train_batch_size": 128,
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 4,
  "zero_optimization": {"stage": 2}
}
"""
DS_TRAIN = """\
#!/bin/bash
deepspeed --num_gpus 8 train.py --deepspeed configs/ds.json
"""
TRL = """\
model_name_or_path: Qwen/Qwen2.5-0.5B
dataset_name: trl-lib/Capybara
max_length: 2048
per_device_train_batch_size: 4
gradient_accumulation_steps: 4
output_dir: out
"""


def git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True, timeout=60).stdout


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A training repository at its first commit; the test changes its work tree."""
    files = {"configs/sft.yaml": SWIFT, "train.sh": TRAIN, "configs/ds.json": DS, "ds_train.sh": DS_TRAIN,
             "configs/trl.yaml": TRL, "README.md": "# training\n"}
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.name", "test")
    git(tmp_path, "config", "user.email", "test@example.com")
    git(tmp_path, "config", "commit.gpgsign", "false")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "first")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def edit(repo, name, old, new):
    path = repo / name
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def compare(*args, fmt="json"):
    result = run("explain", "--compare", *args, "--output-format", fmt)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout) if fmt == "json" else result.stdout


def moved(changes, config):
    """{row name: (old, new)} of the explanation titled `config`."""
    [change] = [c for c in changes if c["config"] == config]
    return {r["name"]: (r["old"], r["new"]) for r in change["rows"]}


def test_a_raised_sp_moves_the_global_batch_of_the_script_that_launches_it(repo):
    edit(repo, "configs/sft.yaml", "sequence_parallel_size: 1", "sequence_parallel_size: 4")
    changes = compare("HEAD")
    # Once: as the job that runs it (its rows hold the config's own), not again as the config alone.
    assert [(c["path"], c["status"]) for c in changes] == [("train.sh", "changed")]
    launched = moved(changes, "configs/sft.yaml, as launched by swift with W=8 at train.sh:2")
    assert launched == {"sequence parallel degree": (1, 4), "data parallel dp": (8, 2),
                        "global batch (sequences/step)": (128, 32), "tokens per optimizer step": (128 * 4096, 32 * 4096)}
    rows = {r["name"]: r for r in changes[0]["rows"]}
    assert rows["sequence parallel degree"]["source"] == "sequence_parallel_size, line 7"
    assert rows["global batch (sequences/step)"]["because"] == ["sequence_parallel_size, line 7: 1 -> 4"]


def test_the_text_shows_old_and_new_with_the_cause(repo):
    edit(repo, "configs/sft.yaml", "sequence_parallel_size: 1", "sequence_parallel_size: 4")
    text = compare("HEAD", "train.sh", fmt="text")
    assert text == (
        "configs/sft.yaml, as launched by swift with W=8 at train.sh:2  [swift]\n"
        "  sequence parallel degree                   1 -> 4   (sequence_parallel_size, line 7)\n"
        "  data parallel dp                           8 -> 2   (dp: derived: W (8) / sequence_parallel_size (4))\n"
        "  global batch (sequences/step)           128 -> 32   (sequence_parallel_size, line 7: 1 -> 4)\n"
        "  tokens per optimizer step      524,288 -> 131,072   (sequence_parallel_size, line 7: 1 -> 4)\n")


def test_a_changed_gpu_count_in_a_launch_script(repo):
    edit(repo, "train.sh", "NPROC_PER_NODE=8", "NPROC_PER_NODE=16")
    changes = compare("HEAD")
    assert [c["path"] for c in changes] == ["train.sh"]  # the config itself did not change
    assert moved(changes, "configs/sft.yaml, as launched by swift with W=16 at train.sh:2") == {
        "world size W": (8, 16), "data parallel dp": (8, 16), "global batch (sequences/step)": (128, 256),
        "tokens per optimizer step": (128 * 4096, 256 * 4096)}
    w = changes[0]["rows"][0]
    assert w["source"] == "from the launch line: NPROC_PER_NODE 16 (train.sh:2)" and "old_source" not in w


def test_a_halved_micro_batch(repo):
    edit(repo, "configs/sft.yaml", "per_device_train_batch_size: 2", "per_device_train_batch_size: 1")
    changes = compare("HEAD", "train.sh")
    assert moved(changes, "configs/sft.yaml, as launched by swift with W=8 at train.sh:2") == {
        "micro batch (per GPU)": (2, 1), "global batch (sequences/step)": (128, 64),
        "tokens per optimizer step": (128 * 4096, 64 * 4096)}
    assert changes[0]["rows"][1]["because"] == ["per_device_train_batch_size, line 5: 2 -> 1"]


def test_halving_the_micro_batch_and_doubling_accumulation_moves_no_global_batch(repo):
    edit(repo, "configs/sft.yaml", "per_device_train_batch_size: 2\ngradient_accumulation_steps: 8",
         "per_device_train_batch_size: 1\ngradient_accumulation_steps: 16")
    rows = moved(compare("HEAD", "train.sh"), "configs/sft.yaml, as launched by swift with W=8 at train.sh:2")
    assert rows == {"micro batch (per GPU)": (2, 1), "gradient accumulation": (8, 16),
                    "micro-steps per optimizer step": (8, 16)}


def test_a_new_config_says_so(repo):
    (repo / "configs" / "dpo.yaml").write_text(TRL.replace("max_length: 2048", "max_length: 1024"))  # untracked
    changes = compare("HEAD")
    assert [(c["path"], c["status"]) for c in changes] == [("configs/dpo.yaml", "new")]
    rows = {r["name"]: r for r in changes[0]["rows"]}
    assert rows["sequence length"] == {"name": "sequence length", "old": None, "new": 1024, "source": "max_length, line 3"}
    text = compare("HEAD", fmt="text")
    assert text.splitlines()[0] == "configs/dpo.yaml  [trl]  new"


def test_a_deleted_config_says_so_and_the_launch_that_ran_it_too(repo):
    git(repo, "rm", "-q", "configs/ds.json")
    changes = compare("HEAD")
    assert [(c["path"], c["config"], c["status"]) for c in changes] == [
        ("ds_train.sh", "configs/ds.json, as launched by deepspeed with W=8 at ds_train.sh:2", "deleted")]
    rows = {r["name"]: (r["old"], r["new"]) for r in changes[0]["rows"]}
    assert rows["global batch (sequences/step)"] == (128, None)
    text = compare("HEAD", fmt="text")
    assert "configs/ds.json, as launched by deepspeed with W=8 at ds_train.sh:2  [deepspeed]  deleted\n" in text


def test_a_change_in_the_linked_deepspeed_json_only_shows_the_launch_it_moves(repo):
    edit(repo, "configs/ds.json", '"train_batch_size": 128,\n  "train_micro_batch_size_per_gpu": 4',
         '"train_batch_size": 64,\n  "train_micro_batch_size_per_gpu": 2')
    changes = compare("HEAD")
    assert [c["path"] for c in changes] == ["ds_train.sh"]
    launched = moved(changes, "configs/ds.json, as launched by deepspeed with W=8 at ds_train.sh:2")
    assert launched["global batch (sequences/step)"] == (128, 64)
    assert launched["micro batch (per GPU)"] == (4, 2)


def test_a_linked_file_changed_since_a_commit_is_read_as_it_was_then(repo):
    """A committed change: the old side reads configs/ds.json from the first commit, not the disk."""
    edit(repo, "configs/ds.json", '"gradient_accumulation_steps": 4', '"gradient_accumulation_steps": 2')
    edit(repo, "configs/ds.json", '"train_batch_size": 128', '"train_batch_size": 64')
    git(repo, "commit", "-q", "-am", "halve accumulation")
    changes = compare("HEAD~1", "ds_train.sh")
    assert moved(changes, "configs/ds.json, as launched by deepspeed with W=8 at ds_train.sh:2") == {
        "gradient accumulation": (4, 2), "declared global batch": (128, 64), "global batch (sequences/step)": (128, 64),
        "micro-steps per optimizer step": (4, 2)}
    assert compare("HEAD", fmt="text") == ""


def test_a_change_that_moves_nothing_prints_nothing(repo):
    edit(repo, "configs/sft.yaml", "# ms-swift SFT\n", "# ms-swift SFT\n# a comment moves every line down\n\n")
    edit(repo, "train.sh", "#!/bin/bash\n", "#!/bin/bash\nset -euo pipefail\n")
    (repo / "README.md").write_text("# training\n\nMore words.\n")
    result = run("explain", "--compare", "HEAD")
    assert (result.exit_code, result.stdout) == (0, "")
    assert compare("HEAD", fmt="markdown") == ""
    assert compare("HEAD") == []


def test_the_markdown_table_for_a_job_summary(repo):
    edit(repo, "train.sh", "NPROC_PER_NODE=8", "NPROC_PER_NODE=16")
    commit = git(repo, "rev-parse", "HEAD").strip()
    markdown = compare("HEAD", fmt="markdown")
    assert markdown.splitlines() == [
        f"### batchlint: batch arithmetic moved since `{commit[:12]}`",
        "",
        "| config | | before | after | from |",
        "| --- | --- | ---: | ---: | --- |",
        "| `configs/sft.yaml, as launched by swift with W=16 at train.sh:2` (swift) | world size W | 8 | 16 | "
        "from the launch line: NPROC\\_PER\\_NODE 16 (train.sh:2) |",
        "|  | data parallel dp | 8 | 16 | dp: derived: W (16) |",
        "|  | global batch (sequences/step) | 128 | 256 | world size W: 8 → 16 |",
        "|  | tokens per optimizer step | 524,288 | 1,048,576 | world size W: 8 → 16 |",
    ]


def test_a_bad_revision_or_no_repository_is_exit_2(repo, tmp_path_factory, monkeypatch):
    result = run("explain", "--compare", "no-such-branch")
    assert result.exit_code == 2
    assert "unknown revision 'no-such-branch'" in result.stderr
    result = run("explain", "--compare", "--output=x", "train.sh")
    assert result.exit_code == 2 and "not a revision" in result.stderr
    assert not os.path.exists("x")
    monkeypatch.chdir(tmp_path_factory.mktemp("plain"))
    result = run("explain", "--compare", "HEAD")
    assert (result.exit_code, result.stdout) == (2, "")
    assert "not a git repository" in result.stderr


def test_nothing_is_written_to_the_work_tree(repo):
    edit(repo, "configs/sft.yaml", "sequence_parallel_size: 1", "sequence_parallel_size: 4")
    git(repo, "rm", "-q", "configs/ds.json")
    (repo / "configs" / "dpo.yaml").write_text(TRL)
    before = git(repo, "status", "--porcelain", "--ignored", "--untracked-files=all")
    listing = sorted(os.path.relpath(os.path.join(top, n), repo) for top, _, names in os.walk(repo) for n in names
                     if ".git" not in os.path.relpath(top, repo).split(os.sep))
    for fmt in ("text", "json", "markdown"):
        assert compare("HEAD", fmt=fmt)
    assert git(repo, "status", "--porcelain", "--ignored", "--untracked-files=all") == before
    assert sorted(os.path.relpath(os.path.join(top, n), repo) for top, _, names in os.walk(repo) for n in names
                  if ".git" not in os.path.relpath(top, repo).split(os.sep)) == listing


def test_without_compare_explain_takes_files_and_folders(repo):
    both = run("explain", "train.sh", "configs/sft.yaml")
    assert both.exit_code == 0 and both.stdout.count("configs/sft.yaml") >= 1
    assert run("explain", "--output-format", "markdown", "train.sh").exit_code == 2
    result = run("explain", "missing.yaml")
    assert result.exit_code == 2 and "no such file or directory: missing.yaml" in result.stderr
    assert run("explain", "train.sh").exit_code == 0


def test_a_launch_that_now_runs_a_renamed_config_is_compared_with_what_it_ran(repo):
    """The old script names configs/ds.json, gone from the disk: the old side finds it in the commit."""
    git(repo, "mv", "configs/ds.json", "configs/ds_zero2.json")
    edit(repo, "ds_train.sh", "configs/ds.json", "configs/ds_zero2.json")
    edit(repo, "configs/ds_zero2.json", '"gradient_accumulation_steps": 4', '"gradient_accumulation_steps": 2')
    edit(repo, "configs/ds_zero2.json", '"train_batch_size": 128', '"train_batch_size": 64')
    changes = compare("HEAD", "ds_train.sh")
    [change] = changes
    assert (change["config"], change["was"], change["status"]) == (
        "configs/ds_zero2.json, as launched by deepspeed with W=8 at ds_train.sh:2", "configs/ds.json", "changed")
    assert moved(changes, change["config"])["global batch (sequences/step)"] == (128, 64)
    edit(repo, "configs/ds_zero2.json", '"gradient_accumulation_steps": 2', '"gradient_accumulation_steps": 4')
    edit(repo, "configs/ds_zero2.json", '"train_batch_size": 64', '"train_batch_size": 128')
    assert compare("HEAD", "ds_train.sh", fmt="text") == (
        "configs/ds_zero2.json, as launched by deepspeed with W=8 at ds_train.sh:2  [deepspeed]  (ran configs/ds.json)\n"
        "  the same numbers\n")


# An XTuner config over a base, in the shape of the upstream QLoRA configs: 1 x 16 x 8 = 128.
XTUNER_BASE = """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

max_length = 4096
sequence_parallel_size = 1
batch_size = 1
accumulative_counts = 16
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""
XTUNER_CHILD = """\
# batchlint: world-size=8
from mmengine.config import read_base

with read_base():
    from ._base_.sft import *

max_length = 8192
"""


def test_a_change_in_a_base_moves_the_config_that_inherits_it(repo):
    (repo / "xtuner" / "_base_").mkdir(parents=True)
    (repo / "xtuner" / "_base_" / "sft.py").write_text(XTUNER_BASE)
    (repo / "xtuner" / "child.py").write_text(XTUNER_CHILD)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "xtuner")
    edit(repo, "xtuner/_base_/sft.py", "accumulative_counts = 16", "accumulative_counts = 4")
    changes = compare("HEAD", "xtuner/child.py")
    assert moved(changes, "xtuner/child.py") == {
        "gradient accumulation": (16, 4), "global batch (sequences/step)": (128, 32),
        "tokens per optimizer step": (128 * 8192, 32 * 8192), "micro-steps per optimizer step": (16, 4)}
    rows = {r["name"]: r for r in changes[0]["rows"]}
    assert rows["gradient accumulation"]["source"] == "accumulative_counts, xtuner/_base_/sft.py:7"


def test_a_file_added_since_the_revision_is_not_there_on_the_old_side(repo):
    """The script named configs/extra.yaml before it existed: at HEAD it launched nothing."""
    (repo / "extra.sh").write_text(TRAIN.replace("configs/sft.yaml", "configs/extra.yaml"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a script for a config to come")
    (repo / "configs" / "extra.yaml").write_text(SWIFT)
    changes = compare("HEAD")
    assert [(c["path"], c["config"], c["status"]) for c in changes] == [
        ("extra.sh", "configs/extra.yaml, as launched by swift with W=8 at extra.sh:2", "new")]


def test_a_longer_context_with_sp_keeps_the_tokens_and_names_only_sp_as_the_global_batchs_cause(repo):
    edit(repo, "configs/sft.yaml", "max_length: 4096\n", "max_length: 16384\n")
    edit(repo, "configs/sft.yaml", "sequence_parallel_size: 1", "sequence_parallel_size: 4")
    changes = compare("HEAD", "train.sh")
    rows = {r["name"]: r for r in changes[0]["rows"]}
    assert "tokens per optimizer step" not in rows  # 128 x 4,096 = 32 x 16,384
    assert (rows["global batch (sequences/step)"]["old"], rows["global batch (sequences/step)"]["new"]) == (128, 32)
    assert rows["global batch (sequences/step)"]["because"] == ["sequence_parallel_size, line 7: 1 -> 4"]
    assert (rows["sequence length"]["old"], rows["sequence length"]["new"]) == (4096, 16384)


def test_a_view_serves_its_files_hides_its_absent_ones_and_leaves_the_rest_to_the_disk(tmp_path):
    from batchlint import project

    (tmp_path / "kept.yaml").write_text("on disk\n")
    (tmp_path / "changed.yaml").write_text("now\n")
    (tmp_path / "added").mkdir()
    (tmp_path / "added" / "new.yaml").write_text("new\n")
    gone = tmp_path / "gone" / "old.yaml"
    view = project.View.of({str(tmp_path / "changed.yaml"): ("a", 5), str(gone): ("b", 4)},
                           [str(tmp_path / "added" / "new.yaml")], {"a": b"then\n", "b": b"old\n"}.__getitem__,
                           folders=[str(tmp_path)])
    with project.viewing(view):
        assert project.read_bytes(str(tmp_path / "changed.yaml")) == b"then\n"
        assert project.read_bytes(str(gone)) == b"old\n" and project.is_file(str(gone)) and project.is_dir(str(gone.parent))
        assert project.read_bytes(str(tmp_path / "kept.yaml")) == b"on disk\n"
        assert not project.is_file(str(tmp_path / "added" / "new.yaml"))
        assert not project.is_dir(str(tmp_path / "added"))
        with pytest.raises(FileNotFoundError):
            project.read_bytes(str(tmp_path / "added" / "new.yaml"))
        with pytest.raises(project.TooLarge):
            project.read_bytes(str(gone), limit=3)
    assert project.read_bytes(str(tmp_path / "changed.yaml")) == b"now\n" and not project.is_file(str(gone))


def test_a_deleted_folder_given_as_the_path_is_compared(repo):
    git(repo, "rm", "-q", "-r", "configs")
    changes = compare("HEAD", "configs/ds.json")
    assert [(c["path"], c["status"]) for c in changes] == [("configs/ds.json", "deleted")]


def test_markdown_cells_cannot_become_markup(repo):
    (repo / "configs" / "a|b<img src=x>.yaml").write_text(TRL)
    rows = [line for line in compare("HEAD", fmt="markdown").splitlines() if line.startswith("| `")]
    assert rows == ["| `configs/a\\|b<img src=x>.yaml` (trl, **new**) | micro batch (per GPU) |  | 4 | "
                    "per\\_device\\_train\\_batch\\_size, line 4 |"]
