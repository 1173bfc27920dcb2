'use strict';
// batchlint in VS Code: starts `batchlint server` (a language server on its standard input and
// output) for the files batchlint reads. Plain JavaScript, loaded as it is: no build step.

const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

// The VS Code language ids of batchlint's formats (YAML, JSON, TOML, Python, shell); package.json
// activates the extension on the same ones and adds `.slurm` and `.sbatch` to `shellscript`.
// Only files on disk: the server lints a buffer under its file's name (its format, its project).
const LANGUAGES = ['yaml', 'json', 'toml', 'python', 'shellscript'];

let client;

function serverOptions() {
  const config = vscode.workspace.getConfiguration('batchlint');
  // No `transport` key: with TransportKind.stdio, vscode-languageclient appends `--stdio` to the
  // arguments (lib/node/main.js of 9.0.1), an option `batchlint server` does not take. Without one
  // it talks to the process over its standard input and output all the same.
  return { command: config.get('path'), args: config.get('args') };
}

async function start() {
  const options = serverOptions();
  client = new LanguageClient('batchlint', 'batchlint', options, {
    documentSelector: LANGUAGES.map((language) => ({ scheme: 'file', language })),
  });
  try {
    await client.start();
  } catch (error) {
    client = undefined;
    vscode.window.showErrorMessage(
      `batchlint: could not start \`${[options.command, ...options.args].join(' ')}\` (${error.message || error}). ` +
        "Install it with `pip install 'batchlint[server]'`, or set batchlint.path to the executable.");
  }
}

async function stop() {
  if (client) {
    const running = client;
    client = undefined;
    await running.stop();
  }
}

async function restart() {
  await stop();
  await start();
}

async function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand('batchlint.restart', restart),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration('batchlint')) {
        return restart();
      }
      return undefined;
    }),
  );
  await start();
}

function deactivate() {
  return stop();
}

module.exports = { activate, deactivate, LANGUAGES };
