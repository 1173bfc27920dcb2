"""Project configuration: [tool.batchlint] in the nearest pyproject.toml or
batchlint.toml, `--config`, what each key does, which of directive, CLI and
project config wins, and broken configs (exit 2, one clear line)."""

import re

import pytest

from batchlint.config import ConfigError, Settings, load_settings

from conftest import (
    DS_MISMATCH,
    HF_YAML,
    TITAN_INDIVISIBLE,
    TRL_PACKED_GROUPED,
    XTUNER_SP,
    codes,
    findings,
    run,
    run_module,
    write,
)

_BATCH = re.compile(r"the global batch is (\d+)\D.*not the (\d+) stated \((.+?)\)")


def pyproject(folder, body, name="pyproject.toml", table="[tool.batchlint]\n"):
    return write(folder, name, table + body)


def batch_numbers(stdout):
    """(global batch, stated target, where the target came from) of the one BL102 finding."""
    [finding] = [f for f in findings(stdout) if f["code"] == "BL102"]
    match = _BATCH.search(finding["message"])
    assert match, finding["message"]
    return int(match.group(1)), int(match.group(2)), match.group(3)


@pytest.fixture
def four(workdir):
    write(workdir, "sft.py", XTUNER_SP)
    write(workdir, "ds.json", DS_MISMATCH)
    write(workdir, "titan.toml", TITAN_INDIVISIBLE)
    write(workdir, "trl.yaml", TRL_PACKED_GROUPED)
    return workdir


# --- the keys ------------------------------------------------------------------------


def test_select_and_ignore_from_pyproject(four):
    pyproject(four, 'select = ["BL1"]\nignore = ["BL103"]\n')
    assert codes(run("-w", "8", ".").stdout) == ["BL101", "BL102"]


def test_cli_select_replaces_the_configs_select(four):
    pyproject(four, 'select = ["BL1"]\n')
    assert codes(run("-w", "8", "--select", "BL3", ".").stdout) == ["BL301"]


def test_cli_ignore_adds_to_the_configs_ignore(four):
    pyproject(four, 'ignore = ["BL101"]\n')
    assert codes(run("-w", "8", "--ignore", "BL3", ".").stdout) == ["BL102", "BL103"]


def test_select_as_a_single_string(four):
    pyproject(four, 'select = "BL3"\n')
    assert codes(run("-w", "8", ".").stdout) == ["BL301"]


def test_per_file_ignores_by_glob_and_prefix(four):
    write(four, "legacy/old.py", XTUNER_SP)
    pyproject(four, '[tool.batchlint.per-file-ignores]\n"legacy/*" = ["BL1"]\n"*.toml" = ["BL103"]\n')
    result = run("-w", "8", ".")
    assert sorted((f["path"], f["code"]) for f in findings(result.stdout)) == [
        ("ds.json", "BL102"), ("sft.py", "BL101"), ("trl.yaml", "BL301"),
    ]


def test_per_file_ignores_are_anchored_at_the_config_folder(workdir, monkeypatch):
    write(workdir, "configs/sub/sft.py", XTUNER_SP)
    pyproject(workdir, '[tool.batchlint.per-file-ignores]\n"configs/sub/sft.py" = ["BL101"]\n')
    monkeypatch.chdir(workdir / "configs")  # the config is found upward; patterns stay relative to it
    assert codes(run(".").stdout) == []
    pyproject(workdir, '[tool.batchlint.per-file-ignores]\n"sub/sft.py" = ["BL101"]\n')
    assert codes(run(".").stdout) == ["BL101"], "a pattern is not relative to the working directory"


def test_exclude_folder_and_glob(four):
    write(four, "legacy/old.py", XTUNER_SP)
    write(four, "deep/er/legacy/old2.py", XTUNER_SP)
    pyproject(four, 'exclude = ["legacy", "*.json"]\n')
    result = run("-w", "8", ".")
    assert sorted(f["path"] for f in findings(result.stdout)) == ["sft.py", "titan.toml", "trl.yaml"]
    # Excluded files are not even counted (the four are sft.py, titan.toml, trl.yaml and pyproject.toml).
    assert "in 3 training configs in 4 files." in result.stdout.splitlines()[-2]


