# The Action's first step: a Python 3.10+ on PATH that can create a virtual environment
# (venv and ensurepip; Debian's python3 without python3-venv cannot). found=false asks
# actions/setup-python for one; so does the `python-version` input, which names it.
set -uo pipefail
out=${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set: this script is a step of the batchlint action}
if [ -n "${BATCHLINT_PYTHON_VERSION:-}" ]; then
  echo "found=false" >>"$out"
  echo "batchlint: python-version ${BATCHLINT_PYTHON_VERSION} requested: actions/setup-python provides it"
  exit 0
fi
for name in python3 python; do
  candidate=$(command -v "$name" 2>/dev/null) || continue
  # Windows' python3 may be the Store's stub, which exits 9009: running it is the test.
  if "$candidate" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' >/dev/null 2>&1; then
    echo "found=true" >>"$out"
    echo "python=$candidate" >>"$out"
    echo "batchlint: creates its environment with $("$candidate" -c 'import sys; print(sys.version.split()[0])') at $candidate"
    exit 0
  fi
done
echo "found=false" >>"$out"
echo "batchlint: no Python 3.10+ with venv on PATH: actions/setup-python provides one"
