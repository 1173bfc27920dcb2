"""TorchTitan: the upstream mistakes DOMAIN.md names, linted with the world
size they were written against; the adapter's facts; the v0.2.2 key set
against the installed package."""

import contextlib
import dataclasses
import importlib.util
import os
import sys
import types

import pytest

from batchlint.frameworks import torchtitan, torchtitan_keys
from batchlint.frameworks.facts import Outside
from batchlint.plan import Fact, Origin
from batchlint.sources.toml import read_toml

from conftest import CORPUS, lint_text, load_tool, write

LLAMA4_128E = os.path.join(CORPUS, "torchtitan", "torchtitan", "models", "llama4", "train_configs", "llama4_17bx128e.toml")


def by_code(result):
    return {d.code: d for d in result.diagnostics}


def plan_of(text, world_size=None):
    doc = read_toml("t.toml", text)
    world = Fact(world_size, "world size", None, "--world-size") if world_size else None
    return torchtitan.plan(doc, Outside(world_size=world))


@pytest.mark.skipif(not os.path.isfile(LLAMA4_128E), reason="../shared/corpus is not present")
def test_llama4_maverick_needs_32_gpus_and_4_microbatches(tmp_path):
    """llama4_17bx128e.toml: tp 8 x pp 4 = 32 GPUs against run_train.sh's default NGPU=8, and
    local_batch_size 1 = 1 microbatch for the 4 stages of the default 1F1B schedule."""
    with open(LLAMA4_128E, encoding="utf-8") as handle:
        text = handle.read()
    found = by_code(lint_text(tmp_path, "llama4_17bx128e.toml", text, world_size=8))
    assert set(found) == {"BL202", "BL111"}, [d.text for d in found.values()]
    layout, microbatches = found["BL202"], found["BL111"]
    assert layout.span.line == 42 and "32" in layout.message and "W (8)" in layout.message
    assert microbatches.span.line == 33  # local_batch_size = 1
    assert "1 microbatch" in microbatches.message and "4 stages" in microbatches.message
    assert "local_batch_size to 4" in microbatches.fix
    # On the 32 GPUs it was written for, the layout fits; the schedule still refuses.
    assert set(by_code(lint_text(tmp_path, "llama4_17bx128e.toml", text, world_size=32))) == {"BL111"}


def _pin(folder, requirement):
    """Pin a release beside the configs, forgetting the releases read so far."""
    from batchlint import per_run, versions

    write(folder, "requirements.txt", requirement + "\n")
    versions._cache.clear()
    per_run.forget()


def test_a_config_from_before_the_renames_fails_to_parse(tmp_path):
    """Keys main read before 0.1.0: 0.2.0 on refuse them (an error where the project runs one),
    0.1.0 drops them, main before it read them: an info while the release is unknown."""
    old = (
        "[training]\nbatch_size = 8\nseq_len = 2048\n\n"
        "[parallelism]\npipeline_parallel_degree = 2\npipeline_parallel_microbatches = 4\n"
        "[experimental]\ncontext_parallel_degree = 2\n"
    )
    found = [d for d in lint_text(tmp_path, "old.toml", old).diagnostics if d.code == "BL510"]
    assert [(d.span.line, d.severity) for d in found] == [(2, "info"), (7, "info"), (9, "info")]
    _pin(tmp_path, "torchtitan==0.2.2")
    found = [d for d in lint_text(tmp_path, "old.toml", old).diagnostics if d.code == "BL510"]
    assert [(d.span.line, d.severity) for d in found] == [(2, "error"), (7, "error"), (9, "error")]
    assert "local_batch_size" in found[0].fix
    assert "pipeline_parallel_microbatch_size" in found[1].fix
    assert "[parallelism]" in found[2].fix  # moved, not renamed


