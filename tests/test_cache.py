"""The opt-in result cache: reused while nothing it depends on changes."""

import os

from batchlint import reads
from batchlint.config import Settings
from batchlint.engine import Options
from batchlint.parallel import lint_files
from batchlint.rules import RULES

from conftest import TRL_PACKED_GROUPED, write

HF = "stage: sft\nper_device_train_batch_size: 2\ngradient_accumulation_steps: 8\ndeepspeed: ds.json\n"
DS = '{\n  "train_micro_batch_size_per_gpu": %d,\n  "gradient_accumulation_steps": 8\n}\n'


def lint(paths, folder, cache, **options):
    return lint_files(paths, Settings(root=str(folder)), Options(**options), RULES, jobs=1, cache_dir=str(cache))


def codes(results):
    return [sorted(d.code for d in r.diagnostics) for r in results]


def test_a_warm_run_lints_nothing_and_gives_the_same(workdir, monkeypatch):
    path = write(workdir, "sft.yaml", TRL_PACKED_GROUPED)
    cold = lint([path], workdir, workdir / "cache")
    import batchlint.parallel

    monkeypatch.setattr(batchlint.parallel, "lint_file", lambda *a, **k: (_ for _ in ()).throw(AssertionError("linted")))
    warm = lint([path], workdir, workdir / "cache")
    assert [(r.path, r.diagnostics) for r in warm] == [(r.path, r.diagnostics) for r in cold]
    assert codes(warm) == [["BL301"]]


def test_an_edited_file_is_linted_again(workdir):
    path = write(workdir, "sft.yaml", TRL_PACKED_GROUPED)
    assert codes(lint([path], workdir, workdir / "cache")) == [["BL301"]]
    write(workdir, "sft.yaml", TRL_PACKED_GROUPED.replace("group_by_length: true", "group_by_length: false"))
    assert codes(lint([path], workdir, workdir / "cache")) == [[]]


def test_a_changed_linked_file_invalidates_the_result(workdir):
    config = write(workdir, "sft.yaml", HF)
    write(workdir, "ds.json", DS % 2)
    assert codes(lint([config], workdir, workdir / "cache")) == [[]]
    write(workdir, "ds.json", DS % 4)
    os.utime("ds.json", ns=(1, 1))  # a different mtime even on a coarse clock
    assert codes(lint([config], workdir, workdir / "cache")) == [["BL120"]]


def test_other_settings_use_another_index(workdir):
    path = write(workdir, "sft.yaml", "model_type: qwen2\nper_device_train_batch_size: 2\ngradient_accumulation_steps: 8\n")
    assert codes(lint([path], workdir, workdir / "cache", world_size=8, global_batch=128)) == [[]]
    assert codes(lint([path], workdir, workdir / "cache", world_size=8, global_batch=64)) == [["BL102"]]
    assert len(os.listdir(workdir / "cache")) == 2


def test_reads_are_tracked_only_inside_the_block():
    reads.record("/nowhere")  # outside: ignored
    with reads.tracking() as seen:
        reads.record("a.json")
    assert seen == {os.path.abspath("a.json")}
