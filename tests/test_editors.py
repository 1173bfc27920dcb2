"""The editor set-ups: the VS Code extension in editors/vscode/ (its manifest against the fields VS Code
documents, its extension.js run under Node with VS Code and the language client stubbed) and every snippet
of docs/editors.md (the Helix TOML parsed, the Lua run against a stubbed `vim` where a Lua interpreter is
installed, and through `luac -p` or Neovim where those are)."""

import json
import os
import re
import shutil
import subprocess

import pytest

from batchlint.sources import FORMATS

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VSCODE = os.path.join(REPO, "editors", "vscode")
DOCS = os.path.join(REPO, "docs", "editors.md")

# The VS Code language ids of batchlint's formats (lint/sources FORMATS), and Neovim's and Helix's names.
VSCODE_LANGUAGES = {"yaml", "json", "toml", "python", "shellscript"}
NEOVIM_FILETYPES = {"yaml", "json", "toml", "python", "sh", "bash"}
HELIX_LANGUAGES = {"yaml", "json", "toml", "python", "bash"}
# vscode-languageclient's major version -> the oldest VS Code it runs in (the `engines.vscode` of its
# package.json: ^1.82.0 for 9.0.1); an extension that declares an older one fails to start there.
LANGUAGECLIENT_NEEDS = {9: (1, 82)}

# The extension manifest's fields as VS Code documents them ("Extension Manifest": name, version, publisher
# and engines are required; main is the entry point of an extension that runs code), with the parts of
# `contributes` this extension uses.
SEMVER = r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$"
MANIFEST_SCHEMA = {
    "type": "object",
    "required": ["name", "version", "publisher", "engines", "main", "activationEvents", "contributes",
                 "dependencies"],
    "properties": {
        # The Marketplace's rules: lowercase, no spaces.
        "name": {"type": "string", "pattern": r"^[a-z0-9][a-z0-9._-]*$"},
        "displayName": {"type": "string"},
        "description": {"type": "string"},
        "version": {"type": "string", "pattern": SEMVER},
        "publisher": {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9-]*$"},
        "license": {"type": "string"},
        "engines": {
            "type": "object",
            "required": ["vscode"],
            "properties": {"vscode": {"type": "string", "pattern": r"^\^?\d+\.\d+\.\d+$"}},
        },
        "categories": {"type": "array", "items": {"type": "string"}},
        "main": {"type": "string", "pattern": r"^\./.+\.js$"},
        "activationEvents": {
            "type": "array",
            "minItems": 1,
            "items": {"type": "string", "pattern": r"^(onLanguage|onCommand|workspaceContains|onStartupFinished|\*)"},
        },
        "capabilities": {
            "type": "object",
            "properties": {"untrustedWorkspaces": {
                "type": "object",
                "required": ["supported"],
                "properties": {"supported": {"enum": [True, False, "limited"]},
                               "restrictedConfigurations": {"type": "array", "items": {"type": "string"}}},
            }},
        },
        "contributes": {
            "type": "object",
            "required": ["configuration"],
            "properties": {
                "languages": {"type": "array", "items": {
                    "type": "object",
                    "required": ["id"],
                    "properties": {"id": {"type": "string"},
                                   "aliases": {"type": "array", "items": {"type": "string"}},
                                   "extensions": {"type": "array", "items": {"type": "string", "pattern": r"^\."}}},
                }},
                "configuration": {
                    "type": "object",
                    "required": ["title", "properties"],
                    "properties": {"title": {"type": "string"}, "properties": {
                        "type": "object",
                        "propertyNames": {"pattern": r"^batchlint\."},
                        "additionalProperties": {
                            "type": "object",
                            "required": ["type", "default"],
                            "anyOf": [{"required": ["description"]}, {"required": ["markdownDescription"]}],
                            "properties": {"type": {"enum": ["string", "array", "boolean", "number", "object"]}},
                        },
                    }},
                },
                "commands": {"type": "array", "items": {
                    "type": "object",
                    "required": ["command", "title"],
                    "properties": {"command": {"type": "string"}, "title": {"type": "string"},
                                   "category": {"type": "string"}},
                }},
            },
        },
        "dependencies": {
            "type": "object",
            "required": ["vscode-languageclient"],
            "additionalProperties": {"type": "string"},
        },
    },
}


def manifest() -> dict:
    with open(os.path.join(VSCODE, "package.json"), encoding="utf-8") as handle:
        return json.load(handle)


def extension_js() -> str:
    with open(os.path.join(VSCODE, "extension.js"), encoding="utf-8") as handle:
        return handle.read()


def version_of(text: str) -> tuple:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:2])