EARLY_2025 = """\
[job]
dump_folder = "./outputs"

[model]
name = "llama3"
flavor = "8B"
norm_type = "rmsnorm"  # layernorm / np_layernorm / rmsnorm
tokenizer_path = "./assets/tokenizer/original/tokenizer.model"

[training]
batch_size = 1
seq_len = 8192
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1
tensor_parallel_degree = 1
compile = false

[experimental]
context_parallel_degree = 1
pipeline_parallel_degree = 1

[checkpoint]
model_weights_only = false
"""


def test_the_layout_of_early_2025_is_no_error_while_the_release_is_unknown(tmp_path):
    """The layout of main before 785c34c99 (2025-03-18; torchtitan/models/llama/train_configs/llama3_8b.toml
    then): main of that time read all these keys, 0.1.0 drops them, 0.2.0 on refuse them. Unpinned:
    infos, no error; pinned to 0.0.2 (main before 0.1.0), nothing; pinned to 0.2.2, errors."""
    found = [d for d in lint_text(tmp_path, "llama3_8b.toml", EARLY_2025).diagnostics]
    assert {d.code for d in found} == {"BL510"} and len(found) == 8
    assert {d.severity for d in found} == {"info"}
    _pin(tmp_path, "torchtitan==0.0.2")
    assert lint_text(tmp_path, "llama3_8b.toml", EARLY_2025).diagnostics == []
    _pin(tmp_path, "torchtitan==0.2.2")
    found = [d for d in lint_text(tmp_path, "llama3_8b.toml", EARLY_2025).diagnostics if d.code == "BL510"]
    assert {d.severity for d in found} == {"error"} and len(found) == 9  # and [training] compile, 0.1.0's


def _degrees(folder, text, world=8) -> dict:
    """The degrees the adapter plans a file in `folder` with (the release in force is the folder's)."""
    doc = read_toml(os.path.join(str(folder), "t.toml"), text)
    plan = torchtitan.plan(doc, Outside(world_size=Fact(world, "world size", None, Origin.COMMAND_LINE)))
    return {k: (f.value, f.key) for k, f in plan.parallel.items() if k in ("dp_replicate", "dp_shard", "tp", "pp", "cp")}


def test_the_degrees_of_early_2025_are_read_where_main_before_0_1_0_runs(tmp_path):
    """[training] tensor_parallel_degree 3 and [experimental] pipeline_parallel_degree: main before 785c34c99
    read them (config_manager.py:363-365, 396-398 @ 785c34c99~1), so W 8 does not fit tp 3 there (BL202 at
    the tp value, line 15). Unpinned, 0.1.0 would drop them and 0.2.0 refuse them: not planned from them."""
    text = EARLY_2025.replace("tensor_parallel_degree = 1", "tensor_parallel_degree = 3")
    unpinned = lint_text(tmp_path, "llama3_8b.toml", text, world_size=8)
    assert "BL202" not in {d.code for d in unpinned.diagnostics}
    assert _degrees(tmp_path, text)["tp"] == (1, "[parallelism] tensor_parallel_degree")
    _pin(tmp_path, "torchtitan==0.0.2")
    pinned = lint_text(tmp_path, "llama3_8b.toml", text, world_size=8)
    # tp 3 splits neither W 8 nor the 8 key/value heads of llama3 8B (BL217).
    assert [(d.code, d.span.line, d.severity) for d in pinned.diagnostics] == [("BL202", 15, "error"),
                                                                              ("BL217", 15, "error")]
    assert _degrees(tmp_path, text) == {
        "dp_replicate": (1, "[training] data_parallel_replicate_degree"),
        "dp_shard": (-1, "[training] data_parallel_shard_degree"),
        "tp": (3, "[training] tensor_parallel_degree"),
        "pp": (1, "[experimental] pipeline_parallel_degree"),
        "cp": (1, "[experimental] context_parallel_degree"),
    }
    # The same layout on 6 GPUs fits W (dp_shard takes 6 // 3 = 2), not llama3 8B's heads.
    assert [d.code for d in lint_text(tmp_path, "llama3_8b.toml", text, world_size=6).diagnostics] == ["BL217"]


