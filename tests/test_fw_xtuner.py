"""XTuner v0.1 and v1: which adapter takes a file, the facts each reads, and
the checks that need more than a rule's own examples (world sizes, the
v0.1/v1 boundary, values a static reader must not guess)."""

import os

import pytest

from batchlint.config import Settings
from batchlint.engine import Options, lint_file
from batchlint.rules import RULES

from conftest import lint_text

V01_RULES = {"BL101", "BL130", "BL201", "BL330", "BL331", "BL332", "BL333", "BL334", "BL530"}

# An XTuner v0.1 SFT config in the upstream shape, with varlen attention and sp.
V01 = """\
from mmengine.dataset import DefaultSampler
from transformers import AutoModelForCausalLM
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.collate_fns import default_collate_fn
from xtuner.model import SupervisedFinetune
from xtuner.parallel.sequence import SequenceParallelSampler

use_varlen_attn = {varlen}
max_length = {max_length}
pack_to_max_length = True
sequence_parallel_size = {sp}
batch_size = 1  # per_device
accumulative_counts = 8
accumulative_counts *= sequence_parallel_size

model = dict(type=SupervisedFinetune, use_varlen_attn=use_varlen_attn, llm=dict(type=AutoModelForCausalLM.from_pretrained))
train_dataset = dict(type=process_hf_dataset, max_length=max_length, pack_to_max_length=pack_to_max_length,
                     use_varlen_attn=use_varlen_attn)
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(
    batch_size=batch_size,
    dataset=train_dataset,
    sampler=dict(type=sampler, shuffle=True),
    collate_fn=dict(type=default_collate_fn, use_varlen_attn=use_varlen_attn),
)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""
MAX_LENGTH_LINE, SP_LINE = 9, 11

# An XTuner v1 SFT config in the shape of examples/v1/config/sft_*.py.
V1 = """\
from xtuner.v1.config import AdamWConfig, FSDPConfig, LRConfig
from xtuner.v1.datasets import OpenaiTokenizeFunctionConfig
from xtuner.v1.datasets.config import DataloaderConfig, DatasetConfig
from xtuner.v1.model import Qwen3Dense8BConfig
from xtuner.v1.train import TrainerConfig

