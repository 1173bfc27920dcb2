# The Action's lint steps: `run.sh sarif` writes the SARIF report and never fails; `run.sh compare`
# adds the batch numbers a change moves to the job summary and never fails; `run.sh annotate`
# prints the annotations and fails on findings. Inputs arrive as variables, never pasted into a
# script: BATCHLINT_PATHS holds one path a line, taken whole (spaces kept, nothing expanded);
# BATCHLINT_ARGS one or more options a line, split as a shell splits words, quotes kept
# (`--select "BL1,BL2"`) and nothing expanded (helper.py).
set -uo pipefail
mode=${1:?usage: run.sh sarif|compare|annotate}
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

# With a base to compare with (the pull request's), the lint reads the change too (`--since`: BL106, a
# layout changed alone that moves a global batch); a base this checkout lacks is left to `compare` to warn of.
base=${BATCHLINT_COMPARE-}
if [[ $mode != compare && -n $base && $base != -* ]] && git cat-file -e "$base^{commit}" 2>/dev/null; then
  args+=(--since "$base")
fi

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
  compare)
    # The summary gets the table of what moved since BATCHLINT_COMPARE, cut to GitHub's limit; the log
    # gets it too. Never fails the job: a base this checkout lacks (a shallow clone) is a warning.
    shown=${base//[^0-9A-Za-z._\/~^@-]/?}
    if [[ -z $base || $base == -* ]] || ! git cat-file -e "$base^{commit}" 2>/dev/null; then
      echo "::warning title=batchlint compare::the revision '$shown' is not in this checkout, so the batch table is not compared: check out with fetch-depth: 0 (actions/checkout) to compare"
      exit 0
    fi
    full=$(mktemp "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/batchlint-compare.XXXXXX")
    if ! "$batchlint" explain --compare "$base" --output-format markdown -- ${paths[@]+"${paths[@]}"} >"$full"; then
      echo "::warning title=batchlint compare::could not compare with '$shown' (see above)"
      exit 0
    fi
    if [ ! -s "$full" ]; then
      printf '### batchlint: no batch number moved since `%s`\n' "$shown" >"$full"
    fi
    cat "$full"
    if [ -n "${GITHUB_STEP_SUMMARY-}" ]; then
      "$python" "$here/action/helper.py" cap-summary "$full" "$GITHUB_STEP_SUMMARY" compare
    fi
    ;;
  *)
    echo "::error title=batchlint action::unknown step $mode" >&2
    exit 2
    ;;
esac