def test_files_named_explicitly_are_linted_unless_force_exclude(workdir):
    write(workdir, "legacy/old.py", XTUNER_SP)
    write(workdir, "new.py", XTUNER_SP)
    pyproject(workdir, 'exclude = ["legacy/"]\n')
    assert codes(run(".").stdout) == ["BL101"]  # the walk skips legacy/
    named = run("legacy/old.py", "new.py")
    assert [f["path"] for f in findings(named.stdout)] == ["legacy/old.py", "new.py"]
    forced = run("--force-exclude", "legacy/old.py", "new.py")
    assert [f["path"] for f in findings(forced.stdout)] == ["new.py"]
    assert forced.exit_code == 1


def test_force_exclude_with_only_excluded_files_is_clean(workdir):
    write(workdir, "legacy/old.py", XTUNER_SP)
    pyproject(workdir, 'exclude = ["legacy"]\n')
    result = run("--force-exclude", "legacy/old.py")
    assert result.exit_code == 0
    assert findings(result.stdout) == []


def test_batchlint_toml_takes_top_level_keys(four):
    write(four, "batchlint.toml", 'select = ["BL3"]\n')
    assert codes(run("-w", "8", ".").stdout) == ["BL301"]


def test_batchlint_toml_wins_over_pyproject_in_the_same_folder(four):
    pyproject(four, 'select = ["BL1"]\n')
    write(four, "batchlint.toml", 'select = ["BL3"]\n')
    assert codes(run("-w", "8", ".").stdout) == ["BL301"]


def test_nearest_config_upward_wins(four, monkeypatch):
    pyproject(four, 'select = ["BL3"]\n')
    write(four, "sub/trl.yaml", TRL_PACKED_GROUPED)
    write(four, "sub/sft.py", XTUNER_SP)
    monkeypatch.chdir(four / "sub")
    assert codes(run(".").stdout) == ["BL301"], "the parent's pyproject applies"
    # A pyproject.toml without [tool.batchlint] in between is passed over.
    write(four, "sub/pyproject.toml", '[project]\nname = "x"\n')
    assert codes(run(".").stdout) == ["BL301"]
    pyproject(four / "sub", 'select = ["BL101"]\n')
    assert codes(run(".").stdout) == ["BL101"], "the nearer one wins"


def test_config_option_replaces_the_nearest(four):
    pyproject(four, 'select = ["BL1"]\n')
    write(four, "ci/strict.toml", 'select = ["BL3"]\n')
    assert codes(run("-w", "8", "--config", "ci/strict.toml", ".").stdout) == ["BL301"]


def test_config_option_with_a_pyproject_reads_its_tool_table(four):
    pyproject(four / "elsewhere", 'select = ["BL103"]\n')
    assert codes(run("-w", "8", "--config", "elsewhere/pyproject.toml", ".").stdout) == ["BL103"]


def test_config_option_anchors_patterns_at_its_folder(workdir):
    write(workdir, "configs/sft.py", XTUNER_SP)
    write(workdir, "configs/batchlint.toml", '[per-file-ignores]\n"sft.py" = ["BL101"]\n')
    assert codes(run("--config", "configs/batchlint.toml", "configs").stdout) == []
    # Without --config the file's nearest config is found all the same (as ruff finds it).
    assert codes(run("configs").stdout) == []
    write(workdir, "other/sft.py", XTUNER_SP)
    assert codes(run("other").stdout) == ["BL101"], "a file with no config above it"


def test_load_settings_reads_every_key(tmp_path):
    path = pyproject(
        tmp_path,
        'select = ["bl1", "BL3"]\nignore = ["BL103"]\nexclude = ["old"]\nworld-size = 16\nglobal-batch = 512\n'
        '[tool.batchlint.per-file-ignores]\n"x/*.py" = ["BL101"]\n',
    )
    settings = load_settings(path)
    assert settings.select == ("BL1", "BL3")
    assert settings.ignore == ("BL103",)
    assert settings.exclude == ("old",)
    assert settings.per_file_ignores == {"x/*.py": ("BL101",)}
    assert (settings.world_size, settings.global_batch) == (16, 512)
    assert settings.root == str(tmp_path)


