"""The releases of each framework that users run, and how a project says which one it runs
(lint/versions.py `Distribution`): one table, so that a rule about several frameworks weighs their
releases (lint/premise.py) without importing every framework's adapter. Each framework's module
re-exports its own (`from .releases import VERL as DISTRIBUTION`).

Each list holds every release on PyPI (or every tag where a framework is not on PyPI), oldest first;
the last is the newest checked. "0.dev0" stands for the layouts before the first release.
"""

from ..versions import Distribution

# -- accelerate --------------------------------------------------------------------------------
# Every accelerate release on PyPI (oldest first): what a rule's window is weighed against when the
# project pins none (lint/premise.py). A copy of accelerate's repository keeps the package under src/.
ACCELERATE_RELEASES = (
    '0.0.1', '0.1.0', '0.2.0', '0.2.1', '0.3.0', '0.4.0', '0.5.0', '0.5.1', '0.6.0', '0.6.1', '0.6.2', '0.7.0',
    '0.7.1', '0.8.0', '0.9.0', '0.10.0', '0.11.0', '0.12.0', '0.13.0', '0.13.1', '0.13.2', '0.14.0', '0.15.0',
    '0.16.0', '0.17.0', '0.17.1', '0.18.0', '0.19.0', '0.20.0', '0.20.1', '0.20.2', '0.20.3', '0.21.0', '0.22.0',
    '0.23.0', '0.24.0', '0.24.1', '0.25.0', '0.26.0', '0.26.1', '0.27.0', '0.27.1', '0.27.2', '0.28.0', '0.29.0',
    '0.29.1', '0.29.2', '0.29.3', '0.30.0', '0.30.1', '0.31.0', '0.32.0', '0.32.1', '0.33.0', '0.34.0', '0.34.1',
    '0.34.2', '1.0.0', '1.0.1', '1.1.0', '1.1.1', '1.2.0', '1.2.1', '1.3.0', '1.4.0', '1.5.0', '1.5.1', '1.5.2',
    '1.6.0', '1.7.0', '1.8.0', '1.8.1', '1.9.0', '1.10.0', '1.10.1', '1.11.0', '1.12.0', '1.13.0', '1.14.0',
    '1.15.0',
)
ACCELERATE = Distribution(("accelerate",), "accelerate", ("accelerate/__init__.py",), title="accelerate",
                            releases=ACCELERATE_RELEASES)

# -- axolotl -----------------------------------------------------------------------------------
# Every axolotl release on PyPI, oldest first (lint/premise.py weighs a rule's window against them).
# "0.dev0": the git tags and main before the first PyPI release (v0.1.0-v0.4.0, 2023-05 to 2024-11),
# which users installed from GitHub and whose YAML batchlint reads the same way.
AXOLOTL_RELEASES = (
    '0.dev0', '0.5.0', '0.5.2', '0.6.0', '0.7.0', '0.8.0', '0.8.1', '0.9.0', '0.9.1', '0.9.1.post1', '0.9.2',
    '0.10.0', '0.11.0', '0.12.0', '0.12.1', '0.12.2', '0.13.1', '0.13.2', '0.14.0', '0.15.0', '0.16.0', '0.16.1',
    '0.17.0', '0.18.0', '0.19.0',
)
# A copy's version: src/axolotl/__init__.py's `__version__ = "X"` (0.6.0-0.13.1; later releases read it
# from the installed metadata, and the copy's version stays unknown).
AXOLOTL = Distribution(("axolotl",), "axolotl", ("axolotl/__init__.py",), title="axolotl",
                       releases=AXOLOTL_RELEASES)

