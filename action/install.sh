# The Action's install step: batchlint in a virtual environment of its own under $RUNNER_TEMP,
# never the job's Python, with the dependency versions its tests ran with (constraints.txt; the
# build's setuptools too, hence --no-build-isolation after installing the pinned one).
set -euo pipefail
python=${BATCHLINT_PYTHON:?no Python was found or set up for batchlint}
here=${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set: this script is a step of the batchlint action}
out=${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}
venv="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/batchlint-venv"
pins="$here/action/constraints.txt"

"$python" -m venv --clear "$venv"
if [ -d "$venv/Scripts" ]; then bin="$venv/Scripts"; else bin="$venv/bin"; fi  # Windows / elsewhere
pip=("$bin/python" -m pip --disable-pip-version-check --no-input install --quiet --constraint "$pins")
"${pip[@]}" setuptools
"${pip[@]}" --no-build-isolation "$here"
"$bin/batchlint" --version
echo "python=$bin/python" >>"$out"
echo "batchlint=$bin/batchlint" >>"$out"