def test_settings_enabled():
    settings = Settings(select=("BL1",), ignore=("BL103",), per_file_ignores={"old/*": ("BL10",)})
    assert settings.enabled("BL101", "new.py")
    assert not settings.enabled("BL301", "new.py")  # not selected
    assert not settings.enabled("BL103", "new.py")  # ignored
    assert not settings.enabled("BL101", "old/a.py")  # per-file
    assert Settings(select=("ALL",)).enabled("BL301", "a.py")
    assert not Settings(ignore=("ALL",)).enabled("BL001", "a.py")


# --- world size and global batch: directive > CLI > project config ---------------------


def test_world_size_from_project_config(workdir):
    write(workdir, "swift.yaml", HF_YAML)
    pyproject(workdir, "world-size = 2\n")
    assert batch_numbers(run("--global-batch", "1000", "swift.yaml").stdout)[0] == 2 * 8 * 2


def test_world_size_cli_beats_project_config(workdir):
    write(workdir, "swift.yaml", HF_YAML)
    pyproject(workdir, "world-size = 2\n")
    assert batch_numbers(run("-w", "4", "--global-batch", "1000", "swift.yaml").stdout)[0] == 2 * 8 * 4


def test_world_size_directive_beats_cli_and_project_config(workdir):
    write(workdir, "swift.yaml", "# batchlint: world-size=8\n" + HF_YAML)
    pyproject(workdir, "world-size = 2\n")
    assert batch_numbers(run("-w", "4", "--global-batch", "1000", "swift.yaml").stdout)[0] == 2 * 8 * 8
    assert batch_numbers(run("--global-batch", "1000", "swift.yaml").stdout)[0] == 2 * 8 * 8


def test_global_batch_precedence(workdir):
    write(workdir, "plain.yaml", HF_YAML)
    write(workdir, "stated.yaml", "# batchlint: global-batch=50\n" + HF_YAML)
    pyproject(workdir, "world-size = 4\nglobal-batch = 30\n")
    assert batch_numbers(run("plain.yaml").stdout) == (64, 30, "from the project config")
    assert batch_numbers(run("--global-batch", "40", "plain.yaml").stdout) == (64, 40, "from --global-batch")
    assert batch_numbers(run("--global-batch", "40", "stated.yaml").stdout) == (64, 50, "from the batchlint directive")


def test_project_global_batch_met_is_clean(workdir):
    write(workdir, "swift.yaml", HF_YAML)
    pyproject(workdir, "world-size = 4\nglobal-batch = 64\n")
    result = run("swift.yaml")
    assert result.exit_code == 0, result.stdout


# --- broken configs ------------------------------------------------------------------


BROKEN = [
    ("invalid TOML", "[tool.batchlint\nselect = 1\n", "invalid TOML"),
    ("unknown key", "[tool.batchlint]\nselct = ['BL1']\n", "unknown key 'selct'"),
    ("world-size string", '[tool.batchlint]\nworld-size = "8"\n', "world-size must be a positive integer"),
    ("world-size bool", "[tool.batchlint]\nworld-size = true\n", "world-size must be a positive integer"),
    ("world-size zero", "[tool.batchlint]\nworld-size = 0\n", "world-size must be a positive integer"),
    ("global-batch float", "[tool.batchlint]\nglobal-batch = 64.0\n", "global-batch must be a positive integer"),
    ("select int", "[tool.batchlint]\nselect = 5\n", "select must be a list of strings"),
    ("select bad code", "[tool.batchlint]\nselect = ['E501']\n", "'E501' is not a rule code"),
    ("exclude ints", "[tool.batchlint]\nexclude = [1]\n", "exclude must be a list of strings"),
    ("per-file-ignores list", "[tool.batchlint]\nper-file-ignores = ['a']\n", "per-file-ignores must be a table"),
    ("per-file-ignores value", "[tool.batchlint.per-file-ignores]\n'a.py' = 3\n", "must be a list of strings"),
    ("section not a table", "[tool]\nbatchlint = 3\n", "must be a table"),
    ("tool not a table", "tool = 3\n", None),
]