# -- deepspeed ---------------------------------------------------------------------------------
# Every DeepSpeed release on PyPI (oldest first; 0.3.1 is the first): what a rule's window is weighed
# against when the project pins none (lint/premise.py). A copy of DeepSpeed's repository writes its
# version in version.txt beside the package.
DEEPSPEED_RELEASES = (
    '0.3.1', '0.3.2', '0.3.3', '0.3.4', '0.3.5', '0.3.6', '0.3.7', '0.3.8', '0.3.9', '0.3.10', '0.3.12', '0.3.13',
    '0.3.14', '0.3.15', '0.3.16', '0.4.0', '0.4.1', '0.4.2', '0.4.3', '0.4.4', '0.4.5', '0.5.0', '0.5.1', '0.5.2',
    '0.5.3', '0.5.4', '0.5.5', '0.5.6', '0.5.7', '0.5.8', '0.5.9', '0.5.10', '0.6.0', '0.6.1', '0.6.3', '0.6.4',
    '0.6.5', '0.6.6', '0.6.7', '0.7.0', '0.7.1', '0.7.2', '0.7.3', '0.7.4', '0.7.5', '0.7.6', '0.7.7', '0.8.0',
    '0.8.1', '0.8.2', '0.8.3', '0.9.0', '0.9.1', '0.9.2', '0.9.3', '0.9.4', '0.9.5', '0.10.0', '0.10.1', '0.10.2',
    '0.10.3', '0.11.0', '0.11.1', '0.11.2', '0.12.0', '0.12.1', '0.12.2', '0.12.3', '0.12.4', '0.12.5', '0.12.6',
    '0.13.0', '0.13.1', '0.13.2', '0.13.3', '0.13.4', '0.13.5', '0.14.0', '0.14.1', '0.14.2', '0.14.3', '0.14.4',
    '0.14.5', '0.15.0', '0.15.1', '0.15.2', '0.15.3', '0.15.4', '0.16.0', '0.16.1', '0.16.2', '0.16.3', '0.16.4',
    '0.16.5', '0.16.6', '0.16.7', '0.16.8', '0.16.9', '0.17.0', '0.17.1', '0.17.2', '0.17.3', '0.17.4', '0.17.5',
    '0.17.6', '0.18.0', '0.18.1', '0.18.2', '0.18.3', '0.18.4', '0.18.5', '0.18.6', '0.18.7', '0.18.8', '0.18.9',
    '0.19.0', '0.19.1', '0.19.2', '0.19.3', '0.19.4', '0.19.5', '0.19.6', '0.19.7', '0.19.8',
)
DEEPSPEED = Distribution(("deepspeed",), "deepspeed", ("version.txt",), title="DeepSpeed", releases=DEEPSPEED_RELEASES)

# -- easyr1 ------------------------------------------------------------------------------------
# The release. EasyR1 is not on PyPI: its releases are its git tags (v0.3.0 2025-04-15, v0.3.1, v0.3.2);
# "0.dev0" stands for the layouts before v0.3.0 (2025-02-23 to 04-15), whose configs batchlint reads the
# same way. It installs as `verl` (setup.py `name="verl"`), so a requirement cannot be told from verl's:
# the evidence is a copy in the project (a fork, or EasyR1's own checkout), whose verl/__init__.py writes
# `__version__` ("0.2.0.dev" before v0.3.0, "0.3.3.dev0" on main after v0.3.2).
EASYR1_RELEASES = ("0.dev0", "0.3.0", "0.3.1", "0.3.2")
EASYR1 = Distribution(("easyr1",), "verl", ("verl/__init__.py",), title="EasyR1", releases=EASYR1_RELEASES)