# The layout of April-May 2024 (c22d1a8d1 to aafe0e870): one dp degree, pp under [training].
SPRING_2024 = """\
[model]
name = "llama3"
flavor = "8B"

[training]
batch_size = 8
seq_len = 2048
data_parallel_degree = {dp}
tensor_parallel_degree = 2
pipeline_parallel_degree = 2
"""


@pytest.mark.parametrize("dp, world, expected", [(-1, 12, []), (-1, 10, [("BL202", 9)]), (4, 8, [("BL202", 8)]),
                                                 (2, 8, [])])
def test_the_single_dp_degree_of_spring_2024_is_the_shard_degree(tmp_path, dp, world, expected):
    """data_parallel_degree -1 took W // (tp x pp), and dp x tp x pp had to be W (parallelisms/__init__.py:
    29-34 @ c22d1a8d1)."""
    _pin(tmp_path, "torchtitan==0.0.2")
    result = lint_text(tmp_path, "t.toml", SPRING_2024.format(dp=dp), world_size=world)
    assert [(d.code, d.span.line) for d in result.diagnostics] == expected
    degrees = _degrees(tmp_path, SPRING_2024.format(dp=dp), world)
    assert degrees["dp_shard"] == (dp, "[training] data_parallel_degree")
    assert degrees["pp"] == (2, "[training] pipeline_parallel_degree")


def test_parallelism_wins_over_an_older_key_in_the_same_file(tmp_path):
    _pin(tmp_path, "torchtitan==0.0.2")
    text = EARLY_2025 + "\n[parallelism]\ntensor_parallel_degree = 2\n"
    assert _degrees(tmp_path, text)["tp"] == (2, "[parallelism] tensor_parallel_degree")


def test_a_key_no_release_reads_is_a_warning_while_the_release_is_unknown(tmp_path):
    """0.2.0 on refuse the file, 0.1.0 and main before it drop the key: no release reads it."""
    text = "[training]\nlocal_batch_size = 8\nlocal_batch_sise = 8\n"
    [found] = [d for d in lint_text(tmp_path, "t.toml", text).diagnostics if d.code == "BL510"]
    assert found.severity == "warning" and "drop it silently" in " ".join((found.message,) + found.notes)


def test_compile_in_training_is_what_0_1_0_compiles_with():
    """v0.1.0's own llama3_405b.toml: [training] compile = true with async TP (config_manager.py:235,
    models/llama3/infra/parallelize.py:49-54 @ v0.1.0). It is the compile setting, not [compile]."""
    text = (
        '[model]\nname = "llama3"\nflavor = "405B"\n\n[training]\nlocal_batch_size = 2\ncompile = true\n\n'
        "[parallelism]\ntensor_parallel_degree = 8\nenable_async_tensor_parallel = true\n"
    )
    compiled = plan_of(text).settings.compile_model
    assert (compiled.value, compiled.key, compiled.span.line) == (True, "[training] compile", 7)
    eager = plan_of(text.replace("compile = true", "compile = false")).settings.compile_model
    assert eager.value is False
    # [training] compile decides even beside a [compile] section (0.1.0 drops the section).
    both = plan_of(text + "\n[compile]\nenable = false\n").settings.compile_model
    assert both.value is True


@pytest.mark.parametrize("pin", ["torchtitan==0.3.0", "torchtitan>=0.3"])
def test_a_toml_file_is_no_config_of_a_torchtitan_that_reads_none(tmp_path, pin):
    """0.3.0 reads config registries only (config/manager.py:34-48 @ 0.3.0): a TOML file of a project
    that runs it configures nothing, so no TorchTitan rule judges it."""
    text = "[training]\nlocal_batch_size = 6\n\n[parallelism]\npipeline_parallel_degree = 2\npipeline_parallel_microbatch_size = 4\n"
    assert "BL110" in {d.code for d in lint_text(tmp_path, "t.toml", text).diagnostics}
    _pin(tmp_path, pin)
    result = lint_text(tmp_path, "t.toml", text)
    assert result.framework is None and result.diagnostics == []
    _pin(tmp_path, "torchtitan==0.2.2")
    assert "BL110" in {d.code for d in lint_text(tmp_path, "t.toml", text).diagnostics}


