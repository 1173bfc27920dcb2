"""Adapters read the project through the view they are handed (facts.Outside.project), never through
ambient state: a linked DeepSpeed config, an mmengine base, a Hydra composition and a TorchTitan
registry's modules are each read through it, and no module of the adapters or the readers they call
asks the run layer's context for the project."""

import ast
import json
import os

import pytest

from batchlint.frameworks import hf, torchtitan_registry, xtuner
from batchlint.frameworks.facts import Outside
from batchlint.project import Project, ProjectView
from batchlint.sources import read

from conftest import write

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What reads the project in the run layer's context (lint/project.py): adapters take the view instead.
AMBIENT = {"read_bytes", "is_file", "is_dir", "may_read", "top_of", "contents", "current", "now"}


def _ambient_calls(path: str) -> list:
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    return [f"{os.path.relpath(path, REPO)}:{node.lineno} {node.func.value.id}.{node.func.attr}"
            for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id in ("project", "ProjectView")
            and node.func.attr in AMBIENT]


def test_no_adapter_or_reader_asks_the_context_for_the_project():
    folders = [os.path.join(REPO, "lint", "frameworks"), os.path.join(REPO, "lint", "sources")]
    found = [call for folder in folders for name in sorted(os.listdir(folder)) if name.endswith(".py")
             for call in _ambient_calls(os.path.join(folder, name))]
    assert found == []


def _view(tmp_path, overlay=None) -> ProjectView:
    overlay = {os.path.realpath(str(tmp_path / name)): text.encode() for name, text in (overlay or {}).items()}
    return ProjectView(Project((os.path.realpath(str(tmp_path)),)), overlay)


def test_a_linked_deepspeed_config_is_read_through_the_view(tmp_path):
    write(tmp_path, "ds.json", json.dumps({"train_micro_batch_size_per_gpu": 2}))
    path = write(tmp_path, "sft.yaml", "per_device_train_batch_size: 4\ndeepspeed: ds.json\n")
    doc = read(path, open(path).read(), "yaml")
    on_disk = hf.plan(doc, Outside(project=_view(tmp_path)))
    assert on_disk.trainer.deepspeed.config().root.get("train_micro_batch_size_per_gpu").value == 2
    # The view holds text --fix has not written yet: the adapter reads that, not the disk.
    overlaid = hf.plan(doc, Outside(project=_view(tmp_path, {"ds.json": '{"train_micro_batch_size_per_gpu": 8}'})))
    assert overlaid.trainer.deepspeed.config().root.get("train_micro_batch_size_per_gpu").value == 8
    # A view whose boundary leaves the folder out reads nothing of it.
    outside = hf.plan(doc, Outside(project=ProjectView(Project((os.path.realpath(str(tmp_path / "elsewhere")),)))))
    assert outside.trainer.deepspeed.config() is None


BASE = """\
batch_size = 2
accumulative_counts = 4
train_dataloader = dict(batch_size=batch_size)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""
CHILD = "_base_ = ['./base.py']\nsequence_parallel_size = 1\n"


def test_an_mmengine_base_is_read_through_the_view(tmp_path):
    write(tmp_path, "base.py", BASE)
    path = write(tmp_path, "child.py", CHILD)
    doc = read(path, CHILD, "python")
    assert xtuner.plan(doc, Outside(project=_view(tmp_path))).grad_accum.value == 4
    overlaid = xtuner.plan(doc, Outside(project=_view(tmp_path, {"base.py": BASE.replace("= 4", "= 16")})))
    assert overlaid.grad_accum.value == 16


MODULE = """\
from torchtitan.trainer import Trainer
from .shared import training


def llama3_debug() -> Trainer.Config:
    return Trainer.Config(training=training())
"""
SHARED = """\
from torchtitan.config import TrainingConfig


def training() -> TrainingConfig:
    return TrainingConfig(local_batch_size=2, global_batch_size=16)