# -- transformers, TRL ----------------------------------------------------------------------------------------
# Every transformers release on PyPI from 2.0.0 (oldest first; the 0.1 upload before it is no release of
# this library), which the Trainer's start-up checks are weighed against when the project pins none
# (lint/premise.py). TrainingArguments and the Trainer appear in 2.9.0.
TRANSFORMERS_RELEASES = (
    '2.0.0', '2.1.0', '2.1.1', '2.2.0', '2.2.1', '2.2.2', '2.3.0', '2.4.0', '2.4.1', '2.5.0', '2.5.1',
    '2.6.0', '2.7.0', '2.8.0', '2.9.0', '2.9.1', '2.10.0', '2.11.0', '3.0.0', '3.0.1', '3.0.2', '3.1.0', '3.2.0',
    '3.3.0', '3.3.1', '3.4.0', '3.5.0', '3.5.1', '4.0.0', '4.0.1', '4.1.0', '4.1.1', '4.2.0', '4.2.1', '4.2.2',
    '4.3.0', '4.3.1', '4.3.2', '4.3.3', '4.4.0', '4.4.1', '4.4.2', '4.5.0', '4.5.1', '4.6.0', '4.6.1', '4.7.0',
    '4.8.0', '4.8.1', '4.8.2', '4.9.0', '4.9.1', '4.9.2', '4.10.0', '4.10.1', '4.10.2', '4.10.3', '4.11.0', '4.11.1',
    '4.11.2', '4.11.3', '4.12.0', '4.12.1', '4.12.2', '4.12.3', '4.12.4', '4.12.5', '4.13.0', '4.14.1', '4.15.0',
    '4.16.0', '4.16.1', '4.16.2', '4.17.0', '4.18.0', '4.19.0', '4.19.1', '4.19.2', '4.19.3', '4.19.4', '4.20.0',
    '4.20.1', '4.21.0', '4.21.1', '4.21.2', '4.21.3', '4.22.0', '4.22.1', '4.22.2', '4.23.0', '4.23.1', '4.24.0',
    '4.25.1', '4.26.0', '4.26.1', '4.27.0', '4.27.1', '4.27.2', '4.27.3', '4.27.4', '4.28.0', '4.28.1', '4.29.0',
    '4.29.1', '4.29.2', '4.30.0', '4.30.1', '4.30.2', '4.31.0', '4.32.0', '4.32.1', '4.33.0', '4.33.1', '4.33.2',
    '4.33.3', '4.34.0', '4.34.1', '4.35.0', '4.35.1', '4.35.2', '4.36.0', '4.36.1', '4.36.2', '4.37.0', '4.37.1',
    '4.37.2', '4.38.0', '4.38.1', '4.38.2', '4.39.0', '4.39.1', '4.39.2', '4.39.3', '4.40.0', '4.40.1', '4.40.2',
    '4.41.0', '4.41.1', '4.41.2', '4.42.0', '4.42.1', '4.42.2', '4.42.3', '4.42.4', '4.43.0', '4.43.1', '4.43.2',
    '4.43.3', '4.43.4', '4.44.0', '4.44.1', '4.44.2', '4.45.0', '4.45.1', '4.45.2', '4.46.1', '4.46.2', '4.46.3',
    '4.47.0', '4.47.1', '4.48.0', '4.48.1', '4.48.2', '4.48.3', '4.49.0', '4.50.0', '4.50.1', '4.50.2', '4.50.3',
    '4.51.0', '4.51.1', '4.51.2', '4.51.3', '4.52.1', '4.52.2', '4.52.3', '4.52.4', '4.53.0', '4.53.1', '4.53.2',
    '4.53.3', '4.54.0', '4.54.1', '4.55.0', '4.55.1', '4.55.2', '4.55.3', '4.55.4', '4.56.0', '4.56.1', '4.56.2',
    '4.57.1', '4.57.2', '4.57.3', '4.57.4', '4.57.5', '4.57.6', '5.0.0', '5.1.0', '5.2.0', '5.3.0', '5.4.0', '5.5.0',
    '5.5.1', '5.5.2', '5.5.3', '5.5.4', '5.6.0', '5.6.1', '5.6.2', '5.7.0', '5.8.0', '5.8.1', '5.9.0', '5.10.1',
    '5.10.2', '5.10.4', '5.11.0', '5.12.0', '5.12.1', '5.13.0', '5.13.1', '5.14.0', '5.14.1', '5.15.0', '5.15.1',
    '5.16.0', '5.16.1', '5.17.0', '5.18.0', '5.19.0', '5.20.0', '5.20.1', '5.20.2', '5.21.0', '5.21.1', '5.22.0',
    '5.22.1', '5.22.2', '5.23.0', '5.24.0',
)
TRANSFORMERS = Distribution(("transformers",), "transformers", ("transformers/__init__.py",), title="transformers",
                            releases=TRANSFORMERS_RELEASES)
