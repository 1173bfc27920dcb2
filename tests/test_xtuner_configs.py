"""XTuner 0.2.0's own 593 configs, from its wheel (downloaded, never committed).

They must lint without a crash and with exactly the findings we have read and
defend; with `sequence_parallel_size = 4` forced in, the latent upstream bugs
named in shared/DOMAIN.md must be found."""

import glob
import os
import re
import subprocess
import sys
import zipfile

import pytest

from batchlint.config import Settings
from batchlint.engine import Options, lint_file
from batchlint.rules import RULES

pytestmark = pytest.mark.slow

# Ten upstream configs set accumulation to a literal written for their sp. Nine
# say so in the comment above it (`# bs = 32 gpus * 1 batch_size_per_device * 8
# acc / 8 sequence parallel`) and are clean; the cohere one does not: BL105, info.
HAND_SCALED_UNSAID = {"cohere/cohere_104b/cohere_100b_128k_sp32.py"}
# Configs at sp = 1 whose accumulation is a bare literal: correct today, wrong
# as soon as someone raises sp. Forcing sp = 4 must expose each of them: the
# benchmark ones' comments say the literal is for `1 sequence parallel` (BL101,
# warning), the qwen one says nothing (BL105, info).
LATENT_STATED = {
    "llama_speed_benchmark/llama2_70b/llama2_70b_full_alpaca_enzh_8k_sp1.py",
    "llama_speed_benchmark/llama2_7b/llama2_7b_full_alpaca_enzh_32k_sp1.py",
    "llama_speed_benchmark/llama2_7b/llama2_7b_full_alpaca_enzh_8k_sp1.py",
    "llama_speed_benchmark/yi_34b/yi_34b_200k_full_alpaca_enzh_8k_sp1.py",
}
LATENT_UNSAID = {"qwen/qwen1/qwen_7b/qwen_7b_qlora_moss_sft_all_e2_gpu8.py"}
# Computes `sampler` for sp (line 91) but hard-codes DefaultSampler (line 118):
# right at sp = 1 (BL334, info: raising sp will not switch the sampler), the
# hang of BL201 once sp > 1.
LATENT_SAMPLER = "orpo/internlm/internlm2_chat_1_8b_orpo_full_varlenattn_jsonl_dataset.py"
# Benchmark configs whose sequence_parallel_size exceeds 8: on 8 GPUs
# init_sequence_parallel raises (W % sp != 0, BL202); on 32 they start.
SP_ABOVE_8 = {
    "cohere/cohere_104b/cohere_100b_128k_sp32.py",
    "llama_speed_benchmark/llama2_70b/llama2_70b_full_alpaca_enzh_256k_sp16.py",
    "llama_speed_benchmark/llama2_7b/llama2_7b_full_alpaca_enzh_1M_sp16.py",
}


@pytest.fixture(scope="module")
def configs(request, tmp_path_factory):
    """The configs folder of the xtuner 0.2.0 wheel, from pip's download
    (kept in pytest's cache when the cache plugin is on)."""
    if hasattr(request.config, "cache"):
        cache = request.config.cache.mkdir("xtuner-0.2.0")
    else:  # -p no:cacheprovider
        cache = tmp_path_factory.mktemp("wheel")
    wheels = glob.glob(os.path.join(cache, "xtuner-0.2.0-*.whl"))
    if not wheels:
        try:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "xtuner==0.2.0", "-d", str(cache)],
                check=True, capture_output=True, timeout=300,
            )
        except (subprocess.SubprocessError, OSError) as exc:
            pytest.skip(f"cannot download the xtuner 0.2.0 wheel: {exc}")
        wheels = glob.glob(os.path.join(cache, "xtuner-0.2.0-*.whl"))
    folder = tmp_path_factory.mktemp("xtuner")
    with zipfile.ZipFile(wheels[0]) as wheel:
        wheel.extractall(folder, [n for n in wheel.namelist() if n.startswith("xtuner/configs/")])
    return str(folder / "xtuner" / "configs")


def _lint_all(root, world_size=None):
    settings = Settings(root=root)
    findings = {}
    recognised = 0
    for path in sorted(glob.glob(os.path.join(root, "**", "*.*"), recursive=True)):
        result = lint_file(path, settings, Options(world_size=world_size), RULES)
        assert result.error is None, result.error
        recognised += result.framework == "xtuner"
        for d in result.diagnostics:
            findings.setdefault(d.code, set()).add(os.path.relpath(path, root).replace(os.sep, "/"))
    return findings, recognised


def test_upstream_configs_lint_with_only_defended_findings(configs):
    findings, recognised = _lint_all(configs)
    assert recognised >= 584  # every mmengine config of the wheel
    assert findings == {"BL105": HAND_SCALED_UNSAID, "BL334": {LATENT_SAMPLER}}


def test_world_size_exposes_the_configs_written_for_more_gpus(configs):
    findings, _ = _lint_all(configs, world_size=8)
    assert findings == {"BL105": HAND_SCALED_UNSAID, "BL334": {LATENT_SAMPLER}, "BL202": SP_ABOVE_8}
    findings, _ = _lint_all(configs, world_size=32)
    assert "BL202" not in findings


def test_sp4_exposes_the_latent_upstream_bugs(configs, tmp_path):
    forced = 0
    for path in glob.glob(os.path.join(configs, "**", "*.py"), recursive=True):
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        text, count = re.subn(r"(?m)^sequence_parallel_size = 1$", "sequence_parallel_size = 4", text)
        forced += count
        target = os.path.join(tmp_path, os.path.relpath(path, configs))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(text)
    assert forced > 200
    findings, _ = _lint_all(str(tmp_path))
    # Exactly these, and nothing else: the varlen configs' max_length (8192,
    # 32768) divides by 4 (BL401), the seven training configs that set
    # attn_implementation use flash_attention_2 (BL530), and `sampler` now
    # resolves to SequenceParallelSampler, which takes `shuffle` and `seed` (BL332).
    assert findings == {"BL101": LATENT_STATED, "BL105": HAND_SCALED_UNSAID | LATENT_UNSAID, "BL201": {LATENT_SAMPLER}}
