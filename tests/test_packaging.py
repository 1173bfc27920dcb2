"""What `pip install batchlint` gets: the sdist built by the backend pyproject.toml names, and the wheel pip
builds from that sdist (as pip does from an index), both in a temporary folder from a copy of the tree.
One build for the module; it skips, never fails, where the backend cannot be imported (a machine without
setuptools and no index to fetch it from: the build runs without isolation, offline)."""

import ast
import email.parser
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Not part of the tree a clone has: what builds, caches and editors leave beside it.
LEFT_BESIDE = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", "*.egg-info", "build", "dist", ".*_cache",
                                     ".venv", ".cache", ".benchmarks", "node_modules", "*.vsix")


def pyproject() -> dict:
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as handle:
        return tomllib.load(handle)


def source_version() -> str:
    with open(os.path.join(REPO, "lint", "__init__.py"), encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    [version] = [node.value.value for node in tree.body if isinstance(node, ast.Assign)
                 and any(getattr(t, "id", None) == "__version__" for t in node.targets)]
    return version


# Runs in the copy of the tree: the backend's PEP 517 hook, as a build frontend calls it.
BUILD_SDIST = """
import importlib, sys
module, _, attr = sys.argv[1].partition(":")
backend = importlib.import_module(module)
for part in filter(None, attr.split(".")):
    backend = getattr(backend, part)
print(backend.build_sdist(sys.argv[2]))
"""


def unmet_requirements(requires: list) -> list:
    """The build requirements ([build-system] requires) not installed at a version they accept."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        from packaging.requirements import Requirement
    except ImportError:  # nothing to compare versions with: the build says if one is too old
        return []
    unmet = []
    for text in requires:
        wanted = Requirement(text)
        if wanted.marker is not None and not wanted.marker.evaluate():
            continue
        try:
            if not wanted.specifier.contains(version(wanted.name), prereleases=True):
                unmet.append(text)
        except PackageNotFoundError:
            unmet.append(text)
    return unmet


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(sdist path, wheel path, the folder they were built in)."""
    system = pyproject()["build-system"]
    backend = system["build-backend"]
    if system.get("backend-path"):
        pytest.skip("an in-tree build backend is not built this way")
    if importlib.util.find_spec(backend.partition(":")[0].split(".")[0]) is None:
        pytest.skip(f"the build backend {backend} is not installed (and the build runs offline)")
    unmet = unmet_requirements(system.get("requires", []))
    if unmet:
        pytest.skip(f"the build needs {', '.join(unmet)} (and runs offline, without an index to fetch it)")
    if importlib.util.find_spec("pip") is None:
        pytest.skip("pip is not installed")
    folder = tmp_path_factory.mktemp("packaging")
    tree, out = folder / "tree", folder / "dist"
    shutil.copytree(REPO, tree, ignore=LEFT_BESIDE)
    out.mkdir()
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    done = subprocess.run([sys.executable, "-c", BUILD_SDIST, backend, str(out)], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0 and "ModuleNotFoundError" in done.stderr:
        pytest.skip(f"the build backend {backend} cannot be imported: {done.stderr.strip().splitlines()[-1]}")
    assert done.returncode == 0, done.stderr
    sdist = out / done.stdout.strip().splitlines()[-1]
    # pip unpacks the sdist and builds the wheel from it; the installed backend, no index.
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w",
                           str(out), str(sdist)], cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    [wheel] = out.glob("*.whl")
    return sdist, wheel, folder


def wheel_files(wheel) -> dict:
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def metadata(files: dict):
    [name] = [n for n in files if n.endswith(".dist-info/METADATA")]
    return email.parser.BytesParser().parsebytes(files[name])


def requirement(text: str) -> tuple:
    """(name, marker) of a Requires-Dist line, the name normalized as pip compares them."""
    head, _, marker = text.partition(";")
    name = re.match(r"[A-Za-z0-9._-]+", head.strip()).group(0)
    return re.sub(r"[-_.]+", "-", name).lower(), marker.strip()


def test_the_wheel_metadata(built):
    _, wheel, _ = built
    project = pyproject()["project"]
    meta = metadata(wheel_files(wheel))
    assert meta["Name"] == project["name"] == "batchlint"
    assert meta["Version"] == source_version()
    assert wheel.name.startswith(f"batchlint-{source_version()}-py3-none-any")
    assert meta["Requires-Python"] == project["requires-python"] == ">=3.10"
    needs = [requirement(r) for r in meta.get_all("Requires-Dist")]
    plain = {name for name, marker in needs if not marker}
    assert {"click", "pyyaml", "libcst"} <= plain
    # tomli only where tomllib is missing (Python 3.10); the code imports tomllib from 3.11 on.
    [tomli] = [marker for name, marker in needs if name == "tomli"]
    assert re.fullmatch(r"""python_version\s*<\s*["']3\.11["']""", tomli), tomli
    # Every dependency pyproject.toml declares, and no other.
    assert plain | {"tomli"} == {requirement(r)[0] for r in project["dependencies"]}


def test_the_wheel_extras(built):
    _, wheel, _ = built
    meta = metadata(wheel_files(wheel))
    extras = set(meta.get_all("Provides-Extra"))
    assert {"test", "server"} <= extras
    needs = [requirement(r) for r in meta.get_all("Requires-Dist")]
    by_extra = {}
    for name, marker in needs:
        extra = re.search(r"""extra\s*==\s*["']([\w-]+)["']""", marker)
        if extra:
            by_extra.setdefault(extra.group(1), set()).add(name)
    assert "pygls" in by_extra["server"]  # `batchlint server` imports pygls and lsprotocol, which pygls needs
    assert {"pytest", "jsonschema", "pygls"} <= by_extra["test"]


def test_the_console_script(built):
    _, wheel, _ = built
    files = wheel_files(wheel)
    [name] = [n for n in files if n.endswith(".dist-info/entry_points.txt")]
    entry_points = files[name].decode("utf-8")
    assert re.search(r"^\[console_scripts\]\s*\nbatchlint = batchlint\.entry:run$", entry_points, re.M), entry_points
    assert "batchlint/entry.py" in files and "batchlint/cli.py" in files
    assert b"def run(" in files["batchlint/entry.py"]


def test_the_wheel_holds_the_engine_and_every_rule_and_no_tests(built):
    _, wheel, built_in = built
    files = set(wheel_files(wheel))
    # Every module of lint/ and rules/ (of the copy built), where [tool.setuptools] maps them: a new
    # subpackage not listed there would be missing from every install but the editable one.
    expected = set()
    for source, target in (("lint", "batchlint"), ("rules", "batchlint/rules")):
        root = os.path.join(built_in, "tree", source)
        for folder, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            relative = os.path.relpath(folder, root).replace(os.sep, "/")
            for name in names:
                if name.endswith(".py"):
                    expected.add("/".join(p for p in (target, relative, name) if p != "."))
    assert expected <= files, sorted(expected - files)
    package = {n for n in files if not n.startswith("batchlint-")}  # the .dist-info folder aside
    assert len([n for n in package if n.startswith("batchlint/rules/")]) > 10
    assert {n.split("/")[0] for n in package} == {"batchlint"}  # no top-level `lint`, `rules` or `tests`
    assert not [n for n in package if "/tests/" in n or re.search(r"(^|/)(test_[^/]*|conftest)\.py$", n)]


def test_no_file_of_this_machine_is_packaged(built):
    sdist, wheel, folder = built
    with tarfile.open(sdist) as archive:
        sdist_files = {m.name: archive.extractfile(m).read() for m in archive.getmembers() if m.isfile()}
    for where, files in (("sdist", sdist_files), ("wheel", wheel_files(wheel))):
        names = list(files)
        assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".pyo"))], where
        assert not [n for n in names if re.search(r"(^|/)\.(git|venv|pytest_cache|mypy_cache|ruff_cache)(/|$)", n)]
        assert not [n for n in names if "node_modules" in n or n.endswith(".vsix")], where
        # No absolute path of the checkout or of the build folder written into any file.
        for marker in {REPO, str(folder), os.path.expanduser("~")} - {"", "/"}:
            leaked = [n for n, data in files.items() if marker.encode() in data]
            assert not leaked, (where, marker, leaked)
    top = {n.split("/")[0] for n in sdist_files}
    assert top == {f"batchlint-{source_version()}"}
    inside = {n.split("/", 1)[1] for n in sdist_files}
    assert {"pyproject.toml", "README.md", "PKG-INFO", "lint/cli.py", "rules/__init__.py"} <= inside