"""


def test_a_registry_module_it_imports_is_read_through_the_view(tmp_path):
    write(tmp_path, "configs/__init__.py", "")
    write(tmp_path, "configs/shared.py", SHARED)
    path = write(tmp_path, "configs/my_configs.py", MODULE)
    doc = read(path, MODULE, "python")

    def training(view):
        [config] = torchtitan_registry.read_configs(doc, view)
        return config.value.get("training")

    assert training(_view(tmp_path)).get("local_batch_size").value == 2
    changed = {"configs/shared.py": SHARED.replace("local_batch_size=2", "local_batch_size=4")}
    assert training(_view(tmp_path, changed)).get("local_batch_size").value == 4


LLAMAFACTORY_SFT = """\
stage: sft
do_train: true
finetuning_type: lora
per_device_train_batch_size: 2
gradient_accumulation_steps: 4
"""


def test_the_release_in_force_is_read_through_the_view(tmp_path):
    """Which release the project runs (lint/versions.py) is read through the adapter's view: its overlay,
    its boundary, and the project config's pins it carries. LLaMA-Factory's unwritten cutoff_len is 1024
    up to 0.9.0 and 2048 from 0.9.1."""
    from batchlint.frameworks import llamafactory

    write(tmp_path, "requirements.txt", "llamafactory==0.9.2\n")
    path = write(tmp_path, "sft.yaml", LLAMAFACTORY_SFT)
    doc = read(path, open(path).read(), "yaml")
    assert llamafactory.plan(doc, Outside(project=_view(tmp_path))).seq_len.value == 2048
    overlaid = _view(tmp_path, {"requirements.txt": "llamafactory==0.8.3\n"})
    assert llamafactory.plan(doc, Outside(project=overlaid)).seq_len.value == 1024
    pinned = ProjectView(Project((os.path.realpath(str(tmp_path)),)), pinned=({"llamafactory": "0.8.3"}, "batchlint.toml"))
    assert llamafactory.plan(doc, Outside(project=pinned)).seq_len.value == 1024
    # Outside the boundary the requirements are not read: the release is unknown, and so is the default's.
    elsewhere = ProjectView(Project((os.path.realpath(str(tmp_path / "elsewhere")),)))
    assert llamafactory.plan(doc, Outside(project=elsewhere)).seq_len.value == 2048


# Who asks which release the project runs, and the argument the view goes in (its place, its name).
RELEASE_LOOKUPS = {"release": (3, "view"), "copy_reader": (1, "view"), "judge": (2, "view"),
                   "in_force": (4, "view"), "runs_copy": (1, "view"), "refuses": (2, "view"),
                   "copy_arithmetic": (1, "view"), "reads_no_toml": (1, "view")}


def _lookups_without_a_view(path: str) -> list:
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name not in RELEASE_LOOKUPS or name == "judge" and isinstance(node.func, ast.Attribute) \
                and not (isinstance(node.func.value, ast.Name) and node.func.value.id == "premise"):
            continue
        place, keyword = RELEASE_LOOKUPS[name]
        if len(node.args) <= place and all(k.arg != keyword for k in node.keywords):
            found.append(f"{os.path.relpath(path, REPO)}:{node.lineno} {name}")
    return found


def test_adapters_and_rules_ask_for_the_release_through_their_view():
    """An adapter passes the view it was handed, a rule its plan's (`TrainingPlan.project`)."""
    folders = [os.path.join(REPO, *parts) for parts in (("lint", "frameworks"), ("lint", "sources"))]
    folders += [os.path.join(REPO, "rules", name) for name in sorted(os.listdir(os.path.join(REPO, "rules")))
                if os.path.isdir(os.path.join(REPO, "rules", name))]
    found = [call for folder in folders for name in sorted(os.listdir(folder)) if name.endswith(".py")
             for call in _lookups_without_a_view(os.path.join(folder, name))]
    assert found == []


