import os

import pytest

from batchlint.config import Settings
from batchlint.engine import Options, lint_file
from batchlint.rules import RULES

SHARED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "shared")
CORPUS = os.path.normpath(os.path.join(SHARED, "corpus"))


def lint_text(folder, filename, text, world_size=None, global_batch=None, settings=None):
    """Write `text` to folder/filename and lint it in-process; returns the FileResult."""
    path = os.path.join(str(folder), filename)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    mode = "wb" if isinstance(text, bytes) else "w"
    with open(path, mode) as handle:
        handle.write(text)
    settings = settings or Settings(root=str(folder))
    return lint_file(path, settings, Options(world_size=world_size, global_batch=global_batch), RULES)


@pytest.fixture
def lint(tmp_path):
    def run(filename, text, **kwargs):
        return lint_text(tmp_path, filename, text, **kwargs)

    return run