def test_the_releases_are_pypi_s_and_the_tables_name_only_them():
    """Every torchtitan release on PyPI, oldest first; the models' first releases and the keys of main
    before 0.1.0 agree with the embedded key sets."""
    from batchlint.frameworks.torchtitan_keys import KEY_SETS
    from batchlint.versions import version_key

    releases = torchtitan.DISTRIBUTION.releases
    assert releases == ("0.0.2", "0.1.0", "0.2.0", "0.2.1", "0.2.2", "0.3.0")
    assert [version_key(r) for r in releases] == sorted(version_key(r) for r in releases)
    assert {m.since for m in torchtitan.MODELS.values()} <= {None, *releases}
    assert not torchtitan.PRE_RELEASE_KEYS & KEY_SETS.union


def test_adapter_reads_every_degree_and_resolves_the_shard_degree():
    text = (
        '[model]\nname = "llama3_ft"\n\n[training]\nlocal_batch_size = 2\nseq_len = 4096\n\n'
        "[parallelism]\ndata_parallel_replicate_degree = 2\ntensor_parallel_degree = 2\n"
        "context_parallel_degree = 2\nexpert_parallel_degree = 4\nexpert_tensor_parallel_degree = 1\n"
    )
    plan = plan_of(text, world_size=32)
    assert {k: f.value for k, f in plan.parallel.items()} == {
        "dp_replicate": 2, "dp_shard": -1, "tp": 2, "pp": 1, "cp": 2, "ep": 4, "etp": 1}
    assert plan.data_parallel.value == 2 * 4  # dp_shard = 32 // (2 x 2 x 2 x 1)
    assert plan.seq_len_multiple.value == 2 * 2 * 2  # llama3_ft uses llama3's parallelize
    assert torchtitan.resolved_shard(plan.parallel, None) is None  # -1 without W: unknown
    assert plan_of(text).data_parallel is None
    assert plan.settings.shard_degree.value == 4 and plan_of(text).settings.shard_degree is None


def test_settings_are_written_values_or_the_v022_defaults():
    text = (
        '[model]\nname = "qwen3"\n\n[training]\nlocal_batch_size = 2\n\n'
        '[parallelism]\npipeline_parallel_degree = 2\npipeline_parallel_schedule = "GPipe"\n'
        "data_parallel_shard_degree = 2\n\n[compile]\nenable = true\ncomponents = [\"loss\"]\n"
    )
    titan = plan_of(text).settings
    assert (titan.model.value, titan.model.span.line, titan.model_support.pipelining) == ("qwen3", 2, False)
    assert (titan.pp_schedule.value, titan.pp_schedule.span.line) == ("GPipe", 9)
    assert titan.compile_model.value is False and titan.compile_model.span.line == 12  # no "model" component
    assert titan.shard_degree.value == 2 and titan.shard_degree.span.line == 10
    defaults = {f.key: f.value for f in (titan.async_tp, titan.pp_schedule_csv, titan.pp_microbatch_size,
                                         titan.ep_comm_backend) if f.origin is Origin.DEFAULT}
    assert defaults == {"[parallelism] enable_async_tensor_parallel": False,
                        "[parallelism] pipeline_parallel_schedule_csv": "",
                        "[parallelism] pipeline_parallel_microbatch_size": 1,
                        "[parallelism] expert_parallel_comm_backend": "standard"}
    bare = plan_of("[training]\nlocal_batch_size = 2\n").settings
    assert (bare.model.value, bare.model.origin, bare.model_support) == ("llama3", Origin.DEFAULT, torchtitan.MODELS["llama3"])
    assert bare.compile_model.value is False and bare.compile_model.span is None
    # A model not in the table: nothing known, nothing model-specific checked.
    other = plan_of('[model]\nname = "mine"\n\n[training]\nlocal_batch_size = 2\n').settings
    assert other.model_support == torchtitan.ModelSupport() and other.model_support.pipelining