# The plans it calls "trl" run TRL, whose release decides whether SFTConfig still has max_seq_length.
# Every TRL release on PyPI from 0.1.0 (oldest first): what a rule's window is weighed against
# when the project pins none (lint/premise.py).
TRL_RELEASES = (
    '0.1.0', '0.2.0', '0.2.1', '0.3.0', '0.3.1', '0.4.0', '0.4.1', '0.4.2', '0.4.3', '0.4.4', '0.4.5', '0.4.6',
    '0.4.7', '0.5.0', '0.6.0', '0.7.0', '0.7.1', '0.7.2', '0.7.3', '0.7.4', '0.7.5', '0.7.6', '0.7.7', '0.7.8',
    '0.7.9', '0.7.10', '0.7.11', '0.8.0', '0.8.1', '0.8.2', '0.8.3', '0.8.4', '0.8.5', '0.8.6', '0.9.2', '0.9.3',
    '0.9.4', '0.9.6', '0.10.1', '0.11.0', '0.11.1', '0.11.2', '0.11.3', '0.11.4', '0.12.0', '0.12.1', '0.12.2',
    '0.13.0', '0.14.0', '0.15.0', '0.15.1', '0.15.2', '0.16.0', '0.16.1', '0.17.0', '0.18.0', '0.18.1', '0.18.2',
    '0.19.0', '0.19.1', '0.20.0', '0.21.0', '0.22.0', '0.22.1', '0.22.2', '0.23.0', '0.23.1', '0.24.0', '0.25.0',
    '0.25.1', '0.26.0', '0.26.1', '0.26.2', '0.27.0', '0.27.1', '0.27.2', '0.28.0', '0.29.0', '0.29.1', '1.0.0',
    '1.1.0', '1.2.0', '1.3.0', '1.4.0', '1.5.0', '1.5.1', '1.6.0', '1.7.0', '1.7.1', '1.8.0', '1.9.0', '1.9.1',
    '1.9.2', '1.10.0', '1.11.0', '1.12.0', '1.13.0', '1.14.0', '1.14.1', '1.14.2', '1.15.0', '1.16.0',
)
TRL = Distribution(("trl",), "trl", ("trl/__init__.py",), title="TRL", releases=TRL_RELEASES)

# -- llamafactory ------------------------------------------------------------------------------
# Every LLaMA-Factory release on PyPI as `llamafactory`, oldest first (lint/premise.py weighs a rule's
# window against them); the v1 schema (llamafactory_v1.py) ships in 0.9.4 and 0.9.5 (USE_V1=1). The
# releases before 0.7.1 were published as `llmtuner` (a pin of that name counts too); their
# `src/train_bash.py --stage ...` flags are read as transformers' arguments, not by this adapter, so
# no "0.dev0" stands for them.
LLAMAFACTORY_RELEASES = ('0.7.1', '0.8.0', '0.8.1', '0.8.2', '0.8.3', '0.9.0', '0.9.1', '0.9.2', '0.9.3', '0.9.4', '0.9.5')
# No version file batchlint reads: a copy writes its release as `VERSION = "X"` (extras/env.py, cli.py
# in 0.7.1-0.8.x), not `__version__`; a copy inside the project leaves the release unknown.
LLAMAFACTORY = Distribution(("llamafactory", "llmtuner"), "llamafactory", (), title="LLaMA-Factory",
                            releases=LLAMAFACTORY_RELEASES)

# -- llmfoundry --------------------------------------------------------------------------------
LLMFOUNDRY = Distribution(("llm-foundry",), "llmfoundry", ("llmfoundry/_version.py",), title="LLM Foundry")

# -- Megatron-LM --------------------------------------------------------------------------
# Every megatron-core release on PyPI, oldest first (lint/premise.py weighs a rule's window against them).
MEGATRON_RELEASES = (
    "0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0", "0.8.0", "0.9.0", "0.10.0", "0.11.0", "0.12.0",
    "0.12.1", "0.12.2", "0.12.3", "0.13.0", "0.13.1", "0.14.0", "0.15.0", "0.15.1", "0.15.2", "0.15.3", "0.16.0",
    "0.16.1",
)
MEGATRON = Distribution(("megatron-core",), "megatron", ("megatron/core/package_info.py",), title="Megatron-LM",
                            releases=MEGATRON_RELEASES)

# -- nanotron ----------------------------------------------------------------------------------
# The release: `nanotron` on PyPI (0.1.0, 0.2, 0.4: the tags v0.1/v0.2, v0.3 and v0.4/v0.5 carry
# those versions in pyproject.toml); a copy writes it in nanotron/__init__.py (`__version__`, which
# said "0.0.1" in v0.1 and v0.2).
NANOTRON = Distribution(("nanotron",), "nanotron", ("nanotron/__init__.py",), title="nanotron",
                            releases=("0.1.0", "0.2", "0.4"))