@pytest.mark.parametrize("body, expected", [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_broken_pyproject_exits_2_with_one_line(workdir, body, expected):
    write(workdir, "sft.py", XTUNER_SP)
    write(workdir, "pyproject.toml", body)
    result = run("sft.py")
    if expected is None:  # not batchlint's table: the file is simply not a batchlint config
        assert result.exit_code == 1 and codes(result.stdout) == ["BL101"]
        return
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("batchlint: error: ") and "pyproject.toml" in lines[0]
    assert expected in lines[0]


@pytest.mark.parametrize("body", ['select = "BL1"\n[oops\n', "select = [\"BL1\"]\ncolour = 'red'\n", "tool = 3\n"])
def test_broken_batchlint_toml_exits_2(workdir, body):
    write(workdir, "sft.py", XTUNER_SP)
    write(workdir, "batchlint.toml", body)
    result = run("sft.py")
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1 and "batchlint.toml" in result.stderr


def test_broken_config_named_by_option_exits_2(workdir):
    write(workdir, "sft.py", XTUNER_SP)
    write(workdir, "ci.toml", "world-size = -1\n")
    result = run("--config", "ci.toml", "sft.py")
    assert result.exit_code == 2
    assert result.stderr == "batchlint: error: ci.toml: world-size must be a positive integer, got -1\n"


def test_broken_config_as_subprocess_has_no_traceback(tmp_path):
    write(tmp_path, "sft.py", XTUNER_SP)
    write(tmp_path, "pyproject.toml", "[tool.batchlint]\nworld-size = 'eight'\n")
    proc = run_module("sft.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == "batchlint: error: pyproject.toml: world-size must be a positive integer, got 'eight'\n"
    assert proc.stdout == ""


def test_load_settings_raises_config_error(tmp_path):
    path = write(tmp_path, "batchlint.toml", "ignore = 'BL1,XYZ'\n")
    with pytest.raises(ConfigError, match="'XYZ' is not a rule code"):
        load_settings(path)


# --- which pyproject.toml is read ------------------------------------------------

SPELLINGS = [
    ("header", '[tool.batchlint]\nignore = ["BL101"]\n'),
    ("quoted header", '[ tool . "batchlint" ]\nignore = ["BL101"]\n'),
    ("dotted key", 'tool.batchlint.ignore = ["BL101"]\n'),
    ("tool table", '[tool]\nbatchlint = { ignore = ["BL101"] }\n'),
    ("inline tool", 'tool = { batchlint = { ignore = ["BL101"] } }\n'),
    ("escaped key", '[tool."batch\\u006cint"]\nignore = ["BL101"]\n'),
]


@pytest.mark.parametrize("body", [s[1] for s in SPELLINGS], ids=[s[0] for s in SPELLINGS])
def test_every_spelling_of_the_table_is_read(workdir, body):
    # pyproject.toml files without a batchlint table are not parsed (a large one costs a
    # one-file lint ~10 ms): each way TOML can spell the table must still be found.
    write(workdir, "sft.py", XTUNER_SP)
    write(workdir, "pyproject.toml", body + '[project]\nname = "batchlint"\n[project.scripts]\nbatchlint = "x:y"\n')
    assert codes(run("sft.py").stdout) == []


def test_a_pyproject_without_our_table_is_not_ours_even_broken(workdir):
    # Not batchlint's file: its other tools report its syntax; the lint goes on with defaults.
    write(workdir, "sft.py", XTUNER_SP)
    write(workdir, "pyproject.toml", '[project\nname = "batchlint"\n')
    result = run("sft.py")
    assert result.exit_code == 1 and codes(result.stdout) == ["BL101"]
