"""Every file batchlint writes: `--fix` (through `fix_until_stable` and `write`),
`--write-baseline`, `--output` and the atomic writer under them all.

A write goes to a temporary file in the same folder and is renamed over the
target, so a failure (a full disk, simulated here) leaves the old file intact
and no temporary file behind. `--fix` writes the real file behind a symlink
only inside the project, keeps hard links, mode and owner, and refuses a
read-only file or one that changed since it was linted."""

import errno
import hashlib
import json
import os
import stat

import pytest

from batchlint import atomic, project
from batchlint.atomic import WriteError, rewrite_in_place, write_atomic
from batchlint.config import Settings
from batchlint.diagnostic import Diagnostic
from batchlint.document import Span, line_starts
from batchlint.engine import Options, lint_file
from batchlint.fix import FileFix, Refused, apply, fix_until_stable, write
from batchlint.rule import Edit
from batchlint.rules import RULES

from conftest import run, write as write_file
from test_fix import HF, TRL, TRL_FIXED, XTUNER, XTUNER_FIXED  # the same configs, fixed the same way

DS = '{\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 8\n}\n'
DS_FIXED = DS.replace('"train_micro_batch_size_per_gpu": 4', '"train_micro_batch_size_per_gpu": "auto"')


def read(path) -> str:
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


def linter(*paths, after=None):
    """The `lint(overlay)` the CLI gives fix_until_stable: lint `paths` with the overlay
    read in place of the files; `after(call, overlay)` runs once each call has read them."""
    settings, options = Settings(root=os.getcwd()), Options()
    calls = []

    def lint(overlay):
        calls.append(dict(overlay))
        with project.overlaid(overlay):
            results = [lint_file(p, settings, options, RULES) for p in paths]
        if after is not None:
            after(len(calls), overlay)
        digests = {}
        for result in results:
            digests.update(result.reads)
        return [d for r in results for d in r.diagnostics], digests

    lint.calls = calls
    return lint


def boundary(folder) -> project.Project:
    return project.Project((os.path.realpath(str(folder)),))


def only(fixes, path=None) -> FileFix:
    chosen = [f for f in fixes if path is None or f.path == path]
    assert len(chosen) == 1, fixes
    return chosen[0]


def leftovers(folder) -> list:
    """Temporary files a write left behind."""
    return [name for _, _, names in os.walk(folder) for name in names if ".batchlint-" in name]


def disk_full(patch, folder, when=lambda path, data: True):
    """os.write fails with ENOSPC for files under `folder` (and `when` it says so).
    (Tests patch through a MonkeyPatch.context(): undoing the fixture's would undo `workdir`'s chdir.)"""
    real_write = os.write
    folder = os.path.realpath(str(folder))

    def write_(fd, data):
        try:
            path = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            path = ""
        if path.startswith(folder + os.sep) and when(path, bytes(data)):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    patch.setattr(os, "write", write_)


# --- the atomic writer ----------------------------------------------------------------


def test_write_atomic_replaces_and_keeps_the_mode(workdir):
    write_file(workdir, "out.txt", "old\n")
    os.chmod("out.txt", 0o640)
    write_atomic("out.txt", "new\r\n")
    with open("out.txt", "rb") as handle:
        assert handle.read() == b"new\r\n"  # no newline translation
    assert stat.S_IMODE(os.stat("out.txt").st_mode) == 0o640
    assert leftovers(workdir) == []