# -- nemo --------------------------------------------------------------------------------------
# The release: `nemo-toolkit` on PyPI, every release from 0.8 (oldest first). NeMo 1's Megatron
# models (nemo/collections/nlp/models/language_modeling, which read the `trainer:` + `model:` YAML
# with model.global_batch_size) are in every release up to 2.5.0 and gone from 2.5.1 on; the
# Lightning-trained collections (ASR, TTS, audio) are in all of them. A copy of the package (NeMo's
# own repository) writes its version in nemo/package_info.py as MAJOR/MINOR/PATCH, not as a
# `__version__` string lint/versions.py reads: such a copy's release is unknown.
NEMO_RELEASES = (
    "0.8", "0.8.1", "0.8.2", "0.9.0", "0.10.0", "0.10.1", "0.11.0", "1.0.0", "1.0.1", "1.0.2", "1.1.0", "1.2.0",
    "1.3.0", "1.4.0", "1.5.0", "1.5.1", "1.6.0", "1.6.1", "1.6.2", "1.7.0", "1.7.1", "1.7.2", "1.8.0", "1.8.1",
    "1.8.2", "1.9.0", "1.10.0", "1.11.0", "1.12.0", "1.13.0", "1.14.0", "1.15.0", "1.16.0", "1.17.0", "1.18.0",
    "1.18.1", "1.19.0", "1.19.1", "1.20.0", "1.21.0", "1.22.0", "1.23.0", "2.0.0", "2.1.0", "2.2.0", "2.2.1",
    "2.3.0", "2.3.1", "2.3.2", "2.3.3", "2.4.0", "2.4.1", "2.5.0", "2.5.1", "2.5.2", "2.5.3", "2.6.0", "2.6.1",
    "2.6.2", "2.7.0", "2.7.1", "2.7.2", "2.7.3", "3.0.0",
)
NEMO = Distribution(("nemo-toolkit",), "nemo", (), title="NeMo", releases=NEMO_RELEASES)

# -- openrlhf ----------------------------------------------------------------------------------
# The release: `openrlhf` on PyPI, every release oldest first (lint/premise.py weighs a rule's window
# against them); a copy (OpenRLHF's own checkout or a fork, the package beside setup.py) writes it in
# version.txt. The dotted flags (`--train.batch_size`) are 0.10.2's on; earlier releases take the flat
# ones (LEGACY), which this adapter reads too.
OPENRLHF_RELEASES = (
    '0.3.6.post1', '0.3.6.post2', '0.3.6.post3', '0.3.7', '0.3.7.post1', '0.3.7.post2', '0.3.7.post3', '0.3.8',
    '0.4.0.post2', '0.4.0.post3', '0.4.1', '0.4.2', '0.4.2.post1', '0.4.3', '0.4.4', '0.4.5', '0.4.6', '0.5.0',
    '0.5.1', '0.5.2', '0.5.2.post1', '0.5.3', '0.5.4', '0.5.5', '0.5.5.post1', '0.5.5.post2', '0.5.6', '0.5.7',
    '0.5.8', '0.5.9', '0.5.9.post1', '0.6.0', '0.6.0.post1', '0.6.0.post2', '0.6.0.post3', '0.6.1', '0.6.1.post1',
    '0.6.2', '0.6.3', '0.6.3.post1', '0.6.3.post2', '0.6.4', '0.7.0', '0.7.0.post1', '0.7.1', '0.7.1.post1',
    '0.7.1.post2', '0.7.2', '0.7.2.post1', '0.7.3', '0.7.4', '0.7.4.post1', '0.7.4.post2', '0.7.5', '0.8.0',
    '0.8.0.post1', '0.8.1', '0.8.1.post1', '0.8.2', '0.8.3', '0.8.4', '0.8.5', '0.8.6', '0.8.7', '0.8.8', '0.8.9',
    '0.8.9.post1', '0.8.10', '0.8.11', '0.9.0', '0.9.1', '0.9.1.post1', '0.9.2', '0.9.3', '0.9.4', '0.9.5', '0.9.6',
    '0.9.7', '0.9.8', '0.9.9', '0.9.10', '0.10.0', '0.10.1', '0.10.1.post1', '0.10.1.post2', '0.10.2', '0.10.3',
    '0.10.4', '0.11.0', '0.11.1', '0.11.2',
)
OPENRLHF = Distribution(("openrlhf",), "openrlhf", ("version.txt",), title="OpenRLHF", releases=OPENRLHF_RELEASES)