global_batch_size = {global_batch}
dataset_config = [
    {{
        "dataset": DatasetConfig(name="alpaca", anno_path="data/alpaca.jsonl"),
        "tokenize_fn": OpenaiTokenizeFunctionConfig(chat_template="qwen3", max_length=8192),
    }}
]
dataloader_config = DataloaderConfig(dataset_config_list=dataset_config, pack_max_length=16384)
fsdp_cfg = FSDPConfig(tp_size={tp})
trainer = TrainerConfig(
    model_cfg=Qwen3Dense8BConfig(),
    optim_cfg=AdamWConfig(lr=1e-5),
    lr_cfg=LRConfig(lr_type="cosine"),
    fsdp_cfg=fsdp_cfg,
    dataloader_cfg=dataloader_config,
    global_batch_size=global_batch_size,
    sp_size={sp},
    {extra}
    total_epoch=1,
)
"""
GLOBAL_LINE, TP_LINE, SP_V1_LINE = 7, 15, 23


def v1(global_batch=64, tp=1, sp=1, extra=""):
    return V1.format(global_batch=global_batch, tp=tp, sp=sp, extra=extra)


def found(result):
    return sorted((d.code, d.span.line) for d in result.diagnostics)


# -- which adapter reads a file ---------------------------------------------------------

def test_v01_config_is_read_by_the_xtuner_adapter(lint):
    assert lint("sft.py", V01.format(varlen=False, max_length=2048, sp=1)).framework == "xtuner"


def test_v1_config_is_read_by_the_v1_adapter(lint):
    assert lint("sft_v1.py", v1()).framework == "xtuner-v1"


def test_v1_module_without_a_trainer_is_not_a_config(lint):
    model_only = "from xtuner.v1.model import Qwen3Dense8BConfig\n\nmodel = Qwen3Dense8BConfig(num_hidden_layers=3)\n"
    assert lint("model.py", model_only).framework is None


def test_v01_rules_never_fire_on_v1_configs(lint):
    # v0.1's names with v0.1 mistakes (sp without scaling, DefaultSampler, varlen
    # with batch 2, LengthGroupedSampler(shuffle=...)) inside a v1 config.
    v01_mistakes = (
        "from mmengine.dataset import DefaultSampler\n"
        "from xtuner.dataset.samplers import LengthGroupedSampler\n"
        "sequence_parallel_size = 4\nuse_varlen_attn = True\nbatch_size = 2\naccumulative_counts = 16\n"
        "train_dataloader = dict(batch_size=batch_size, sampler=dict(type=LengthGroupedSampler, shuffle=True))\n"
        "optim_wrapper = dict(accumulative_counts=accumulative_counts)\n"
    )
    result = lint("mixed.py", v01_mistakes + v1(), world_size=8)
    assert result.framework == "xtuner-v1"
    assert not {d.code for d in result.diagnostics} & V01_RULES


def test_v1_import_without_trainer_is_not_read_as_v01(lint):
    text = "from xtuner.v1.model import Qwen3Dense8BConfig\nbatch_size = 1\ntrain_dataloader = dict(batch_size=0)\n"
    assert lint("v1_partial.py", text).framework is None


# -- XTuner v0.1 facts ------------------------------------------------------------------

def test_v01_world_size_must_be_a_multiple_of_sp(lint):
    text = V01.format(varlen=False, max_length=2048, sp=4)
    assert found(lint("sp4.py", text, world_size=6)) == [("BL202", SP_LINE)]
    assert found(lint("sp4.py", text, world_size=8)) == []
    assert found(lint("sp4.py", text)) == []  # W unknown: silent


def test_v01_varlen_with_sp_needs_max_length_divisible_by_sp(lint):
    result = lint("varlen_sp4.py", V01.format(varlen=True, max_length=32770, sp=4))
    [finding] = result.diagnostics
    assert (finding.code, finding.span.line) == ("BL401", MAX_LENGTH_LINE)
    assert "32770" in finding.message and "multiple of 4" in finding.message and "32768" in finding.fix


def test_v01_max_length_needs_no_multiple_without_varlen_or_sp(lint):
    # default_collate_fn pads for sp when varlen is off; with sp = 1 nothing is split.
    assert found(lint("padded.py", V01.format(varlen=False, max_length=32770, sp=4))) == []
    assert found(lint("sp1.py", V01.format(varlen=True, max_length=32770, sp=1))) == []


def test_v01_packed_length_comes_from_build_packed_dataset(lint):
    text = V01.format(varlen=True, max_length=32768, sp=4).replace(
        "train_dataset = dict(type=process_hf_dataset, max_length=max_length,",
        "train_dataset = dict(type=build_packed_dataset, packed_length=8190, max_length=max_length,",
    )
    [finding] = lint("internevo.py", "from xtuner.dataset.intern_repo import build_packed_dataset\n" + text).diagnostics
    assert finding.code == "BL401" and "8190" in finding.message


def test_v01_accumulation_scaling_is_inserted_on_the_line_spans_count(lint):
    # A form feed is whitespace to Python's tokenizer but a line break to str.splitlines():
    # the line after `accumulative_counts = 3` is found as the tokenizer numbers lines.
    text = ("# a\x0cb\nsequence_parallel_size = 4\nbatch_size = 1\naccumulative_counts = 3  # sp=1\n"
            "train_dataloader = dict(batch_size=batch_size)\n"
            "optim_wrapper = dict(accumulative_counts=accumulative_counts)\n")
    [finding] = lint("form_feed.py", text).diagnostics
    assert finding.code == "BL101" and finding.span.line == 4
    [edit] = finding.edits
    assert (edit.span.line, edit.span.column) == (4, 32)
    assert edit.replacement == "\naccumulative_counts *= sequence_parallel_size"


def test_v01_sampler_variable_at_sp4_takes_shuffle(lint):
    # `sampler` resolves to SequenceParallelSampler, which accepts shuffle: no BL332.
    assert found(lint("sp4.py", V01.format(varlen=False, max_length=2048, sp=4))) == []


def test_v01_user_sampler_of_the_same_name_is_not_judged(lint):
    text = V01.format(varlen=False, max_length=2048, sp=4).replace(
        "from xtuner.parallel.sequence import SequenceParallelSampler", "from mylab.samplers import SequenceParallelSampler"
    ).replace("shuffle=True", "shuffle=True, bucket=4")
    assert "BL332" not in {d.code for d in lint("own.py", text).diagnostics}


def test_v01_varlen_flag_disagreement_points_at_the_odd_flag(lint, tmp_path):
    (tmp_path / "requirements.txt").write_text("xtuner==0.2.0\n")  # varlen attention exists from 0.1.14
    text = V01.format(varlen=True, max_length=4096, sp=1).replace(
        "collate_fn=dict(type=default_collate_fn, use_varlen_attn=use_varlen_attn)",
        "collate_fn=dict(type=default_collate_fn, use_varlen_attn=False)",
    )
    [finding] = lint("collate_off.py", text).diagnostics
    assert (finding.code, finding.span.line, finding.severity) == ("BL331", 24, "warning")
    assert "the collate_fn has use_varlen_attn = False" in finding.message and "line 8" in finding.message


def test_v01_varlen_collate_without_dataset_boundaries_is_an_error(lint, tmp_path):
    # default_collate_fn reads example["cumulative_len"], which only a varlen dataset records.
    (tmp_path / "requirements.txt").write_text("xtuner==0.1.14\n")
    text = V01.format(varlen=True, max_length=4096, sp=1).replace(
        "                     use_varlen_attn=use_varlen_attn)", "                     use_varlen_attn=False)"
    )
    [finding] = lint("dataset_off.py", text).diagnostics
    assert (finding.code, finding.span.line, finding.severity) == ("BL331", 18, "error")
    # Without a pin every release is weighed, and those before 0.1.14 have no varlen attention.
    [finding] = lint_text(tmp_path / "unpinned", "dataset_off.py", text).diagnostics
    assert (finding.code, finding.severity) == ("BL331", "info")


def test_v01_varlen_unknown_flag_is_not_compared(lint):
    text = "import os\n" + V01.format(varlen="os.environ.get('VARLEN') == '1'", max_length=4096, sp=1)
    assert found(lint("env.py", text)) == []


# -- XTuner v1 facts --------------------------------------------------------------------

def test_v1_global_batch_must_divide_by_dp(lint):
    # dp = W / (tp x sp) = 16 / (2 x 2) = 4; 66 is not a multiple of 4.
    result = lint("gbs.py", v1(global_batch=66, tp=2, sp=2), world_size=16)
    [finding] = result.diagnostics
    assert (finding.code, finding.span.line) == ("BL103", GLOBAL_LINE)
    assert "global_batch_size 66" in finding.message and "dp (4)" in " ".join(finding.notes)
    assert found(lint("gbs.py", v1(global_batch=64, tp=2, sp=2), world_size=16)) == []
    assert found(lint("gbs.py", v1(global_batch=66, tp=2, sp=2))) == []  # W unknown: dp unknown


def test_v1_intra_layer_micro_batch_divides_the_per_rank_batch(lint):
    # 8 ranks take 40 / 8 = 5 packs per step, fed 2 at a time: not whole.
    extra = "intra_layer_micro_batch=2,"
    [finding] = lint("ilmb.py", v1(global_batch=40, extra=extra), world_size=8).diagnostics
    assert finding.code == "BL103" and "intra_layer_micro_batch (2) x dp (8) = 16" in " ".join((finding.message,) + finding.notes)
    # 2 does not divide 39 for any W.
    [finding] = lint("ilmb_any.py", v1(global_batch=39, extra=extra)).diagnostics
    assert finding.code == "BL103" and "for any world size" in finding.message


def test_v1_layout_must_divide_world_size(lint):
    result = lint("layout.py", v1(global_batch=48, tp=2, sp=4), world_size=12)
    assert found(result) == [("BL202", SP_V1_LINE)]
    assert found(lint("layout.py", v1(global_batch=48, tp=2, sp=4), world_size=16)) == []


def test_v1_global_batch_none_is_dp_times_intra_layer_micro_batch(lint):
    result = lint("none.py", v1(global_batch=None), world_size=8, global_batch=64)
    [finding] = result.diagnostics
    assert finding.code == "BL102" and "the global batch is 8" in finding.message


def test_v1_target_global_batch_is_the_declared_one(lint):
    assert found(lint("target.py", v1(global_batch=64), world_size=8, global_batch=64)) == []
    assert found(lint("target.py", v1(global_batch=64), world_size=8, global_batch=128)) == [("BL102", GLOBAL_LINE)]


@pytest.mark.parametrize(
    "change",
    [
        # values only the environment knows, as the upstream v1 configs read them
        ("global_batch_size = {global_batch}", "global_batch_size = int(os.environ.get('GLOBAL_BATCH_SIZE', '66'))"),
        # a name assigned twice: which value the call saw is not followed
        ("fsdp_cfg = FSDPConfig", "global_batch_size = 64\nfsdp_cfg = FSDPConfig"),
        # a call's result changed in a way not followed
        ("trainer = TrainerConfig(", "fsdp_cfg.__dict__.update(tp_size=3)\ntrainer = TrainerConfig("),
    ],
)
def test_v1_values_that_cannot_be_known_give_no_finding(lint, change):
    old, new = change
    text = "import os\n" + V1.replace(old, new).format(global_batch=66, tp=2, sp=2, extra="")
    assert found(lint("unknown.py", text, world_size=16)) == []


def test_v1_attribute_assignment_is_followed(lint):
    # pydantic models take attribute assignment: the trainer sees tp 3, and 16 GPUs are not a multiple of 3 x 2.
    text = v1(global_batch=64, tp=2, sp=2).replace("trainer = TrainerConfig(", "fsdp_cfg.tp_size = 3\ntrainer = TrainerConfig(")
    assert found(lint("assigned.py", text, world_size=16)) == [("BL202", 16)]


def test_v1_non_ascii_line_keeps_character_columns(lint):
    line = '    work_dir="工作目录", global_batch_size=66,'
    text = v1(tp=2, sp=2).replace("    global_batch_size=global_batch_size,", line)
    [finding] = lint("cjk.py", text, world_size=16).diagnostics
    assert (finding.code, finding.span.line, finding.span.column) == ("BL103", 22, line.index("66") + 1)


def test_v1_grouping_check_reads_dataloader_configs_anywhere(lint):
    text = v1().replace("pack_max_length=16384)", 'pack_max_length=16384, pack_level="none", group_by_length=True)')
    assert found(lint("grouped.py", text)) == [("BL335", 14)]
    # pack_level "none" alone: group_by_length is inferred False.
    assert found(lint("ok.py", v1().replace("pack_max_length=16384)", 'pack_level="none")'))) == []


# -- the examples users are shown --------------------------------------------------------

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "xtuner")


def test_xtuner_examples_report_what_their_comments_promise():
    settings = Settings(root=EXAMPLES)
    seen = {}
    for name in sorted(n for n in os.listdir(EXAMPLES) if n.endswith(".py")):
        result = lint_file(os.path.join(EXAMPLES, name), settings, Options(), RULES)
        assert result.framework == "xtuner", name
        seen[name] = found(result)
    assert seen == {
        # Both at lines of _base_/internlm2_7b_qlora_sft.py, which the child raising sp inherits.
        "internlm2_7b_sp4_inherited.py": [("BL101", 20), ("BL201", 32)],
        "internlm2_7b_sp4_inherited_fixed.py": [],
        "internlm2_7b_sp4_sft.py": [("BL101", 20)],
        "internlm2_7b_sp4_sft_fixed.py": [],
        "internlm2_7b_varlen_sp4.py": [("BL130", 26)],
        "internlm2_7b_varlen_sp4_fixed.py": [],
        "llava_packed_grouped.py": [("BL301", 13)],
    }


def test_v1_call_with_double_star_arguments_is_not_guessed(lint):
    # `**common` may set sp_size or fsdp_cfg: defaults would be guesses.
    text = "common = dict(sp_size=4)\n" + v1(global_batch=66, tp=2, sp=2).replace("    sp_size=2,", "    **common,")
    assert lint("star.py", text, world_size=16).diagnostics == []


# -- BL101/BL105: the accumulation judged by the global batch it gives at sp = 1 and at sp ----

SP_ACC = """\
import os
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = {sp}
batch_size = {micro}  # per_device
{above}accumulative_counts = {ga}
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""