def test_the_boundary_resolves_paths_as_realpath_does(tmp_path, monkeypatch):
    # `real_path` remembers each folder's real path for the run and looks at the file alone: through
    # linked folders and files, `link/..`, `.` and missing names it must say what os.path.realpath says.
    from batchlint import per_run
    from batchlint.project import real_path

    (tmp_path / "x" / "y").mkdir(parents=True)
    (tmp_path / "x" / "f").write_text("")
    (tmp_path / "b").write_text("")
    os.symlink(tmp_path / "x" / "y", tmp_path / "link")
    os.symlink(tmp_path / "b", tmp_path / "x" / "y" / "to_b")
    monkeypatch.chdir(tmp_path)
    per_run.forget()
    os.symlink(tmp_path / "nowhere", tmp_path / "dangling")
    paths = ["link/../f", "link/g", "link", "link/to_b", "b", "./b", "x/./f", "missing/file", str(tmp_path / "link" / "to_b"),
             "x/y/", ".", "link/missing", "link/missing/deeper", "x/f/under_a_file", "dangling", "dangling/g"]
    assert [real_path(p) for p in paths] == [os.path.realpath(p) for p in paths]
    os.remove(tmp_path / "link")  # the folder a link pointed at is remembered for the run only
    os.symlink(tmp_path / "x", tmp_path / "link")
    per_run.forget()
    assert real_path("link/f") == os.path.realpath("link/f") == str(tmp_path / "x" / "f")
    outside = Project((str(tmp_path / "x"),))
    assert outside.contains("link/f") and not outside.contains("b") and not outside.contains("x/y/to_b")


def test_a_folders_real_path_is_built_from_its_parents_as_realpath_resolves_it(tmp_path, monkeypatch):
    # project._real_folder takes a folder's real path from its parent's, remembered: deep folders under a
    # linked one, a link to a link, a loop of links and missing folders must come out as realpath says.
    from batchlint import per_run
    from batchlint.project import real_path

    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    os.symlink(tmp_path / "a", tmp_path / "to_a")
    os.symlink(tmp_path / "to_a" / "b", tmp_path / "a" / "to_b")  # a link through a link
    os.symlink("loop2", tmp_path / "loop1")
    os.symlink("loop1", tmp_path / "loop2")
    monkeypatch.chdir(tmp_path)
    paths = ["to_a/b/c/f", "a/to_b/c/f", "to_a/to_b/c/f", "loop1/x/f", "loop2/f", "a/missing/deeper/f",
             "to_a/missing/f", "a/b/c", "to_a/to_b", str(tmp_path / "to_a" / "to_b" / "c" / "f")]
    for order in (paths, paths[::-1]):  # the folders remembered first are those above the others, or not
        per_run.forget()
        assert [real_path(p) for p in order] == [os.path.realpath(p) for p in order]


def test_contents_reads_the_files_in_view_and_no_link_out_of_it(tmp_path):
    from batchlint.project import contents

    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.sh").write_text("pip install x==1\n")
    top = tmp_path / "repo"
    (top / "scripts").mkdir(parents=True)
    (top / "scripts" / "a.sh").write_text("a\n")
    (top / "b.sh").write_text("b\n")
    os.symlink(tmp_path / "outside" / "secret.sh", top / "scripts" / "out.sh")  # out of the project
    os.symlink(top / "b.sh", top / "scripts" / "in.sh")  # a link that stays in it
    os.symlink(tmp_path / "outside", top / "linked")  # a linked folder: os.walk does not enter it
    view = ProjectView(Project((str(top),)))
    found = [(os.path.relpath(p, top), data) for p, data in contents(str(top), lambda n: n.endswith(".sh"), 10, 100,
                                                                     view=view)]
    assert found == [("b.sh", b"b\n"), (os.path.join("scripts", "a.sh"), b"a\n"), (os.path.join("scripts", "in.sh"), b"b\n")]
    outside_view = ProjectView(Project((str(tmp_path / "outside"),)))
    assert list(contents(str(top), lambda n: n.endswith(".sh"), 10, 100, view=outside_view)) == [
        (str(top / "scripts" / "out.sh"), b"pip install x==1\n")]


def test_contents_stops_at_its_bounds_without_walking_the_rest(tmp_path, monkeypatch):
    # Run from a large folder that is no repository, the project is that folder: the install-command
    # search walks it, and must stop once no file after the walk's point can be read.
    from batchlint import project

    for index in range(5):
        (tmp_path / f"d{index}").mkdir()
        (tmp_path / f"d{index}" / "run.sh").write_text(f"{index}\n")
    looked = []
    real_walk = project.walk

    def walk(top):
        for found in real_walk(top):
            looked.append(found[0])
            yield found

    monkeypatch.setattr(project, "walk", walk)
    view = ProjectView(Project((str(tmp_path),)))
    first = [data for _, data in project.contents(str(tmp_path), lambda n: n.endswith(".sh"), 2, 100, view=view)]
    assert first == [b"0\n", b"1\n"] and len(looked) == 4  # the top, d0, d1, and d2, whose file is the third
    monkeypatch.setattr(project, "MAX_WALKED", 4)  # the top's 5 folders are past it
    assert list(project.contents(str(tmp_path), lambda n: n.endswith(".sh"), 10, 100, view=view)) == []


