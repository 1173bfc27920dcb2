"""`batchlint server` driven as an editor drives it: a JSON-RPC client over the server's
standard input and output (Content-Length framing), in a subprocess, every wait bounded."""

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 30  # seconds for any one answer: a server that hangs fails the test, never the suite


class Client:
    """A minimal LSP client: requests wait for their response, notifications are queued."""

    def __init__(self, cwd: Path, args=("server",), env=None):
        self.proc = subprocess.Popen([sys.executable, "-m", "batchlint", *args], cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.messages: queue.Queue = queue.Queue()
        self.notifications: list = []
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    self.messages.put(None)
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                headers[name.strip().lower()] = value.strip()
            self.messages.put(json.loads(out.read(int(headers["content-length"]))))

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params):
        self.next_id += 1
        wanted = self.next_id
        self.send({"id": wanted, "method": method, "params": params})
        message = self._until(lambda m: m.get("id") == wanted and "method" not in m)
        assert "error" not in message, message
        return message["result"]

    def _until(self, matches, timeout: float = TIMEOUT) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"no answer within {timeout} s; stderr: {self.stderr()}"
            try:
                message = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            assert message is not None, f"the server stopped; stderr: {self.stderr()}"
            if "method" in message and "id" in message:  # a request of the server's: accept it
                self.send({"id": message["id"], "result": None})
            elif "method" in message:
                self.notifications.append(message)
            if matches(message):
                return message

    def diagnostics(self, uri: str, where=lambda items: True) -> list:
        """The next diagnostics published for `uri` that satisfy `where` (earlier ones seen first)."""
        def published(m):
            return m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri \
                and where(m["params"]["diagnostics"])
        for seen in self.notifications:
            if published(seen):
                self.notifications.remove(seen)
                return seen["params"]["diagnostics"]
        return self._until(published)["params"]["diagnostics"]

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return "(still running)"
        return self.proc.stderr.read().decode("utf-8", "replace")

    def open(self, path: Path, language: str) -> str:
        uri = path.as_uri()
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": language, "version": 1,
                                                              "text": path.read_text(encoding="utf-8")}})
        return uri

    def close(self) -> int:
        assert self.request("shutdown", None) is None
        self.notify("exit", None)
        try:
            return self.proc.wait(timeout=TIMEOUT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


@pytest.fixture
def project(tmp_path):
    (tmp_path / ".git").mkdir()  # the project boundary: the git root
    return tmp_path


def start(project: Path, capabilities: dict) -> tuple:
    """A server started elsewhere than the project, as an editor may start it: the workspace root
    it is given decides (the nearest project config, relative paths)."""
    pytest.importorskip("pygls")
    started = Client(project.parent)
    answer = started.request("initialize", {"processId": os.getpid(), "rootUri": project.as_uri(),
                                            "capabilities": capabilities})
    started.notify("initialized", {})
    return started, answer


@pytest.fixture
def client(project):
    started = None
    try:
        started, _ = start(project, {})
        yield started
    finally:
        if started is not None and started.proc.poll() is None:
            started.proc.kill()


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def position(path: Path, needle: str, line: int) -> dict:
    """The LSP position of `needle` on 0-based `line` of `path`, in UTF-16 units."""
    text = path.read_text(encoding="utf-8").split("\n")[line]
    return {"line": line, "character": utf16(text[:text.index(needle)])}


SFT = """\
# TRL SFT recipe with its DeepSpeed config beside it
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
deepspeed: ds_z2.json
"""
# A non-ASCII line, with a character outside the BMP (two UTF-16 units, one code point).
DS_Z2 = '{"_comment": "f\u00fcr \U0001F600", "train_micro_batch_size_per_gpu": 4,\n' \
        ' "gradient_accumulation_steps": "auto", "zero_optimization": {"stage": 2}}\n'


def test_a_round_trip_diagnostic_fix_dependant_hover_shutdown(project, client):
    sft, ds = project / "sft.yaml", project / "ds_z2.json"
    sft.write_text(SFT, encoding="utf-8")
    ds.write_text(DS_Z2, encoding="utf-8")
    (project / "requirements.txt").write_text("transformers==4.57.1\n")  # a release that refuses the mismatch
    uri = client.open(sft, "yaml")

    [found] = client.diagnostics(uri)
    assert found["code"] == "BL120" and found["severity"] == 1 and found["source"] == "batchlint"
    assert "DeepSpeed train_micro_batch_size_per_gpu 4 differs from per_device_train_batch_size 2" in found["message"]
    start = position(sft, "2", 2)
    assert found["range"] == {"start": start, "end": {"line": 2, "character": start["character"] + 1}}
    assert "codeDescription" not in found  # this repository declares no docs URL
    # The note in the DeepSpeed JSON, at its UTF-16 column on the non-ASCII line.
    notes = {n["location"]["uri"]: n for n in found["relatedInformation"]}
    assert notes[ds.as_uri()]["location"]["range"]["start"] == position(ds, "4", 0)
    assert notes[ds.as_uri()]["message"] == "train_micro_batch_size_per_gpu = 4 in the DeepSpeed config"
    [named] = [n for n in found["relatedInformation"] if n["location"]["uri"] == uri and "is named here" in n["message"]]
    assert named["location"]["range"]["start"] == position(sft, "ds_z2.json", 4)

    # The fix: "auto" in the DeepSpeed JSON, a safe fix, so the preferred one.
    [action] = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": found["range"], "context": {"diagnostics": [found]}})
    assert action["kind"] == "quickfix" and action["isPreferred"] is True
    assert action["title"].startswith('BL120: set "train_micro_batch_size_per_gpu" to "auto"')
    [edit] = action["edit"]["changes"][ds.as_uri()]
    at = position(ds, "4", 0)
    assert edit == {"range": {"start": at, "end": {"line": 0, "character": at["character"] + 1}}, "newText": '"auto"'}
    # Asked for other kinds only, or for a range without the finding: no action.
    assert client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": found["range"],
        "context": {"diagnostics": [found], "only": ["source.organizeImports"]}}) == []
    assert client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 3}},
        "context": {"diagnostics": []}}) == []

    # The linked JSON, open in the editor, takes the fix and is saved: the YAML that links it is linted again.
    ds_uri = client.open(ds, "json")
    fixed = DS_Z2.replace(": 4,", ': "auto",')
    ds.write_text(fixed, encoding="utf-8")
    client.notify("textDocument/didChange", {"textDocument": {"uri": ds_uri, "version": 2},
                                             "contentChanges": [{"text": fixed}]})
    client.notify("textDocument/didSave", {"textDocument": {"uri": ds_uri}})
    assert client.diagnostics(uri, where=lambda items: not items) == []

    # Hover on the micro batch key: the explain rows it feeds, with their sources.
    shown = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 2, "character": 3}})
    text = shown["contents"]["value"]
    assert shown["contents"]["kind"] == "markdown"
    assert "| micro batch (per GPU) | 2 | per_device_train_batch_size, line 3 |" in text
    assert "| global batch (sequences/step) |" in text and "| tokens per optimizer step |" in text
    assert "gradient accumulation" not in text.replace("= micro batch x accumulation x dp", "")  # not fed by it
    # Off the batch keys, nothing.
    assert client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 2}}) is None

    assert client.close() == 0