# -- swift -------------------------------------------------------------------------------------
# Every ms-swift release on PyPI, oldest first (lint/premise.py weighs a rule's window against them;
# the rules of the Megatron schema, swift_megatron.py, too). A copy's version: swift/version.py.
SWIFT_RELEASES = (
    '1.0.0', '1.1.0', '1.2.0', '1.2.1', '1.3.0', '1.4.0', '1.5.0', '1.5.1', '1.5.2', '1.5.3', '1.5.4', '1.6.0',
    '1.6.1', '1.6.2', '1.6.3', '1.7.0', '1.7.1', '1.7.2', '1.7.3', '2.0.0', '2.0.1', '2.0.2', '2.0.3',
    '2.0.3.post1', '2.0.4', '2.0.5', '2.0.5.post1', '2.1.0', '2.1.1', '2.1.1.post1', '2.1.1.post2', '2.2.0',
    '2.2.1', '2.2.2', '2.2.3', '2.2.4', '2.2.5', '2.3.0', '2.3.0.post1', '2.3.1', '2.3.2', '2.3.2.post1',
    '2.4.0', '2.4.0.post1', '2.4.1', '2.4.2', '2.4.2.post1', '2.4.2.post2', '2.5.0.post1', '2.5.1',
    '2.5.1.post1', '2.5.2', '2.5.2.post1', '2.6.0', '2.6.0.post1', '2.6.0.post2', '2.6.1', '3.0.0', '3.0.1',
    '3.0.1.post1', '3.0.2', '3.0.2.post1', '3.0.3', '3.1.0', '3.1.1', '3.1.1.post1', '3.2.0', '3.2.0.post2',
    '3.2.1', '3.2.2', '3.3.0', '3.3.0.post1', '3.3.1', '3.4.0', '3.4.1', '3.4.1.post1', '3.5.0', '3.5.1',
    '3.5.2', '3.5.3', '3.6.0', '3.6.1', '3.6.2', '3.6.3', '3.6.4', '3.7.0', '3.7.1', '3.7.2', '3.7.3', '3.8.0',
    '3.8.1', '3.8.2', '3.8.3', '3.9.0', '3.9.1', '3.9.2', '3.9.3', '3.10.0', '3.10.1', '3.10.2', '3.10.3',
    '3.11.0', '3.11.1', '3.11.2', '3.11.3', '3.12.0', '3.12.1', '3.12.2', '3.12.3', '3.12.4', '3.12.5',
    '3.12.6', '4.0.0', '4.0.1', '4.0.2', '4.0.3', '4.0.4', '4.1.0', '4.1.1', '4.1.2', '4.1.3', '4.2.0', '4.2.1',
    '4.2.2', '4.2.3', '4.3.0', '4.3.1', '4.3.2', '4.4.0', '4.4.1', '4.4.2', '4.5.0', '4.5.1', '4.5.2', '4.5.3',
    '4.6.0'
)
MS_SWIFT = Distribution(("ms-swift",), "swift", ("swift/version.py",), title="ms-swift", releases=SWIFT_RELEASES)

# -- torchtitan --------------------------------------------------------------------------------
# The release: `torchtitan` on PyPI; its own repository writes it in assets/version.txt (setup.py reads it).
# Every release on PyPI, oldest first. 0.0.2 (2024-04-16) is a placeholder wheel with no code, but
# version.txt read 0.0.2 on main from that day (b889f3d50) to the 0.1.0 bump (b461ea82c, 2025-06-05):
# a copy or a git pin of main before 0.1.0 is "0.0.2", so it stands for those layouts (no "0.dev0"
# is needed). 0.3.0 is the release/0.3 branch (4f9e9a47d; no tag in the repository), the PyPI wheel.
TORCHTITAN_RELEASES = ("0.0.2", "0.1.0", "0.2.0", "0.2.1", "0.2.2", "0.3.0")
# A checkout of main before b0a80df20 (2024-12-17) wrote it at the top, version.txt.
TORCHTITAN = Distribution(("torchtitan",), "torchtitan", ("assets/version.txt", "version.txt"), title="TorchTitan",
                            releases=TORCHTITAN_RELEASES)