def sp_acc(ga, sp=4, micro=1, above=""):
    return SP_ACC.format(ga=ga, sp=sp, micro=micro, above=above)


def sp_codes(lint, text, **kwargs):
    return [(d.code, d.severity, d.span.line) for d in lint("sft.py", text, **kwargs).diagnostics
            if d.code in ("BL101", "BL105")]


@pytest.mark.parametrize("ga", [
    "16 * sequence_parallel_size",
    "sequence_parallel_size * 16 // 2",
    "8 if sequence_parallel_size == 1 else 32",
    "16\naccumulative_counts *= sequence_parallel_size",
    "max(1, 16) * sequence_parallel_size",
])
def test_an_accumulation_that_keeps_the_global_batch_is_clean(lint, ga):
    assert sp_codes(lint, sp_acc(ga)) == []


@pytest.mark.parametrize("ga,at_sp1,ratio", [
    ("64 // sequence_parallel_size", 64, "16x smaller"),  # sp^2 smaller: a textual check let it pass
    ("16 * sequence_parallel_size * sequence_parallel_size", 16, "4x larger"),
    ("32 if sequence_parallel_size == 1 else 16", 32, "8x smaller"),
])
def test_an_accumulation_derived_from_sp_that_changes_the_global_batch_is_bl101(lint, ga, at_sp1, ratio):
    [finding] = lint("sft.py", sp_acc(ga), world_size=16).diagnostics
    assert (finding.code, finding.severity, finding.span.line) == ("BL101", "warning", 7)
    assert finding.message.endswith(f"was {at_sp1 * 16} at sp = 1")  # 1 x at_sp1 x W 16
    said = " ".join((finding.message,) + finding.notes)
    assert f", {at_sp1} at sp = 1" in said and ratio in said
    assert f"`accumulative_counts = {at_sp1} * sequence_parallel_size`" in finding.fix
    assert finding.edits == ()  # which batch was meant is the author's call


