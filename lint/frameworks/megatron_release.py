"""The release of Megatron-LM a project runs (the plans lint/frameworks/megatron.py builds).

Megatron-LM is released as `megatron-core` on PyPI: a wheel of megatron/core only. The training
entry points the launch lines run (pretrain_gpt.py, megatron/training/arguments.py; megatron/
arguments.py before core 0.6) come from the repository at the matching tag (core_v0.4.0 ..
core_v0.16.1; 0.1.0 to 0.3.0 are the version bumps of megatron/core/package_info.py:
9cdc714939, c74cb684a7, b147dbecb6), which is what a rule's window is checked in.

A project says which release it runs by a `megatron-core` requirement. A checkout of the
repository inside the project writes its version in megatron/core/package_info.py as
MAJOR/MINOR/PATCH, not as a `__version__` string lint/versions.py reads: such a copy's release
is unknown (every release weighed).
"""

from __future__ import annotations

from .spec import Distribution

# Every megatron-core release on PyPI, oldest first (lint/premise.py weighs a rule's window against them).
MEGATRON_RELEASES = (
    "0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0", "0.8.0", "0.9.0", "0.10.0", "0.11.0", "0.12.0",
    "0.12.1", "0.12.2", "0.12.3", "0.13.0", "0.13.1", "0.14.0", "0.15.0", "0.15.1", "0.15.2", "0.15.3", "0.16.0",
    "0.16.1",
)
DISTRIBUTION = Distribution(("megatron-core",), "megatron", ("megatron/core/package_info.py",), title="Megatron-LM",
                            releases=MEGATRON_RELEASES)
