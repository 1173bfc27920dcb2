# The Action's lint steps: `run.sh sarif` writes the SARIF report and never fails; `run.sh annotate`
# prints the annotations and fails on findings. Inputs arrive as variables, never pasted into a
# script: BATCHLINT_PATHS holds one path a line, taken whole (spaces kept, nothing expanded);
# BATCHLINT_ARGS one or more options a line, split as a shell splits words, quotes kept
# (`--select "BL1,BL2"`) and nothing expanded (helper.py).
set -uo pipefail
mode=${1:?usage: run.sh sarif|annotate}
here=${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set: this script is a step of the batchlint action}
batchlint=${BATCHLINT:?the install step did not run}
python=${BATCHLINT_VENV_PYTHON:?the install step did not run}

paths=()
while IFS= read -r line || [ -n "$line" ]; do
  line=${line#"${line%%[![:space:]]*}"}  # surrounding blanks (and a CR) are YAML's, not the path's
  line=${line%"${line##*[![:space:]]}"}
  if [ -n "$line" ]; then paths+=("$line"); fi
done <<<"${BATCHLINT_PATHS-}"

words=$(mktemp "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/batchlint-args.XXXXXX")
trap 'rm -f "$words" "${full-}"' EXIT
"$python" "$here/action/helper.py" split-args >"$words" || exit 2
args=()
while IFS= read -r -d '' word; do args+=("$word"); done <"$words"

# The user's options first, so the step's own (format, output) win; `--` so a path is never an option.
set -- ${args[@]+"${args[@]}"}
case $mode in
  sarif)
    "$batchlint" check "$@" --output-format sarif --output-file "${BATCHLINT_SARIF:?}" --exit-zero -- \
      ${paths[@]+"${paths[@]}"}
    ;;
  annotate)
    summary=${GITHUB_STEP_SUMMARY-}
    if [ -z "$summary" ]; then
      "$batchlint" check "$@" --output-format github -- ${paths[@]+"${paths[@]}"}
      exit
    fi
    # batchlint writes the whole table; the job summary gets what GitHub accepts of it.
    full=$(mktemp "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/batchlint-summary.XXXXXX")
    GITHUB_STEP_SUMMARY=$full "$batchlint" check "$@" --output-format github -- ${paths[@]+"${paths[@]}"}
    status=$?
    "$python" "$here/action/helper.py" cap-summary "$full" "$summary"
    exit "$status"
    ;;
  *)
    echo "::error title=batchlint action::unknown step $mode" >&2
    exit 2
    ;;
esac
