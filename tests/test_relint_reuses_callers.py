"""An editor lints a buffer after each keystroke: the search for the scripts that run it (lint/launching/
callers.py) is taken again from the last run when no script's stamp or overlaid text differs, and read
again whenever one does: on disk, within the file system's clock tick, or in another open buffer."""

import os

from batchlint import per_run, project
from batchlint.launching import callers
from batchlint.server.session import Document, Session, key

DS = """{
  "train_batch_size": 128,
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 4
}
"""
LAUNCH = "#!/bin/bash\ndeepspeed --num_gpus {} train.py --deepspeed ds.json\n"


def project_of(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "ds.json").write_text(DS)
    (tmp_path / "run.sh").write_text(LAUNCH.format(8))
    session = Session()
    session.put(Document(str(tmp_path / "ds.json"), "file://ds.json", DS, 1))
    return session


def codes(session, tmp_path):
    return sorted(d.code for d in session.lint(key(str(tmp_path / "ds.json"))).diagnostics)


def test_an_unchanged_project_is_searched_once_across_runs(tmp_path, monkeypatch):
    session = project_of(tmp_path)
    assert codes(session, tmp_path) == []
    reads = []
    real = callers._read_walked
    monkeypatch.setattr(callers, "_read_walked", lambda *args: reads.append(args) or real(*args))
    per_run.forget()
    assert codes(session, tmp_path) == [] and codes(session, tmp_path) == []
    assert reads == []  # neither run read the scripts again


def test_a_script_rewritten_within_the_clock_tick_is_read_again(tmp_path):
    # Same size, and (on a coarse clock) the same times: its bytes tell the change.
    session = project_of(tmp_path)
    assert codes(session, tmp_path) == []
    script = tmp_path / "run.sh"
    times = os.stat(script)
    script.write_text(LAUNCH.format(6))
    os.utime(script, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert codes(session, tmp_path) == ["BL102"]
    script.write_text(LAUNCH.format(8))
    assert codes(session, tmp_path) == []


def test_a_script_open_in_the_editor_is_read_from_its_buffer(tmp_path):
    session = project_of(tmp_path)
    assert codes(session, tmp_path) == []
    session.put(Document(str(tmp_path / "run.sh"), "file://run.sh", LAUNCH.format(6), 1))
    assert codes(session, tmp_path) == ["BL102"]
    session.put(Document(str(tmp_path / "run.sh"), "file://run.sh", LAUNCH.format(8), 2))
    assert codes(session, tmp_path) == []


def test_a_settled_script_changed_is_read_again(tmp_path, monkeypatch):
    # Older than the clock tick (a test's files are all new: the tick is made nothing): its stamp (size,
    # inode, times) tells the change.
    monkeypatch.setattr(project, "RACY_NS", 0)
    session = project_of(tmp_path)
    script = tmp_path / "run.sh"
    assert codes(session, tmp_path) == []
    script.write_text(LAUNCH.format(16))
    assert codes(session, tmp_path) == ["BL102"]


def test_a_keystroke_in_one_open_file_reads_none_of_the_settled_ones_again(tmp_path, monkeypatch):
    # The buffer being edited is one of the files searched (a YAML job file): the search is made again,
    # from the other files' bytes as the last run read them (project.keeping, in the server's lints).
    monkeypatch.setattr(project, "RACY_NS", 0)  # every file settled
    session = project_of(tmp_path)
    (tmp_path / "job.yaml").write_text("run: bash run.sh\n")
    (tmp_path / "other.sh").write_text("echo ${STAGE}.json\n")
    assert codes(session, tmp_path) == []
    read = []
    real = project._read_open
    monkeypatch.setattr(project, "_read_open", lambda path, limit: read.append(os.path.basename(path)) or real(path, limit))
    for version, text in enumerate(("run: bash run.sh \n", "run: bash run.sh\n"), start=2):
        session.put(Document(str(tmp_path / "job.yaml"), "file://job.yaml", text, version))
        assert codes(session, tmp_path) == []
    assert read == []