def _installed_source():
    """The installed v0.2.2 torchtitan/config/job_config.py, or skip."""
    spec = importlib.util.find_spec("torchtitan")
    if spec is None:
        pytest.skip("torchtitan is not installed")
    from importlib.metadata import version

    if version("torchtitan") != "0.2.2":
        pytest.skip(f"the embedded key set is v0.2.2's, found torchtitan {version('torchtitan')}")
    return spec


@contextlib.contextmanager
def _imported_job_config():
    """torchtitan's JobConfig class, imported without the package __init__ (which needs
    triton); every torchtitan module it imported is forgotten afterwards, so that a later
    import (tests/differential) finds the real package and not this stub."""
    spec = _installed_source()
    before = {name for name in sys.modules if name.partition(".")[0] == "torchtitan"}
    try:
        if "torchtitan" not in sys.modules and importlib.util.find_spec("triton") is None:
            package = types.ModuleType("torchtitan")
            package.__path__ = list(spec.submodule_search_locations)
            sys.modules["torchtitan"] = package
        yield pytest.importorskip("torchtitan.config.job_config").JobConfig
    finally:
        for name in [n for n in sys.modules if n.partition(".")[0] == "torchtitan" and n not in before]:
            del sys.modules[name]


def _fields(cls):
    return {f.name: _fields(f.type) if dataclasses.is_dataclass(f.type) else None for f in dataclasses.fields(cls)}


def test_embedded_key_set_is_the_installed_job_config():
    with _imported_job_config() as job_config:
        assert torchtitan_keys.JOB_CONFIG_KEYS == _fields(job_config)


def test_the_generator_reads_the_installed_job_config_as_the_dataclasses_do():
    """tools/generate_torchtitan_keys.py reads the source with ast; on the installed
    file it gives the committed table, in source order."""
    spec = _installed_source()
    path = os.path.join(spec.submodule_search_locations[0], "config", "job_config.py")
    generator = load_tool("generate_torchtitan_keys")
    with open(path, encoding="utf-8") as handle:
        read = generator.job_config_keys(handle.read())
    assert read == torchtitan_keys.JOB_CONFIG_KEYS
    assert generator.flatten(read) == generator.flatten(torchtitan_keys.JOB_CONFIG_KEYS)


# -- values no real config has: never a crash or a hang (found by fuzz/fuzz.py) ----------------

PLAIN_TP3 = (
    '[model]\nname = "llama3"\nflavor = "8B"\n\n[training]\nlocal_batch_size = 8\nsteps = 1000\n\n'
    "[parallelism]\ndata_parallel_shard_degree = -1\ntensor_parallel_degree = 3\n"
)


@pytest.mark.parametrize("world_size", [None, 6, 8])
def test_tp3_with_the_default_seq_len_is_reported_at_the_degree(tmp_path, world_size):
    """seq_len left at its default 2048 is no multiple of tp 3 x 2: the finding has no seq_len
    line to point at, so it points at tensor_parallel_degree (it used to crash the linter)."""
    result = lint_text(tmp_path, "llama3_8b.toml", PLAIN_TP3, world_size=world_size)
    assert result.error is None
    [finding] = [d for d in result.diagnostics if d.code == "BL401"]
    assert finding.span.line == 11 and "seq_len 2048 is not a multiple of 6" in finding.message