# Why a premise about TorchTitan's TOML configs ends at 0.2.2 (cited in their sources).
NO_TOML = ("0.3.0 reads no TOML (config/manager.py:34-48 @ release/0.3 4f9e9a47d, the PyPI wheel: --module/--config "
           "registries), so a project that runs it has no TOML config (torchtitan.py reads_no_toml)")

# -- torchtune ---------------------------------------------------------------------------------
# Every torchtune release on PyPI (oldest first): what a rule's window (lint/premise.py) is weighed
# against when the project pins none. 0.0.1 (2024-03-21) is a snapshot of main at 95a2f00 whose wheel
# ships the library but no recipes. A checkout of the repository writes its release in version.txt
# at its top (torchtune/__init__.py has `__version__ = ""` in every tag).
TORCHTUNE_RELEASES = ("0.0.1", "0.1.0", "0.1.1", "0.2.0", "0.2.1", "0.3.0", "0.3.1", "0.4.0", "0.5.0", "0.6.0", "0.6.1")
TORCHTUNE = Distribution(("torchtune",), "torchtune", ("version.txt",), title="torchtune", releases=TORCHTUNE_RELEASES)

# -- verl --------------------------------------------------------------------------------------
# The release: `verl` on PyPI; a copy of the package (vendored, or verl's own repository) writes it in
# verl/version/version (read by verl/__init__.py). Every release on PyPI, oldest first (lint/premise.py
# weighs a rule's window against them). No "0.dev0": the layouts before 0.1 (2024-10/12) fall on the same
# side of every window as 0.1. A copy of main between releases leaves the file at the last one or at a
# ".dev" of an older one (0.1 until 2025-02-15, 0.2.0.dev until 2025-05-12): a rule that reads the
# copy's own source (`refuses`) judges a copy by that source, under `copy_premise`.
VERL_RELEASES = ("0.1", "0.2", "0.2.0.post1", "0.2.0.post2", "0.3.0.post0", "0.3.0.post1", "0.4.0", "0.4.1", "0.5.0",
            "0.6.0", "0.6.1", "0.7.0", "0.7.1", "0.8.0", "0.9.0", "0.9.1")
VERL = Distribution(("verl",), "verl", ("verl/version/version",), title="verl", releases=VERL_RELEASES)

# -- xtuner ------------------------------------------------------------------------------------
# The release: `xtuner` on PyPI, which lists 0.1.0-0.1.11 and 0.2.0 today; 0.1.12-0.1.23 were
# released and tagged (v0.1.12..v0.1.23, 2024-01 to 2024-07) and are what most v0.1 configs with
# varlen attention or sequence parallelism were written for, so they are listed too (oldest first).
# A copy of the package writes its version in xtuner/version.py (`__version__ = "0.2.0"`).
XTUNER_RELEASES = (
    "0.1.0", "0.1.1", "0.1.2", "0.1.3", "0.1.4", "0.1.5", "0.1.6", "0.1.7", "0.1.8", "0.1.9", "0.1.10", "0.1.11",
    "0.1.12", "0.1.13", "0.1.14", "0.1.15", "0.1.16", "0.1.17", "0.1.18", "0.1.19", "0.1.20", "0.1.21", "0.1.22",
    "0.1.23", "0.2.0",
)
XTUNER = Distribution(("xtuner",), "xtuner", ("xtuner/version.py",), title="XTuner", releases=XTUNER_RELEASES)

# -- xtuner_v1 ---------------------------------------------------------------------------------
# The release: xtuner.v1 is in no PyPI release (PyPI's newest, 0.2.0, has no xtuner/v1); it is
# installed from the repository, whose tags v1.0.0rc0 (2025-11, a release branch) and v1.0.1
# (2026-05) are its releases. Both still write `__version__ = "0.2.0"` in xtuner/version.py, and
# pip reports that: a copy or an install from git says 0.2.0, which no window here excludes.
XTUNER_V1_RELEASES = ("1.0.0rc0", "1.0.1")
XTUNER_V1 = Distribution(("xtuner",), "xtuner", ("xtuner/version.py",), title="XTuner v1",
                            releases=XTUNER_V1_RELEASES)
