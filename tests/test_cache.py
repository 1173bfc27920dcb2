"""The opt-in result cache: reused while nothing it depends on changes, stored as
data (JSON, checked field by field) so that loading it can run no code, and
giving output byte for byte the same as linting afresh."""

import hashlib
import json
import os
import pickle
import shutil

import pytest

from batchlint import __version__, reads
from batchlint.cache import FORMAT, Cache, result_from_dict, result_to_dict
from batchlint.config import Settings
from batchlint.engine import Options
from batchlint.parallel import lint_files
from batchlint.rules import RULES

from conftest import DS_MISMATCH, TRL_PACKED_GROUPED, cli_runner, write

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
    assert len(index_files(workdir / "cache")) == 2


def test_reads_are_tracked_only_inside_the_block():
    reads.record("/nowhere")  # outside: ignored
    with reads.tracking() as seen:
        reads.record("a.json")
        reads.record("b.json", b"{}")
    assert seen.paths == {os.path.abspath("a.json"): "", os.path.abspath("b.json"): hashlib.sha256(b"{}").hexdigest()}



# --- the index is data ---------------------------------------------------------------------------

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


class Planted:
    """Loading a pickle of this creates the file `path`: what a hostile cache would do."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def index_files(cache):
    return sorted(name for name in os.listdir(cache) if name.endswith(".json"))


def test_the_index_is_json(workdir):
    path = write(workdir, "sft.yaml", TRL_PACKED_GROUPED)
    lint([path], workdir, workdir / "cache")
    (name,) = index_files(workdir / "cache")
    assert name.endswith(".json")
    with open(workdir / "cache" / name, encoding="utf-8") as handle:
        data = json.load(handle)
    assert data["batchlint_cache"] == FORMAT and len(data["entries"]) == 1


def test_a_planted_pickle_is_never_loaded(workdir):
    """A pull request that commits a cache file must not run code in CI: the old
    index name was predictable, and loading it unpickled whatever it held."""
    path = write(workdir, "sft.yaml", TRL_PACKED_GROUPED)
    settings, options = Settings(root=str(workdir)), Options()
    os.makedirs(workdir / "cache")
    salt = repr((__version__, settings, options)).encode("utf-8")
    planted = workdir / "cache" / f"{__version__}-{hashlib.sha256(salt).hexdigest()[:16]}.pickle"
    with open(planted, "wb") as handle:
        pickle.dump(Planted(str(workdir / "pwned")), handle)
    for name in index_files(workdir / "cache"):  # and under the new name too, whatever it is
        shutil.copy(planted, workdir / "cache" / name.replace(".pickle", ".json"))
    results = lint_files([path], settings, options, RULES, jobs=1, cache_dir=str(workdir / "cache"))
    assert codes(results) == [["BL301"]]
    assert not os.path.exists(workdir / "pwned")


@pytest.mark.parametrize("content", [
    b"",
    b"\x80\x04\x95 not json",
    b'{"batchlint_cache": 1, "version": "VERSION", "entries": {"',  # truncated
    b"[" * 100_000 + b"]" * 100_000,  # nested past the parser's recursion limit
    b'{"batchlint_cache": 1, "version": "VERSION", "entries": []}',
    b'{"batchlint_cache": "1", "version": "VERSION", "entries": {}}',
    b'{"batchlint_cache": 1, "version": "VERSION", "entries": {"KEY": {"result": 1, "others": {}}}}',
    b'{"batchlint_cache": 1, "version": "VERSION", "entries": {"KEY": {"result": {"path": []}, "others": []}}}',
    b'{"batchlint_cache": 1, "version": "VERSION", "entries": {"KEY": {"result": RESULT, "others": {"x": 1}}}}',
    b'{"batchlint_cache": 1, "version": "VERSION", "entries": {"KEY": {"result": RESULT, "others": {"/x": "zz"}}}}',
    b'{"batchlint_cache": 1, "version": "VERSION", "entries": {"KEY": {"result": RESULT, "others": {}}}} trailing',
    b'{"batchlint_cache": 1, "version": "VERSION", "entries": {"KEY": {"result": RESULT, "others": {}}}, "x": "'
    + b"9" * 100_000 + b'"}',
], ids=["empty", "pickle", "truncated", "deep", "entries-list", "format-str", "result-int", "result-fields",
        "others-relative", "others-digest", "trailing", "long-number"])
def test_a_corrupt_or_hostile_index_is_ignored_and_rewritten(workdir, content):
    path = write(workdir, "sft.yaml", TRL_PACKED_GROUPED)
    cold = lint([path], workdir, workdir / "cache")
    (name,) = index_files(workdir / "cache")
    index = workdir / "cache" / name
    with open(index, encoding="utf-8") as handle:
        (key, entry), = json.load(handle)["entries"].items()
    bad_result = dict(entry["result"], diagnostics=[dict(entry["result"]["diagnostics"][0], code="RM -RF")])
    content = (content.replace(b"VERSION", __version__.encode()).replace(b"KEY", key.encode())
               .replace(b"RESULT", json.dumps(bad_result).encode()))
    with open(index, "wb") as handle:
        handle.write(content)
    again = lint([path], workdir, workdir / "cache")
    assert [(r.path, r.diagnostics) for r in again] == [(r.path, r.diagnostics) for r in cold]
    with open(index, encoding="utf-8") as handle:
        assert list(json.load(handle)["entries"]) == [key]  # rewritten whole


@pytest.mark.parametrize("change", [
    {"code": "BL30"}, {"code": 301}, {"severity": "fatal"}, {"message": None}, {"span": [1, 2, 3]},
    {"span": [1, 2, 3, "4", None]}, {"span": [True, 1, 1, 2, None]}, {"span": [-1, 1, 1, 2, None]},
    {"span": [1, 1, 1, 2 ** 40, None]}, {"related": [{"message": "m", "span": [1, 1, 1, 2, None]}]},
    {"edits": [{"span": [1, 1, 1, 2, None], "replacement": 5, "path": None}]}, {"extra": 1},
])
def test_every_field_is_checked(workdir, change):
    result = lint_file_result(workdir)
    data = result_to_dict(result)
    assert result_from_dict(json.loads(json.dumps(data))) == result
    data["diagnostics"][0] = {**data["diagnostics"][0], **change}
    with pytest.raises(ValueError):
        result_from_dict(json.loads(json.dumps(data)))


@pytest.mark.parametrize("change", [{"framework": 3}, {"error": []}, {"notices": "x"}, {"notices": [{"a": 1}]},
                                    {"reads": []}, {"reads": {"a": [1]}}, {"path": None}, {"diagnostics": {}}])
def test_every_result_field_is_checked(workdir, change):
    data = {**result_to_dict(lint_file_result(workdir)), **change}
    with pytest.raises(ValueError):
        result_from_dict(data)
    data = result_to_dict(lint_file_result(workdir))
    del data["framework"]
    with pytest.raises(ValueError):
        result_from_dict(data)


def lint_file_result(workdir):
    from batchlint.engine import lint_file

    write(workdir, "ds.json", DS_MISMATCH)
    result = lint_file(str(workdir / "ds.json"), Settings(root=str(workdir)), Options(world_size=8), RULES)
    assert result.diagnostics and result.diagnostics[0].related
    return result


def test_an_oversized_index_is_not_read(workdir, monkeypatch):
    import batchlint.cache

    path = write(workdir, "sft.yaml", TRL_PACKED_GROUPED)
    lint([path], workdir, workdir / "cache")
    monkeypatch.setattr(batchlint.cache, "MAX_INDEX_BYTES", 100)
    cache = Cache(str(workdir / "cache"), Settings(root=str(workdir)), Options())
    assert cache.entries == {}


def test_a_symlinked_index_is_neither_followed_nor_written_through(workdir):
    path = write(workdir, "sft.yaml", TRL_PACKED_GROUPED)
    lint([path], workdir, workdir / "cache")
    (name,) = index_files(workdir / "cache")
    victim = write(workdir, "victim.txt", "keep me\n")
    os.remove(workdir / "cache" / name)
    os.symlink(victim, workdir / "cache" / name)
    lint([path], workdir, workdir / "cache")
    with open(victim, encoding="utf-8") as handle:
        assert handle.read() == "keep me\n"
    assert not os.path.islink(workdir / "cache" / name)


# --- validity: the bytes read, not mtimes ------------------------------------------------------------


def test_a_linked_file_changed_with_the_same_size_and_mtime_invalidates(workdir):
    config = write(workdir, "sft.yaml", HF)
    write(workdir, "ds.json", DS % 2)
    os.utime("ds.json", ns=(10**18, 10**18))
    assert codes(lint([config], workdir, workdir / "cache")) == [[]]
    write(workdir, "ds.json", DS % 4)  # same size
    os.utime("ds.json", ns=(10**18, 10**18))  # same mtime
    assert codes(lint([config], workdir, workdir / "cache")) == [["BL120"]]


def test_paths_are_shown_relative_to_the_folder_of_each_run(workdir, monkeypatch):
    path = write(workdir, "configs/sft.yaml", TRL_PACKED_GROUPED)
    assert [r.path for r in lint([path], workdir, workdir / "cache")] == ["configs/sft.yaml"]
    monkeypatch.chdir(workdir / "configs")
    assert [r.path for r in lint([path], workdir, workdir / "cache")] == ["sft.yaml"]
    assert [d.path for r in lint([path], workdir, workdir / "cache") for d in r.diagnostics] == ["sft.yaml"]


# --- cached output is fresh output ----------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_cached_output_is_byte_identical(workdir, fmt):
    from batchlint.cli import main

    shutil.copytree(EXAMPLES, workdir / "examples")
    runner = cli_runner()
    args = ["examples", "-j", "1", "--format", fmt]
    fresh = runner.invoke(main, args)
    cold = runner.invoke(main, args + ["--cache-dir", "cache"])
    assert os.listdir("cache")
    warm = runner.invoke(main, args + ["--cache-dir", "cache"])
    assert fresh.exit_code == cold.exit_code == warm.exit_code == 1, warm.output
    assert fresh.stdout == cold.stdout == warm.stdout
    assert fresh.stderr == cold.stderr == warm.stderr


def test_a_warm_run_over_the_examples_lints_nothing(workdir, monkeypatch):
    import batchlint.parallel

    shutil.copytree(EXAMPLES, workdir / "examples")
    files = sorted(os.path.join(d, f) for d, _, names in os.walk("examples") for f in names)
    cold = lint(files, workdir, workdir / "cache")
    monkeypatch.setattr(batchlint.parallel, "lint_file", lambda path, *a, **k: (_ for _ in ()).throw(AssertionError(path)))
    warm = lint(files, workdir, workdir / "cache")
    assert [(r.path, r.diagnostics, r.notices) for r in warm] == [(r.path, r.diagnostics, r.notices) for r in cold]


def test_a_path_that_is_not_utf8_is_stored_and_read_back(workdir):
    from batchlint.engine import FileResult

    result = FileResult("bad\udcff.yaml", notices=["skipped bad\udcff.yaml"], reads={"/x/bad\udcff.yaml": "0" * 64})
    cache = Cache(str(workdir / "cache"), Settings(root=str(workdir)), Options())
    cache.put("a" * 64, result, {})
    cache.save()
    again = Cache(str(workdir / "cache"), Settings(root=str(workdir)), Options())
    assert again.get("a" * 64) == result


# --- a search through the project's scripts: valid while their stamps hold --------------------------------


def _check_in_a_new_process(folder, *args):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "batchlint", "check", *args], cwd=folder, capture_output=True,
                          text=True, timeout=120)


def test_a_warm_run_in_a_new_process_checks_the_scripts_searched(workdir):
    # A new process has imported none of the searches a stored result depends on (the callers' search
    # here): the cache imports it to check them, and gives what a fresh lint gives.
    shutil.copy(os.path.join(EXAMPLES, "deepspeed", "ds_zero2.json"), "ds_zero2.json")
    write(workdir, "train.sh", "#!/bin/bash\ndeepspeed --num_gpus 8 train.py --deepspeed ds_zero2.json\n")
    fresh = _check_in_a_new_process(workdir, "ds_zero2.json")
    cold = _check_in_a_new_process(workdir, "ds_zero2.json", "--cache-dir", "cache")
    warm = _check_in_a_new_process(workdir, "ds_zero2.json", "--cache-dir", "cache")
    assert fresh.returncode == cold.returncode == warm.returncode == 1, warm.stderr
    assert "is not 128" in fresh.stdout and "train.sh:2:1" in fresh.stdout
    assert fresh.stdout == cold.stdout == warm.stdout


@pytest.mark.parametrize("change", ["added", "edited", "removed"])
def test_a_script_added_edited_or_removed_since_invalidates(workdir, change):
    from batchlint.cli import main

    shutil.copy(os.path.join(EXAMPLES, "deepspeed", "ds_zero2.json"), "ds_zero2.json")
    launch = "#!/bin/bash\ndeepspeed --num_gpus 8 train.py --deepspeed ds_zero2.json\n"
    if change != "added":
        write(workdir, "train.sh", launch)
    runner = cli_runner()
    cold = runner.invoke(main, ["ds_zero2.json", "--cache-dir", "cache"])
    if change == "added":
        write(workdir, "train.sh", launch)
    elif change == "edited":  # the same size: only the stamp's times tell
        write(workdir, "train.sh", launch.replace("--num_gpus 8", "--num_gpus 6"))
    else:
        os.remove("train.sh")
    warm = runner.invoke(main, ["ds_zero2.json", "--cache-dir", "cache"])
    fresh = runner.invoke(main, ["ds_zero2.json"])
    assert warm.stdout == fresh.stdout != cold.stdout
    assert ("train.sh:2:1" in warm.stdout) == (change != "removed")


def test_a_warm_run_that_lints_nothing_writes_nothing(workdir):
    path = write(workdir, "sft.yaml", TRL_PACKED_GROUPED)
    lint([path], workdir, workdir / "cache")
    index = [os.path.join("cache", name) for name in os.listdir("cache") if name.endswith(".json")]
    before = {name: os.stat(name).st_mtime_ns for name in index}
    os.utime(index[0], ns=(1, 1))
    assert codes(lint([path], workdir, workdir / "cache")) == [["BL301"]]
    assert os.stat(index[0]).st_mtime_ns == 1  # not written again
    write(workdir, "sft.yaml", TRL_PACKED_GROUPED.replace("group_by_length: true", "group_by_length: false"))
    assert codes(lint([path], workdir, workdir / "cache")) == [[]]
    assert os.stat(index[0]).st_mtime_ns != 1 and set(before) == set(index)


def test_a_script_changed_within_the_file_systems_tick_is_stamped_with_its_bytes():
    # A rewrite within one tick of the clock the file system keeps leaves the size and the times as they
    # were: a script changed that recently is stamped with its bytes' digest too, so the change tells.
    import time
    from types import SimpleNamespace

    from batchlint import project
    from batchlint.launching import callers

    now = time.time_ns()
    recent = SimpleNamespace(st_size=5, st_ino=1, st_mtime_ns=now, st_ctime_ns=now)
    settled = SimpleNamespace(st_size=5, st_ino=1, st_mtime_ns=now - 10 * project.RACY_NS,
                              st_ctime_ns=now - 10 * project.RACY_NS)
    (stamp, racy), (same, settled_racy) = callers._stamp("run.sh", recent), callers._stamp("run.sh", settled)
    assert racy and not settled_racy and same != stamp
    assert callers._stamp_digest([(stamp, b"W=8\n")]) != callers._stamp_digest([(stamp, b"W=6\n")])
    assert callers._stamp_digest([(stamp, b"W=8\n")]) != callers._stamp_digest([(stamp, None)])
    assert callers._stamp(None, None) == (b"partial", False)


# --- stamps: a file unchanged since it was read is not read again --------------------------------------


def test_a_warm_run_reads_no_file_whose_stamp_is_unchanged(workdir, monkeypatch):
    from batchlint import project

    monkeypatch.setattr(project, "RACY_NS", 0)  # files written by the test are not too recent to tell
    config = write(workdir, "sft.yaml", HF)
    linked = write(workdir, "ds.json", DS % 4)
    cold = lint([config], workdir, workdir / "cache")
    read: list = []
    reading = project._read_regular
    monkeypatch.setattr(project, "_read_regular", lambda path, limit: read.append(os.path.abspath(path)) or reading(path, limit))
    warm = lint([config], workdir, workdir / "cache")
    assert codes(warm) == codes(cold) == [["BL120"]]
    assert os.path.abspath(config) not in read and os.path.abspath(linked) not in read
    write(workdir, "ds.json", DS % 2)  # same size; its stamp (inode, times) changes
    assert codes(lint([config], workdir, workdir / "cache")) == [[]]
    assert os.path.abspath(linked) in read


def test_a_file_changed_within_the_clock_tick_is_read_again(workdir, monkeypatch):
    # On a file system whose stamps cannot tell two writes in one tick apart (here: a stamp of the size
    # alone), a file changed within RACY_NS of the stat is never taken as unchanged.
    from batchlint import project

    monkeypatch.setattr(project, "stamp_of", lambda info: (info.st_size, 0, 0, 0))
    offload = '{\n  "train_micro_batch_size_per_gpu": 1,\n  "zero_optimization": {"stage": %d, "offload_param": {"device": "cpu"}}\n}\n'
    path = write(workdir, "ds.json", offload % 0)  # no script searched for callers holds a JSON's bytes
    assert codes(lint([path], workdir, workdir / "cache")) == [["BL521"]]
    write(workdir, "ds.json", offload % 3)  # the same size
    assert codes(lint([path], workdir, workdir / "cache")) == [[]]


@pytest.mark.parametrize("stamps", [
    {"/x.yaml": [1, 2, 3, 4, "zz"]}, {"x.yaml": [1, 2, 3, 4, "0" * 64]}, {"/x.yaml": [1, 2, 3, "4", "0" * 64]},
    {"/x.yaml": [1, 2, 3, 4]}, ["/x.yaml"], {"/x.yaml": [-1, 2, 3, 4, "0" * 64]},
])
def test_stamps_not_of_their_form_are_ignored(workdir, monkeypatch, stamps):
    from batchlint import project

    monkeypatch.setattr(project, "RACY_NS", 0)
    path = write(workdir, "sft.yaml", TRL_PACKED_GROUPED)
    lint([path], workdir, workdir / "cache")
    index = next(os.path.join("cache", n) for n in os.listdir("cache") if n.endswith(".json"))
    with open(index, encoding="utf-8") as handle:
        data = json.load(handle)
    stored = data["stamps"].pop(os.path.abspath(path))
    assert stored[4] == hashlib.sha256(TRL_PACKED_GROUPED.encode()).hexdigest()
    data["stamps"] = stamps if not isinstance(stamps, dict) else {**stamps, os.path.abspath(path): stored}
    with open(index, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    cache = Cache(str(workdir / "cache"), Settings(root=str(workdir)), Options(digests=True))
    assert cache.stamps == {}
    assert codes(lint([path], workdir, workdir / "cache")) == [["BL301"]]


def test_a_file_dated_before_1970_is_read_and_leaves_the_other_stamps_usable(workdir, monkeypatch):
    from batchlint import project

    monkeypatch.setattr(project, "RACY_NS", 0)
    old = write(workdir, "old.yaml", TRL_PACKED_GROUPED)
    new = write(workdir, "new.yaml", TRL_PACKED_GROUPED)
    os.utime(old, ns=(-10**9, -10**9))
    assert codes(lint([old, new], workdir, workdir / "cache")) == [["BL301"], ["BL301"]]
    cache = Cache(str(workdir / "cache"), Settings(root=str(workdir)), Options(digests=True))
    assert set(cache.stamps) == {os.path.abspath(new)}


def test_through_an_overlay_a_file_is_read_not_known_by_its_stamp(workdir, monkeypatch):
    # An overlay's bytes are not the file's on disk: its stamp says nothing of them.
    from batchlint import project

    monkeypatch.setattr(project, "RACY_NS", 0)
    path = write(workdir, "sft.yaml", TRL_PACKED_GROUPED)
    lint([path], workdir, workdir / "cache")
    cache = Cache(str(workdir / "cache"), Settings(root=str(workdir)), Options(digests=True))
    on_disk = cache._content(path)
    assert on_disk == hashlib.sha256(TRL_PACKED_GROUPED.encode()).hexdigest() == cache.stamps[os.path.abspath(path)][1]
    overlaid = TRL_PACKED_GROUPED.replace("true", "false")
    with project.overlaid({path: overlaid.encode()}):
        assert Cache(str(workdir / "cache"), Settings(root=str(workdir)), Options(digests=True))._content(path) \
            == hashlib.sha256(overlaid.encode()).hexdigest()