def test_write_atomic_gives_a_new_file_the_umask_mode(workdir):
    old = os.umask(0o027)
    try:
        write_atomic("fresh.json", b"{}\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat("fresh.json").st_mode) == 0o640


def test_write_atomic_writes_through_a_symlink_unless_told_not_to(workdir):
    write_file(workdir, "target.txt", "old\n")
    os.symlink("target.txt", "link.txt")
    write_atomic("link.txt", "new\n")
    assert os.path.islink("link.txt") and read("target.txt") == "new\n"
    write_atomic("link.txt", "own\n", follow_symlinks=False)
    assert not os.path.islink("link.txt") and read("link.txt") == "own\n" and read("target.txt") == "new\n"


@pytest.mark.parametrize("failing", ["write", "fsync", "replace"])
def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(workdir, failing):
    write_file(workdir, "report.txt", "old report\n")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.MonkeyPatch.context() as patch, pytest.raises(WriteError) as caught:
        patch.setattr(os, failing, full)
        write_atomic("report.txt", "new report\n")
    assert read("report.txt") == "old report\n"
    assert leftovers(workdir) == []
    assert str(caught.value) == "cannot write report.txt: No space left on device"
    assert caught.value.strerror == "No space left on device" and caught.value.errno == errno.ENOSPC


def test_a_folder_that_does_not_exist_is_one_clear_error(workdir):
    with pytest.raises(OSError) as caught:
        write_atomic("missing/report.txt", "x")
    assert str(caught.value) == "cannot write missing/report.txt: No such file or directory"


def test_rewrite_in_place_puts_the_old_content_back_on_failure(workdir):
    path = write_file(workdir, "a.yaml", "old: 1\n")
    os.link(path, "b.yaml")
    inode = os.stat(path).st_ino
    # The copy of the old content is written; writing the new content into the file fails.
    with pytest.MonkeyPatch.context() as patch, pytest.raises(WriteError):
        disk_full(patch, workdir, when=lambda p, data: p == os.path.realpath(path) and data.startswith(b"new"))
        patch.setattr(os, "posix_fallocate", lambda *a: None, raising=False)
        rewrite_in_place(path, b"new: 2\n", b"old: 1\n")
    assert read("a.yaml") == read("b.yaml") == "old: 1\n"
    assert os.stat(path).st_ino == inode
    assert leftovers(workdir) == []


# --- --fix: where and how it writes ---------------------------------------------------------


def test_fix_through_a_symlink_inside_the_project_writes_the_real_file(workdir):
    real = write_file(workdir, "configs/real.yaml", TRL)
    os.symlink("configs/real.yaml", "sft.yaml")
    fixes = fix_until_stable(linter("sft.yaml"), write=True, project=boundary(workdir))
    assert only(fixes).written, fixes
    assert os.path.islink("sft.yaml") and os.readlink("sft.yaml") == "configs/real.yaml"
    assert read(real) == TRL_FIXED


def test_fix_through_a_symlink_out_of_the_project_is_refused(workdir):
    outside = write_file(workdir, "elsewhere/shared.yaml", TRL)
    os.makedirs("proj")
    os.symlink(outside, "proj/sft.yaml")
    fixes = fix_until_stable(linter("proj/sft.yaml"), write=True, project=boundary(workdir / "proj"))
    fix = only(fixes)
    assert not fix.written and "outside the project" in fix.refused and not fix.error
    assert read(outside) == TRL
    assert os.path.islink("proj/sft.yaml")


def test_fix_of_a_file_outside_the_project_is_refused(workdir):
    write_file(workdir, "elsewhere/sft.yaml", TRL)
    os.makedirs("proj")
    fix = only(fix_until_stable(linter("elsewhere/sft.yaml"), write=True, project=boundary(workdir / "proj")))
    assert fix.refused == "it is outside the project"
    assert read("elsewhere/sft.yaml") == TRL


def test_fix_keeps_hard_links(workdir):
    path = write_file(workdir, "sft.yaml", TRL)
    os.link(path, "copy.yaml")
    inode = os.stat(path).st_ino
    assert only(fix_until_stable(linter("sft.yaml"), write=True, project=boundary(workdir))).written
    assert os.stat("sft.yaml").st_ino == os.stat("copy.yaml").st_ino == inode
    assert read("sft.yaml") == read("copy.yaml") == TRL_FIXED
    assert leftovers(workdir) == []


def test_fix_keeps_the_mode(workdir):
    write_file(workdir, "sft.yaml", TRL)
    os.chmod("sft.yaml", 0o640)
    assert only(fix_until_stable(linter("sft.yaml"), write=True, project=boundary(workdir))).written
    assert stat.S_IMODE(os.stat("sft.yaml").st_mode) == 0o640
    assert read("sft.yaml") == TRL_FIXED


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file away needs root")
def test_fix_keeps_the_owner(workdir):
    write_file(workdir, "sft.yaml", TRL)
    os.chown("sft.yaml", 12345, 23456)
    assert only(fix_until_stable(linter("sft.yaml"), write=True, project=boundary(workdir))).written
    info = os.stat("sft.yaml")
    assert (info.st_uid, info.st_gid) == (12345, 23456)
    assert read("sft.yaml") == TRL_FIXED


def test_a_read_only_file_is_refused(workdir):
    write_file(workdir, "sft.yaml", TRL)
    os.chmod("sft.yaml", 0o444)  # root could write it anyway: the mode says not to
    fix = only(fix_until_stable(linter("sft.yaml"), write=True, project=boundary(workdir)))
    assert fix.refused == "it is read-only" and not fix.written
    assert read("sft.yaml") == TRL


def test_a_file_changed_after_linting_gets_no_stale_edit(workdir):
    # The user adds a line above between the lint and the fix: the old edit's span (line 3,
    # columns 18-22) now points into `gradient_accumulation_steps`, which must not become
    # `gradient_accumulafalse_steps`.
    edited = TRL.replace("group_by_length", "gradient_accumulation_steps: 4\ngroup_by_length")

    def user_edits(call, overlay):
        if call == 1:
            write_file(workdir, "sft.yaml", edited)

    write_file(workdir, "sft.yaml", TRL)
    fix = only(fix_until_stable(linter("sft.yaml", after=user_edits), write=True, project=boundary(workdir)))
    assert fix.refused == "it changed since it was linted"
    assert read("sft.yaml") == edited


def test_a_file_changed_between_fixing_and_writing_is_refused(workdir):
    def user_edits(call, overlay):
        if call == 2:  # the lint of the fixed text, before anything is written
            write_file(workdir, "sft.yaml", TRL + "# edited meanwhile\n")

    write_file(workdir, "sft.yaml", TRL)
    fix = only(fix_until_stable(linter("sft.yaml", after=user_edits), write=True, project=boundary(workdir)))
    assert fix.refused == "it changed since it was linted"
    assert read("sft.yaml") == TRL + "# edited meanwhile\n"


def test_a_full_disk_leaves_the_file_and_no_temporary(workdir):
    write_file(workdir, "sft.yaml", TRL)
    with pytest.MonkeyPatch.context() as patch:
        disk_full(patch, workdir)
        fix = only(fix_until_stable(linter("sft.yaml"), write=True, project=boundary(workdir)))
    assert fix.refused == "cannot write it: No space left on device" and fix.error and not fix.written
    assert read("sft.yaml") == TRL
    assert leftovers(workdir) == []


def test_a_full_disk_leaves_a_hard_linked_file_intact(workdir):
    path = write_file(workdir, "sft.yaml", TRL)
    os.link(path, "copy.yaml")
    with pytest.MonkeyPatch.context() as patch:
        disk_full(patch, workdir)
        fix = only(fix_until_stable(linter("sft.yaml"), write=True, project=boundary(workdir)))
    assert fix.error and read("sft.yaml") == read("copy.yaml") == TRL
    assert leftovers(workdir) == []


# --- --diff: nothing is written -----------------------------------------------------------------


def test_without_write_nothing_is_written_and_cannot_be(workdir):
    write_file(workdir, "sft.yaml", TRL)
    fix = only(fix_until_stable(linter("sft.yaml"), write=False, project=boundary(workdir)))
    assert fix.changed and not fix.written and read("sft.yaml") == TRL
    assert "-group_by_length: true\n+group_by_length: false\n" in fix.diff()
    with pytest.raises(ValueError):
        write(fix, boundary(workdir))
    assert read("sft.yaml") == TRL


@pytest.mark.parametrize("flags", [["--diff"], ["--fix", "--diff"]])
def test_diff_never_writes(workdir, flags):
    write_file(workdir, "sft.yaml", HF)
    write_file(workdir, "ds.json", DS)
    result = run(*flags, "sft.yaml")
    assert result.exit_code == 1
    assert '+  "train_micro_batch_size_per_gpu": "auto",' in result.stdout
    assert read("ds.json") == DS


# --- lines and columns as each reader counts them ----------------------------------------------


def test_line_starts_follow_each_format():
    text = "a\u2028b\r\nc\rd\x85e\x0cf\n"
    assert line_starts(text, "json") == line_starts(text, "toml") == line_starts(text, "shell") == [0, 5, 13]
    assert line_starts(text, "python") == [0, 5, 7, 13]
    assert line_starts(text, "yaml") == [0, 2, 5, 7, 9, 13]


def test_a_line_separator_inside_a_json_string_does_not_move_the_fix(workdir):
    ds = DS.replace("{\n", '{\n  "comment": "first\u2028second\u2029third\x85fourth",\n')
    write_file(workdir, "sft.yaml", HF)
    write_file(workdir, "ds.json", ds)
    fix = only(fix_until_stable(linter("sft.yaml"), write=True, project=boundary(workdir)))
    assert fix.written, fix.refused
    assert read("ds.json") == ds.replace('"train_micro_batch_size_per_gpu": 4', '"train_micro_batch_size_per_gpu": "auto"')


def test_a_line_separator_inside_a_json_string_through_the_command_line(workdir):
    ds = DS.replace("{\n", '{\n  "comment": "first\u2028second",\n')
    write_file(workdir, "sft.yaml", HF)
    write_file(workdir, "ds.json", ds)
    assert run("--fix", "sft.yaml").exit_code == 0
    assert read("ds.json") == ds.replace('"train_micro_batch_size_per_gpu": 4', '"train_micro_batch_size_per_gpu": "auto"')


def test_a_line_separator_in_a_yaml_string_counts_as_yaml_counts_it(workdir):
    # PyYAML and libyaml break lines at U+2028 and U+0085 too: group_by_length is on line 5 for them.
    text = 'model_name_or_path: "Qwen\u2028b\x85c"\npacking: true\ngroup_by_length: true\n'
    write_file(workdir, "sft.yaml", text)
    fix = only(fix_until_stable(linter("sft.yaml"), write=True, project=boundary(workdir)))
    assert fix.written, fix.refused
    assert read("sft.yaml") == text.replace("group_by_length: true", "group_by_length: false")


def test_python_breaks_lines_only_where_its_tokenizer_does(workdir):
    # \x0c, \x1c and U+2028 in a comment end no line for Python: the sampler edit is on line 8.
    old, new = "else DefaultSampler\n", "else DefaultSampler  # a\x0cb\x1cc\u2028d\x85e\n"
    write_file(workdir, "sft.py", XTUNER.replace(old, new))
    fix = only(fix_until_stable(linter("sft.py"), write=True, project=boundary(workdir)))
    assert fix.written, fix.refused
    assert read("sft.py") == XTUNER_FIXED.replace(old, new)


def test_columns_count_characters_after_non_ascii_text(workdir):
    ds = '{"comment": "数据 ünïcode 🚀", "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n'
    write_file(workdir, "sft.yaml", HF)
    write_file(workdir, "ds.json", ds)
    fix_until_stable(linter("sft.yaml"), write=True, project=boundary(workdir))
    assert read("ds.json") == ds.replace('"train_micro_batch_size_per_gpu": 4', '"train_micro_batch_size_per_gpu": "auto"')

    text = XTUNER.replace("dict(batch_size=batch_size, sampler", 'dict(name="数据🚀", batch_size=batch_size, sampler')
    write_file(workdir, "sft.py", text)
    fix_until_stable(linter("sft.py"), write=True, project=boundary(workdir))
    assert read("sft.py") == XTUNER_FIXED.replace("dict(batch_size=batch_size, sampler",
                                                  'dict(name="数据🚀", batch_size=batch_size, sampler')


def test_crlf_and_the_byte_order_mark_survive(workdir):
    raw = b"\xef\xbb\xbf" + XTUNER.replace("\n", "\r\n").encode()
    write_file(workdir, "sft.py", raw)
    fix = only(fix_until_stable(linter("sft.py"), write=True, project=boundary(workdir)))
    assert fix.written, fix.refused
    with open("sft.py", "rb") as handle:
        assert handle.read() == b"\xef\xbb\xbf" + XTUNER_FIXED.replace("\n", "\r\n").encode()


def test_apply_counts_lines_by_format():
    text = '{"a": "x\u2028y",\n "b": 1}\n'
    edit = Edit(Span(2, 7, 2, 8), "2")
    assert apply(text, [edit], "json") == '{"a": "x\u2028y",\n "b": 2}\n'


def test_a_config_a_launch_script_names_is_fixed_whatever_the_order(workdir):
    write_file(workdir, "configs/sft.py", XTUNER)
    write_file(workdir, "train.sh", "#!/bin/bash\nNPROC_PER_NODE=8 xtuner train configs/sft.py\n")
    fix = only(fix_until_stable(linter("configs/sft.py", "train.sh"), write=True, project=boundary(workdir)))
    assert fix.written, fix.refused
    assert read("configs/sft.py") == XTUNER_FIXED


# --- the loop: every fix in one run ----------------------------------------------------------------


def test_two_findings_at_one_place_are_both_fixed_in_one_run(workdir):
    ds = '{\n  "train_batch_size": 100,\n  "gradient_accumulation_steps": 4\n}\n'
    write_file(workdir, "sft.yaml", HF)
    write_file(workdir, "ds.json", ds)
    lint = linter("sft.yaml")
    before = lint({})[0]
    assert [(d.code, d.span.line, d.span.column) for d in before] == [("BL120", 3, 30)] * 2
    fix = only(fix_until_stable(lint, write=True, project=boundary(workdir)))
    assert fix.written and fix.codes == {"BL120": 2}
    assert read("ds.json") == '{\n  "train_batch_size": "auto",\n  "gradient_accumulation_steps": "auto"\n}\n'


def test_two_findings_at_one_place_through_the_command_line(workdir):
    write_file(workdir, "sft.yaml", HF)
    write_file(workdir, "ds.json", '{\n  "train_batch_size": 100,\n  "gradient_accumulation_steps": 4\n}\n')
    result = run("--fix", "sft.yaml")
    assert read("ds.json") == '{\n  "train_batch_size": "auto",\n  "gradient_accumulation_steps": "auto"\n}\n'
    assert result.exit_code == 0, result.output


class FakeLint:
    """A lint whose findings are computed from the text by `rules` (text -> [(code, Edit)]), for one file."""

    def __init__(self, path, rules):
        self.path, self.rules, self.calls = os.path.abspath(path), rules, 0

    def __call__(self, overlay):
        self.calls += 1
        raw = overlay.get(os.path.realpath(self.path))
        if raw is None:
            with open(self.path, "rb") as handle:
                raw = handle.read()
        text = raw.decode()
        shown = os.path.basename(self.path)
        diagnostics = [Diagnostic(code, "fake", "warning", "m", shown, Span.point(1), edits=(edit,))
                       for code, edit in self.rules(text)]
        return diagnostics, {self.path: hashlib.sha256(raw).hexdigest()}


def test_a_fix_that_enables_another_is_applied_too(workdir):
    write_file(workdir, "a.yaml", "x: 1\n")

    def rules(text):
        if text.startswith("x: 1"):
            yield "BL301", Edit(Span(1, 4, 1, 5), "2", "a.yaml")
        if text.startswith("x: 2"):
            yield "BL302", Edit(Span(1, 1, 1, 2), "y", "a.yaml")

    fix = only(fix_until_stable(FakeLint("a.yaml", rules), write=True, project=boundary(workdir)))
    assert read("a.yaml") == "y: 2\n" and fix.codes == {"BL301": 1, "BL302": 1}


def test_overlapping_edits_are_applied_over_two_rounds(workdir):
    write_file(workdir, "a.yaml", "ab\n")

    def rules(text):
        if text[0] == "a":
            yield "BL301", Edit(Span(1, 1, 1, 2), "A")
        if text[1] == "b":
            yield "BL302", Edit(Span(1, 1, 1, 3), text[0] + "B")  # overlaps the first: waits a round

    lint = FakeLint("a.yaml", rules)
    fix = only(fix_until_stable(lint, write=True, project=boundary(workdir)))
    assert read("a.yaml") == "AB\n"
    assert fix.codes == {"BL301": 1, "BL302": 1} and lint.calls == 3


def test_fixes_that_do_not_converge_are_refused(workdir):
    write_file(workdir, "a.yaml", "n: 0\n")

    def rules(text):
        yield "BL301", Edit(Span(1, 4, 1, len(text)), str(int(text[3:-1]) + 1))

    fix = only(fix_until_stable(FakeLint("a.yaml", rules), write=True, max_rounds=3, project=boundary(workdir)))
    assert fix.refused == "the fixes do not converge in 3 rounds"
    assert read("a.yaml") == "n: 0\n"


def test_a_fix_that_leaves_its_finding_is_refused(workdir):
    write_file(workdir, "a.yaml", "n: 0\n")

    def rules(text):
        yield "BL301", Edit(Span(1, 4, 1, 5), "1")  # offered again once applied: the finding stays

    fix = only(fix_until_stable(FakeLint("a.yaml", rules), write=True, project=boundary(workdir)))
    assert fix.refused == "the fix does not remove BL301"
    assert read("a.yaml") == "n: 0\n"


def test_a_fix_that_would_not_parse_is_not_written(workdir):
    write_file(workdir, "a.json", '{"a": 1}\n')

    def rules(text):
        if text == '{"a": 1}\n':
            yield "BL301", Edit(Span(1, 7, 1, 8), "[")

    fix = only(fix_until_stable(FakeLint("a.json", rules), write=True, project=boundary(workdir)))
    assert fix.refused.startswith("the fixed file would not parse")
    assert read("a.json") == '{"a": 1}\n'


# --- --write-baseline and --output --------------------------------------------------------------


def test_write_baseline_into_a_missing_folder_is_exit_2_with_one_line(workdir):
    write_file(workdir, "sft.yaml", TRL)
    result = run("--write-baseline", "missing/baseline.json", "sft.yaml")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "batchlint: error: cannot write baseline missing/baseline.json: No such file or directory"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder anyway")
def test_write_baseline_into_a_read_only_folder_is_exit_2(workdir):
    write_file(workdir, "sft.yaml", TRL)
    write_file(workdir, "locked/baseline.json", "old\n")
    os.chmod("locked", 0o555)
    try:
        result = run("--write-baseline", "locked/baseline.json", "sft.yaml")
    finally:
        os.chmod("locked", 0o755)
    assert result.exit_code == 2 and read("locked/baseline.json") == "old\n"


@pytest.mark.parametrize("failing", ["write", "replace"])
def test_write_baseline_on_a_full_disk_keeps_the_old_baseline(workdir, failing):
    write_file(workdir, "sft.yaml", TRL)
    assert run("--write-baseline", "baseline.json", "sft.yaml").exit_code == 0
    old = read("baseline.json")
    write_file(workdir, "sft.yaml", TRL + "group_by_length: true\n")
    with pytest.MonkeyPatch.context() as patch:
        if failing == "write":
            disk_full(patch, workdir)
        else:
            patch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left on device")))
        result = run("--write-baseline", "baseline.json", "sft.yaml")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "batchlint: error: cannot write baseline baseline.json: No space left on device")
    assert read("baseline.json") == old and json.loads(old)["findings"]
    assert leftovers(workdir) == []