# -- the VS Code extension -----------------------------------------------------------------------------


def test_the_manifest_has_the_fields_vs_code_documents():
    jsonschema = pytest.importorskip("jsonschema")
    package = manifest()
    jsonschema.validate(package, MANIFEST_SCHEMA)
    assert os.path.isfile(os.path.join(VSCODE, package["main"]))
    assert os.path.isfile(os.path.join(VSCODE, "README.md"))
    client = package["dependencies"]["vscode-languageclient"]
    assert version_of(package["engines"]["vscode"]) >= LANGUAGECLIENT_NEEDS[version_of(client)[0]], \
        "engines.vscode is older than the VS Code vscode-languageclient needs"
    properties = package["contributes"]["configuration"]["properties"]
    assert properties["batchlint.path"]["default"] == "batchlint"
    assert properties["batchlint.args"]["default"] == ["server"]
    # A workspace's settings may not name the program to run in a workspace the user has not trusted.
    assert set(package["capabilities"]["untrustedWorkspaces"]["restrictedConfigurations"]) == set(properties)


def test_the_extension_serves_the_languages_its_manifest_activates_on():
    package = manifest()
    activated = {event.split(":", 1)[1] for event in package["activationEvents"] if event.startswith("onLanguage:")}
    [languages] = re.findall(r"const LANGUAGES = \[(.*?)\];", extension_js(), re.S)
    assert set(re.findall(r"'([^']+)'", languages)) == activated == VSCODE_LANGUAGES
    # Every extension batchlint reads opens in one of those languages: VS Code's own for .py, .yaml,
    # .json, .sh, .bash; the manifest adds .toml (older VS Code has no TOML) and the Slurm scripts.
    added = {ext for lang in package["contributes"]["languages"] for ext in lang["extensions"]}
    assert {".toml", ".slurm", ".sbatch"} <= added <= set(FORMATS)
    assert {lang["id"] for lang in package["contributes"]["languages"]} <= VSCODE_LANGUAGES


def test_extension_js_reads_the_settings_the_manifest_declares():
    source = extension_js()
    assert "getConfiguration('batchlint')" in source
    read = {f"batchlint.{key}" for key in re.findall(r"config\.get\('(\w+)'", source)}
    assert read == set(manifest()["contributes"]["configuration"]["properties"])
    # vscode-languageclient appends `--stdio` to the arguments of a command given TransportKind.stdio,
    # an option `batchlint server` refuses: the server options must not name a transport.
    assert "transport" not in re.sub(r"//.*", "", source)
    commands = {c["command"] for c in manifest()["contributes"]["commands"]}
    assert set(re.findall(r"registerCommand\('([\w.]+)'", source)) == commands


def test_no_node_modules_are_vendored():
    assert not os.path.exists(os.path.join(VSCODE, "node_modules")) or _ignored("editors/vscode/node_modules")
    with open(os.path.join(VSCODE, ".gitignore"), encoding="utf-8") as handle:
        assert "node_modules/" in handle.read().split()


def _ignored(path: str) -> bool:
    git = shutil.which("git")
    if git is None:
        return True
    done = subprocess.run([git, "check-ignore", "-q", path], cwd=REPO, capture_output=True)
    return done.returncode == 0


# Loads extension.js as VS Code would, `vscode` and `vscode-languageclient/node` replaced by stubs that
# record what it asks for; settings answer with the manifest's defaults, or the ones the steps set.
HARNESS = r"""
const Module = require('module');
const path = require('path');
const folder = process.argv[2];
const manifest = require(path.join(folder, 'package.json'));
const settings = {};
for (const [key, property] of Object.entries(manifest.contributes.configuration.properties)) {
  settings[key] = property.default;
}
const record = { clients: [], started: 0, stopped: 0, commands: [], errors: [] };
let onConfiguration;
const vscode = {
  workspace: {
    getConfiguration: (section) => ({ get: (key) => settings[`${section}.${key}`] }),
    onDidChangeConfiguration: (listener) => { onConfiguration = listener; return { dispose() {} }; },
  },
  commands: { registerCommand: (id) => { record.commands.push(id); return { dispose() {} }; } },
  window: { showErrorMessage: (message) => { record.errors.push(message); } },
};
class LanguageClient {
  constructor(id, name, serverOptions, clientOptions) {
    this.serverOptions = serverOptions;
    record.clients.push({ id, name, serverOptions, documentSelector: clientOptions.documentSelector });
  }
  async start() {
    if (this.serverOptions.command === 'no-such-batchlint') throw new Error('spawn no-such-batchlint ENOENT');
    record.started += 1;
  }
  async stop() { record.stopped += 1; }
}
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request === 'vscode') return vscode;
  if (request === 'vscode-languageclient/node') return { LanguageClient };
  return load.call(this, request, ...rest);
};
const extension = require(path.join(folder, manifest.main));
const changed = (section) => onConfiguration({ affectsConfiguration: (name) => name === section });
(async () => {
  const context = { subscriptions: [] };
  await extension.activate(context);
  record.subscriptions = context.subscriptions.length;
  settings['batchlint.path'] = '/opt/venv/bin/batchlint';
  await changed('batchlint');
  await changed('editor');
  settings['batchlint.path'] = 'no-such-batchlint';
  await changed('batchlint');
  await extension.deactivate();
  console.log(JSON.stringify(record));
})().catch((error) => { console.error(error); process.exit(1); });
"""