def test_a_micro_batch_derived_from_sp_counts_too(lint):
    # batch_size 4 // sp: 1 at sp 4, 4 at sp 1; accumulation 16 literal: 16 x W/4 against 64 x W.
    [finding] = lint("sft.py", sp_acc(16, micro="4 // sequence_parallel_size")).diagnostics
    assert finding.code == "BL101" and finding.message == "global batch 16 x W/4 at sp = 4, was 64 x W at sp = 1"
    assert any("16x smaller" in note for note in finding.notes)
    assert "make batch_size x accumulative_counts 256 at sequence_parallel_size = 4" in finding.fix
    assert sp_codes(lint, sp_acc("16 * sequence_parallel_size", micro="4 // sequence_parallel_size")) == [
        ("BL101", "warning", 7)]  # per rank 1 x 64 against 4 x 16 x 4
    assert sp_codes(lint, sp_acc("16 * sequence_parallel_size ** 2", micro="4 // sequence_parallel_size")) == []


def test_a_derivation_unknown_at_sp1_is_not_judged(lint):
    ga = "64 // sequence_parallel_size if sequence_parallel_size > 1 else int(os.environ['GA'])"
    assert sp_codes(lint, sp_acc(ga)) == []


@pytest.mark.parametrize("ga,sp", [("16", 4), ("6", 4), ("1", 8)])
def test_a_literal_is_bl105_info_with_both_batches(lint, ga, sp):
    [finding] = lint("sft.py", sp_acc(ga, sp=sp), world_size=32).diagnostics
    assert (finding.code, finding.severity) == ("BL105", "info")
    now, then = int(ga) * 32 // sp, int(ga) * 32
    assert finding.message.startswith(f"global batch {now} at sp = {sp}, {then} at sp = 1")
    said = " ".join(finding.notes)
    assert f"{now} sequences (1 x {ga} x dp" in said and f"{then} sequences (1 x {ga} x W 32) at sp = 1" in said
    assert finding.edits == ()
    assert sp_codes(lint, sp_acc(ga, sp=1)) == []