def test_output_on_a_full_disk_keeps_the_old_report(workdir):
    write_file(workdir, "sft.yaml", TRL)
    write_file(workdir, "report.txt", "old report\n")
    with pytest.MonkeyPatch.context() as patch:
        disk_full(patch, workdir)
        result = run("--output", "report.txt", "sft.yaml")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == "batchlint: error: cannot write report.txt: No space left on device"
    assert read("report.txt") == "old report\n"
    assert leftovers(workdir) == []


def test_write_refuses_what_fix_until_stable_refused(workdir):
    fix = FileFix("a.yaml", "a\n", "b\n", refused="it is read-only", writable=True)
    with pytest.raises(Refused):
        write(fix, boundary(workdir))


def test_the_atomic_module_is_the_one_writer():
    """fix, baseline and cache write through lint/atomic.py, never with open(..., "w")."""
    import inspect

    from batchlint import baseline, cache, fix

    for module in (fix, baseline, cache):
        source = inspect.getsource(module)
        assert "write_atomic" in source
        assert '"w"' not in source and '"wb"' not in source and "pickle" not in source
    assert atomic.write_atomic is write_atomic


def test_the_first_lines_are_those_every_reader_splits():
    # document.first_lines (XTuner's accumulation reads its own line and those above it) splits no line
    # after them, and gives what split_lines gives, whatever breaks the lines: "\r", CRLF, NEL, LS.
    import random

    from batchlint.document import LINE_BREAKS, first_lines, split_lines

    def by_regex(text, fmt):  # each reader's own line breaks, without the "\n"-only shortcut
        return LINE_BREAKS["yaml" if fmt == "yaml" else "python"].split(text) if fmt in ("python", "yaml") \
            else text.split("\n")

    rng = random.Random(20261130)
    pieces = ["a", "\n", "\r", "\r\n", "\u2028", "\x85", "é", "# sp=4"]
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 30)))
        for fmt in ("python", "yaml", "toml", None):
            count = rng.randrange(1, 12)
            assert first_lines(text, fmt, count) == split_lines(text, fmt)[:count] == by_regex(text, fmt)[:count], \
                (text, fmt, count)