LAUNCH = """\
#!/bin/bash
# DeepSpeed's own launcher on one node of 8 GPUs
deepspeed --num_gpus 8 train.py --deepspeed ds.json
"""


def test_a_launch_script_is_linted_again_when_the_config_it_runs_changes(project, client):
    script, ds = project / "train.sh", project / "ds.json"
    script.write_text(LAUNCH, encoding="utf-8")
    ds.write_text('{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 4}\n',
                  encoding="utf-8")
    uri = client.open(script, "shellscript")

    # W = 8 comes from the launch line: the finding is in the config, with the launch as a note.
    [found] = client.diagnostics(ds.as_uri())
    assert found["code"] == "BL102" and "is not 128" in found["message"] and "world size 8" in found["message"]
    assert found["range"]["start"] == position(ds, "64", 0)
    assert {n["location"]["uri"] for n in found["relatedInformation"]} == {ds.as_uri(), uri}
    # Hover on the launch line: W and what it feeds.
    text = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 2, "character": 14}})[
        "contents"]["value"]
    assert "| world size W | 8 | from the launch line: --num_gpus 8 (train.sh:3) |" in text
    # The global batch W feeds, which DeepSpeed refuses: the table says why, as BL102 does.
    assert "| global batch (sequences/step) | ? | fails: train_batch_size 64 is not 128" in text

    # The config changes on disk (not open in the editor): the script that runs it is linted again.
    ds.write_text('{"train_batch_size": 128, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 4}\n',
                  encoding="utf-8")
    client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": ds.as_uri(), "type": 2}]})
    assert client.diagnostics(ds.as_uri(), where=lambda items: not items) == []
    assert client.close() == 0


XTUNER = """\
# batchlint: world-size=32
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1  # per_device
accumulative_counts = 16  # tuned at sp=1, f\u00fcr \U0001F600

sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts, dtype="bfloat16")
"""