def _tree_to_walk(top):
    """Folders nested three deep, a link to a folder (listed, not entered), links to a file and to nothing,
    and a loop of links."""
    (top / "a" / "b" / "c").mkdir(parents=True)
    (top / "z").mkdir()
    for path in ("f.sh", "a/g.yaml", "a/b/h.sh", "a/b/c/i.sh", "z/j.sh"):
        (top / path).write_text("x\n")
    os.symlink(top / "a", top / "z" / "to_a")
    os.symlink(top / "f.sh", top / "a" / "to_f.sh")
    os.symlink(top / "missing", top / "a" / "to_nothing")
    os.symlink("loop2", top / "loop1")
    os.symlink("loop1", top / "loop2")


@pytest.mark.parametrize("prune", [False, True])
def test_walk_is_os_walk(tmp_path, prune):
    # project.walk, which the install-command and callers' searches share, lists what os.walk lists, in its
    # order, entering the subfolders the caller keeps in the order it leaves them.
    from batchlint import per_run, project

    _tree_to_walk(tmp_path)

    def walked(walk):
        found = []
        for folder, subfolders, files in walk(str(tmp_path)):
            found.append((folder, sorted(subfolders), sorted(files)))
            if prune:
                subfolders[:] = sorted((d for d in subfolders if d != "b"), reverse=True)
        return found

    per_run.forget()
    assert walked(project.walk) == walked(os.walk)
    assert walked(project.walk) == walked(os.walk)  # and again, from the listings the run keeps
    folders = {folder: subfolders for folder, subfolders, _ in walked(project.walk)}
    assert folders[str(tmp_path / "z")] == ["to_a"] and str(tmp_path / "z" / "to_a") not in folders


def test_walk_lists_each_folder_once_a_run(tmp_path, monkeypatch):
    from batchlint import per_run, project

    _tree_to_walk(tmp_path)
    listed = []
    real_scandir = os.scandir

    def scandir(path):
        listed.append(path)
        return real_scandir(path)

    monkeypatch.setattr(project.os, "scandir", scandir)
    per_run.forget()
    first = list(project.walk(str(tmp_path)))
    assert len(listed) == 5  # the top, a, a/b, a/b/c and z; not z/to_a, a link
    under_a = [found for found in first if found[0].startswith(str(tmp_path / "a"))]
    assert sorted(project.walk(str(tmp_path / "a"))) == sorted(under_a) and len(listed) == 5
    (tmp_path / "a" / "new.sh").write_text("x\n")
    per_run.forget()  # a new run: the folders may have changed since
    assert "new.sh" in dict((f, files) for f, _, files in project.walk(str(tmp_path)))[str(tmp_path / "a")]
    assert len(listed) == 10


def test_kept_reads_are_taken_while_the_stamp_holds(tmp_path, monkeypatch):
    # project.keeping (the editor's server): a settled file is read once, and again when its stamp changes;
    # a file changed within the clock tick is always read; the size bound holds for a kept file too.
    from batchlint import project

    path = tmp_path / "run.sh"
    path.write_text("W=8\n")
    opened = []
    real = project._read_open
    monkeypatch.setattr(project, "_read_open", lambda p, limit: opened.append(p) or real(p, limit))
    with project.keeping(1 << 20):
        assert project.read_bytes(str(path)) == b"W=8\n" and len(opened) == 1  # within the tick: not kept
        monkeypatch.setattr(project, "RACY_NS", 0)  # settled from here on
        assert project.read_bytes(str(path)) == b"W=8\n" and len(opened) == 2
        assert project.read_bytes(str(path)) == b"W=8\n" and len(opened) == 2  # kept
        path.write_text("W=16\n")
        assert project.read_bytes(str(path)) == b"W=16\n" and len(opened) == 3  # its stamp changed
        with pytest.raises(project.TooLarge):
            project.read_bytes(str(path), limit=2)
    assert project.read_bytes(str(path)) == b"W=16\n" and len(opened) == 4  # outside the block: read