def test_the_extension_starts_batchlint_server_and_restarts_on_a_settings_change(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    harness = tmp_path / "harness.js"
    harness.write_text(HARNESS, encoding="utf-8")
    done = subprocess.run([node, str(harness), VSCODE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    first, second, third = record["clients"]  # the setting of another section restarted nothing
    assert first["id"] == "batchlint"
    assert first["serverOptions"] == {"command": "batchlint", "args": ["server"]}
    assert second["serverOptions"] == {"command": "/opt/venv/bin/batchlint", "args": ["server"]}
    assert third["serverOptions"]["command"] == "no-such-batchlint"
    selector = first["documentSelector"]
    assert all(item["scheme"] == "file" for item in selector)  # an untitled buffer has no file to lint
    assert {item["language"] for item in selector} == VSCODE_LANGUAGES
    # Two started, both stopped (one by each restart); the third failed and says what to install.
    assert (record["started"], record["stopped"]) == (2, 2)
    [error] = record["errors"]
    assert "no-such-batchlint server" in error and "batchlint[server]" in error and "batchlint.path" in error
    assert record["commands"] == ["batchlint.restart"] and record["subscriptions"] == 2


def test_extension_js_is_valid_javascript():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    done = subprocess.run([node, "--check", os.path.join(VSCODE, "extension.js")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# -- docs/editors.md -------------------------------------------------------------------------------------


def docs() -> str:
    with open(DOCS, encoding="utf-8") as handle:
        return handle.read()


def blocks(language: str) -> list:
    return re.findall(r"```%s\n(.*?)```" % language, docs(), re.S)


def section(title: str) -> str:
    text = docs()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def test_the_docs_name_the_files_the_server_reads():
    [files] = re.findall(r"- \*\*Which files\.\*\*(.*?)\n- ", docs(), re.S)
    assert set(re.findall(r"`(\.\w+)`", files)) == set(FORMATS)


def test_the_helix_snippet_is_toml_that_adds_batchlint_to_each_language():
    [block] = [b for b in blocks("toml") if "language-server.batchlint" in b]
    helix = tomllib.loads(block)
    assert helix["language-server"]["batchlint"] == {"command": "batchlint", "args": ["server"]}
    named = {lang["name"]: lang["language-servers"] for lang in helix["language"]}
    assert set(named) == HELIX_LANGUAGES
    assert all(servers[-1] == "batchlint" and len(set(servers)) == len(servers) for servers in named.values())
    assert "Helix 23.10 or later" in section("Helix")


def test_the_vscode_snippets_start_batchlint_server():
    [settings] = [json.loads(b) for b in blocks("json")]
    assert [settings["glspc.server.command"], *settings["glspc.server.commandArguments"]] == ["batchlint", "server"]
    assert set(settings["glspc.server.languageId"]) == VSCODE_LANGUAGES
    [shell] = [b for b in blocks("sh") if "vsce" in b]
    assert "npm install" in shell and "code --install-extension batchlint-%s.vsix" % manifest()["version"] in shell


def strip_lua(code: str) -> str:
    """The code without its strings and comments, for counting brackets and keywords."""
    return re.sub(r'--[^\n]*|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'', '""', code)


def lua_snippets() -> list:
    return blocks("lua")


def test_the_lua_snippets_start_batchlint_server_and_are_balanced():
    snippets = lua_snippets()
    servers = [s for s in snippets if "vim.lsp" in s]
    assert len(servers) == 2
    for code in servers:
        assert 'cmd = { "batchlint", "server" }' in code
        filetypes = re.search(r"(?:filetypes|pattern) = \{(.*?)\}", code).group(1)
        assert set(re.findall(r'"(\w+)"', filetypes)) == NEOVIM_FILETYPES
    for code in snippets:
        bare = strip_lua(code)
        for opening, closing in ("()", "{}", "[]"):
            assert bare.count(opening) == bare.count(closing), (opening, code)
        blocks_opened = len(re.findall(r"\b(?:function|if|do)\b", bare))
        assert blocks_opened == len(re.findall(r"\bend\b", bare)), code
    assert "Neovim 0.11 or later" in section("Neovim") and "Neovim 0.10" in section("Neovim")


def test_the_lua_snippets_compile():
    luac = next((shutil.which(n) for n in ("luac", "luac5.4", "luac5.3", "luac5.1") if shutil.which(n)), None)
    if luac is None:
        pytest.skip("luac is not installed")
    for code in lua_snippets():
        done = subprocess.run([luac, "-p", "-"], input=code, capture_output=True, text=True)
        assert done.returncode == 0, (done.stderr, code)


# A stub of the part of Neovim's `vim` the snippets call: each call is recorded, and an autocommand's
# callback is run at once for a buffer, as a FileType event would.
VIM_STUB = r"""
local calls = {}
local function show(value)
  if type(value) ~= "table" then return string.format("%q", tostring(value)) end
  local keys, parts = {}, {}
  for key in pairs(value) do keys[#keys + 1] = key end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, key in ipairs(keys) do
    if type(value[key]) ~= "function" then parts[#parts + 1] = string.format("%q", tostring(key)) .. ": " .. show(value[key]) end
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end
local function record(name) return function(...) calls[#calls + 1] = { name = name, args = { ... } } end end
vim = {
  lsp = { config = record("vim.lsp.config"), enable = record("vim.lsp.enable"), start = record("vim.lsp.start") },
  fs = { root = function(buf, markers) return "root:" .. table.concat(markers, ",") end },
  filetype = { add = record("vim.filetype.add") },
  api = { nvim_create_autocmd = function(event, opts)
    record("nvim_create_autocmd")(event, opts)
    opts.callback({ buf = 1 })
  end },
}
SNIPPET()
local shown = {}
for _, call in ipairs(calls) do shown[#shown + 1] = show(call) end
print("[" .. table.concat(shown, ", ") .. "]")
"""


def run_lua(lua: str, code: str, tmp_path) -> list:
    script = tmp_path / "snippet.lua"
    script.write_text(VIM_STUB.replace("SNIPPET()", code), encoding="utf-8")
    done = subprocess.run([lua, str(script)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, (done.stderr, code)
    # show() writes keys and strings with %q: JSON but for Lua's list tables, whose keys are "1", "2"...
    return json.loads(done.stdout)


def as_list(table: dict) -> list:
    return [table[str(i)] for i in range(1, len(table) + 1)]


def test_the_lua_snippets_call_neovims_lsp_as_documented(tmp_path):
    lua = next((shutil.which(n) for n in ("lua", "lua5.4", "lua5.3", "lua5.1", "luajit") if shutil.which(n)), None)
    if lua is None:
        pytest.skip("no Lua interpreter is installed")
    current, older, filetypes = lua_snippets()
    config, enable = run_lua(lua, current, tmp_path)
    assert config["name"] == "vim.lsp.config" and config["args"]["1"] == "batchlint"
    options = config["args"]["2"]
    assert as_list(options["cmd"]) == ["batchlint", "server"]
    assert "batchlint.toml" in as_list(options["root_markers"])
    assert enable == {"name": "vim.lsp.enable", "args": {"1": "batchlint"}}
    autocmd, start = run_lua(lua, older, tmp_path)
    assert autocmd["args"]["1"] == "FileType"
    assert start["name"] == "vim.lsp.start"
    assert start["args"]["1"]["name"] == "batchlint" and as_list(start["args"]["1"]["cmd"]) == ["batchlint", "server"]
    assert start["args"]["1"]["root_dir"] == "root:batchlint.toml,pyproject.toml,.git"
    [added] = run_lua(lua, filetypes, tmp_path)
    assert added["args"]["1"]["extension"] == {"sbatch": "sh", "slurm": "sh"}


def test_the_lua_snippets_run_in_neovim(tmp_path):
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("Neovim is not installed")
    version = version_of(subprocess.run([nvim, "--version"], capture_output=True, text=True).stdout)
    current, older, filetypes = lua_snippets()
    runnable = [older, filetypes] if version >= (0, 10) else []
    if version >= (0, 11):
        runnable.append(current)
    if not runnable:
        pytest.skip(f"Neovim {version} is older than the snippets")
    for code in runnable:
        script = tmp_path / "init.lua"
        script.write_text(code, encoding="utf-8")
        done = subprocess.run([nvim, "--headless", "--clean", "-l", str(script)], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, (done.stderr, code)