def test_a_huge_prime_local_batch_suggests_a_divisor_at_once(tmp_path):
    """BL110 suggests the largest divisor of local_batch_size below the microbatch size;
    it used to list every divisor from 1 to local_batch_size (2**61 - 1 steps here)."""
    prime = 2**61 - 1
    text = (f"[training]\nlocal_batch_size = {prime}\n\n[parallelism]\npipeline_parallel_degree = 2\n"
            "pipeline_parallel_microbatch_size = 2\n")
    with _time_limit(5):
        result = lint_text(tmp_path, "t.toml", text)
    [finding] = [d for d in result.diagnostics if d.code == "BL110"]
    assert f"a divisor of {prime} (e.g. 1)" in finding.fix


def _time_limit(seconds):
    import contextlib
    import signal

    @contextlib.contextmanager
    def limit():
        def expired(signum, frame):
            raise TimeoutError(f"over {seconds} s")

        previous = signal.signal(signal.SIGALRM, expired)
        signal.alarm(seconds)
        try:
            yield
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)

    return limit()


@pytest.mark.parametrize("replicate", [0, -2])
def test_a_replicate_degree_below_one_gives_no_data_parallel_size(tmp_path, replicate):
    """dp = replicate x shard came out 0 (or negative) and BL101 divided the global batch by it.
    The degree itself is BL211's finding; dp is unknown."""
    text = (f"[training]\nlocal_batch_size = 2\nglobal_batch_size = 128\n\n[parallelism]\n"
            f"data_parallel_replicate_degree = {replicate}\ndata_parallel_shard_degree = 15\n")
    result = lint_text(tmp_path, "t.toml", text, world_size=8)
    assert result.error is None
    assert {d.code for d in result.diagnostics} == {"BL211"}
    assert plan_of(text, world_size=8).data_parallel is None


def test_without_a_global_batch_there_is_no_accumulation_for_any_w(tmp_path):
    """global_batch_size -1 (the default) means local_batch_size x dp: accumulation 1 whatever W is."""
    from batchlint.config import Settings
    from batchlint.run import explain

    (tmp_path / "t.toml").write_text('[model]\nname = "llama3"\n\n[training]\nlocal_batch_size = 8\n')
    [explained] = explain(str(tmp_path / "t.toml"), Settings(root=str(tmp_path)))
    rows = {row.name: row.values for row in explained.rows}
    assert rows["gradient accumulation"] == [1] and rows["world size W"] == ["?"]


def test_the_top_level_train_py_of_main_before_2025_runs_the_config(tmp_path):
    """run_llama_train.sh of main before torchtitan/train.py (2a4437014): `torchrun ... train.py --job.config_file`.
    The launch gives W (8), which tp 3 does not divide, where main before 0.1.0 runs."""
    _pin(tmp_path, "torchtitan==0.0.2")
    write(tmp_path, "train_configs/t.toml", SPRING_2024.format(dp=-1).replace("pipeline_parallel_degree = 2",
                                                                              "pipeline_parallel_degree = 1")
          .replace("tensor_parallel_degree = 2", "tensor_parallel_degree = 3"))
    script = ('#!/usr/bin/bash\nNGPU=${NGPU:-"8"}\nCONFIG_FILE=${CONFIG_FILE:-"./train_configs/t.toml"}\n'
              'torchrun --nproc_per_node=${NGPU} train.py --job.config_file ${CONFIG_FILE} $overrides\n')
    result = lint_text(tmp_path, "run_llama_train.sh", script)
    # At the config's tensor_parallel_degree (line 9 of t.toml), which splits neither W nor llama3 8B's heads.
    assert [(d.code, d.span.line) for d in result.diagnostics] == [("BL202", 9), ("BL217", 9)]
    assert "W (8)" in result.diagnostics[0].message
    # Without the config flag a train.py is any program's.
    assert lint_text(tmp_path, "other.sh", "#!/bin/bash\ntorchrun --nproc_per_node=8 train.py --lr 1e-4\n").diagnostics == []