def test_an_unsaved_buffer_is_linted_from_its_text_and_an_unsafe_fix_is_not_preferred(project, client):
    config = project / "sft.py"
    config.write_text(XTUNER.replace("sequence_parallel_size = 4", "sequence_parallel_size = 1"), encoding="utf-8")
    uri = client.open(config, "python")
    assert client.diagnostics(uri) == []  # sp 1 on disk: nothing to say

    # sp raised in the buffer, not saved: the buffer is what is linted.
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"text": XTUNER}]})
    [found] = client.diagnostics(uri, where=bool)
    assert found["code"] == "BL101" and found["severity"] == 2
    assert found["range"]["start"] == {"line": 6, "character": XTUNER.split("\n")[6].index("16")}

    [action] = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": found["range"], "context": {"diagnostics": [found]}})
    assert action["title"].endswith("(unsafe fix)") and action["isPreferred"] is False
    [edit] = action["edit"]["changes"][uri]
    end_of_line = utf16(XTUNER.split("\n")[6])  # after the astral character: one more unit than characters
    assert end_of_line == len(XTUNER.split("\n")[6]) + 1
    assert edit == {"range": {"start": {"line": 6, "character": end_of_line}, "end": {"line": 6, "character": end_of_line}},
                    "newText": "\naccumulative_counts *= sequence_parallel_size"}

    # Hover on sp: its row, dp it divides, and the global batch and tokens dp feeds.
    text = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 4, "character": 0}})[
        "contents"]["value"]
    rows = [[cell.strip() for cell in line.split("|")[1:3]] for line in text.splitlines()[3:] if line.startswith("| ")]
    assert rows == [["sequence parallel degree", "4"], ["data parallel dp", "8"],
                    ["global batch (sequences/step)", "128"], ["tokens per optimizer step", "?"]]
    assert "| data parallel dp | 8 | dp: derived: W (32) / sequence_parallel_size (4) |" in text

    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert client.diagnostics(uri, where=lambda items: not items) == []
    assert client.close() == 0


def test_without_pygls_the_command_says_what_to_install(project):
    blocked = project / "blocked"
    blocked.mkdir()
    (blocked / "sitecustomize.py").write_text("import sys\nsys.modules['pygls'] = None\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocked), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "batchlint", "server"], cwd=project, env=env, capture_output=True,
                          text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert "install batchlint[server]" in done.stderr and done.stdout == ""


def test_a_plain_lint_never_imports_the_server():
    code = "import sys; from batchlint import cli, run; import batchlint.rules; " \
           "print(sorted(m for m in sys.modules if m.startswith(('pygls', 'lsprotocol', 'batchlint.server'))))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT)
    assert done.stdout.strip() == "[]", done.stderr


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
def test_columns_are_counted_in_the_position_encoding_agreed(project, encoding):
    ds = project / "ds.json"
    line = '{"note": "f\u00fcr \U0001F600", "train_batch_size": 100, "train_micro_batch_size_per_gpu": 4, ' \
           '"gradient_accumulation_steps": 4}'
    ds.write_text(line + "\n", encoding="utf-8")
    offered = {} if encoding == "utf-16" else {"general": {"positionEncodings": [encoding]}}
    client, answer = start(project, offered)
    try:
        assert answer["capabilities"].get("positionEncoding", "utf-16") == encoding
        [found] = client.diagnostics(client.open(ds, "json"))
        before = line[:line.index("100")]
        units = {"utf-16": utf16(before), "utf-8": len(before.encode("utf-8")), "utf-32": len(before)}[encoding]
        assert found["code"] == "BL102"
        assert found["range"] == {"start": {"line": 0, "character": units}, "end": {"line": 0, "character": units + 3}}
        assert client.close() == 0
    finally:
        if client.proc.poll() is None:
            client.proc.kill()


def test_a_line_break_only_one_side_counts_lands_on_the_same_character():
    from batchlint.server.positions import Text

    # PyYAML breaks lines at U+2028 too; an editor does not: batchlint's line 3 is the editor's line 1.
    text = Text('a: "x\u2028y"\nb: 2\n', "yaml")
    assert text.lsp(3, 4) == (1, 3) and text.line_at(1, 3) == 3
    assert Text('a: "x\u2028y"\nb: 2\n', "json").lsp(2, 4) == (1, 3)  # JSON breaks at "\n" only
    assert Text("\u00e9: 1\n", None, "utf-8").lsp(1, 4) == (0, 4)
    assert Text("\U0001F600: 1\n", None, "utf-16").lsp(1, 4) == (0, 4)
    assert Text("\U0001F600: 1\n", None, "utf-32").lsp(1, 4) == (0, 3)
    assert Text("ab\r\ncd", None).lsp(1, 9) == (0, 2)  # an end past the line is the line's end