@pytest.mark.parametrize("above,ga", [
    ("# bs = 32 gpus * 1 batch_size_per_device * 8 acc / 8 sequence parallel\n", "8"),
    ("# Upon setting the sequence parallelism dimension to `SP`, scale this.\n# (see the guide)\n", "16"),
    ("", "16  # already x sp"),
    ("", "16  # for sequence_parallel_size=4"),
    ("", "16  # Ulysses 4 ranks"),
])
def test_a_literal_its_comment_writes_for_this_sp_is_clean(lint, above, ga):
    sp = 8 if "8 sequence parallel" in above else 4
    assert sp_codes(lint, sp_acc(ga, sp=sp, above=above)) == []
    if sp == 8:  # the same comment under another sp is stale: the literal is for sp 8
        assert sp_codes(lint, sp_acc(ga, sp=4, above=above)) == [("BL101", "warning", 8)]


@pytest.mark.parametrize("above,ga,line", [
    ("", "6  # tuned at sp=1", 7),
    ("", "6  # SP: 1", 7),
    ("# bs = 8 gpus * 1 batch_size_per_device * 1 acc / 1 sequence parallel\n", "1", 8),
    ("", "16  # for sp=8", 7),
])
def test_a_literal_its_comment_writes_for_another_sp_is_bl101(lint, above, ga, line):
    [finding] = lint("sft.py", sp_acc(ga, above=above)).diagnostics
    assert (finding.code, finding.severity, finding.span.line) == ("BL101", "warning", line)
    assert "as its comment says" in " ".join(finding.notes)
    assert bool(finding.edits) == ("sp=8" not in ga)  # `*= sp` only restores the batch of sp = 1


def test_a_comment_further_up_or_on_another_value_does_not_count(lint):
    # A code line between the comment and the value ends the comment block; a comment
    # on the line before (about batch_size) is not about accumulation either.
    text = sp_acc("16", above="").replace("batch_size = 1  # per_device", "batch_size = 1  # per_device, sp=1")
    text = text.replace("import os\n", "import os\n# sequence parallel 1\n")
    assert sp_codes(lint, text) == [("BL105", "info", 8)]


def test_the_bl101_fix_follows_the_value_to_the_fixed_point(lint):
    fixed = sp_acc("6  # tuned at sp=1\naccumulative_counts *= sequence_parallel_size")
    assert sp_codes(lint, fixed) == []
