# The Action's lint step, one batchlint run: it annotates the pull request and fails on findings at the
# threshold, writes the job summary (with `compare`, first the batch numbers the change moves, then the
# findings; cut to GitHub's limit) and, with `sarif`, the SARIF report. Inputs arrive as variables,
# never pasted into a script: BATCHLINT_PATHS holds one path a line, taken whole (spaces kept, nothing
# expanded); BATCHLINT_ARGS one or more options a line, split as a shell splits words, quotes kept
# (`--select "BL1,BL2"`) and nothing expanded (helper.py).
set -uo pipefail
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

# With a base to compare with (the pull request's), the run reads the change as evidence (`--since`: BL106)
# and the job summary gets the batch numbers it moves; a base this checkout lacks is a warning.
base=${BATCHLINT_COMPARE-}
if [ -n "$base" ]; then
  shown=${base//[^0-9A-Za-z._\/~^@-]/?}
  if [[ $base != -* ]] && git cat-file -e "$base^{commit}" 2>/dev/null; then
    args+=(--since "$base")
  else
    echo "::warning title=batchlint compare::the revision '$shown' is not in this checkout, so the batch table is not compared: check out with fetch-depth: 0 (actions/checkout) to compare"
  fi
fi

format=github
sarif=${BATCHLINT_SARIF-}
if [ -n "$sarif" ]; then
  case $sarif in
    *,*) echo "::error title=batchlint action::the sarif path may not hold a comma: $sarif" >&2; exit 2 ;;
  esac
  format="github,sarif:$sarif"
fi

# The user's options first, so the step's own (the format) win; `--` so a path is never an option.
set -- ${args[@]+"${args[@]}"}
summary=${GITHUB_STEP_SUMMARY-}
if [ -z "$summary" ]; then
  "$batchlint" check "$@" --output-format "$format" -- ${paths[@]+"${paths[@]}"}
  exit
fi
# batchlint writes the whole summary; the job summary gets what GitHub accepts of it.
full=$(mktemp "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/batchlint-summary.XXXXXX")
GITHUB_STEP_SUMMARY=$full "$batchlint" check "$@" --output-format "$format" -- ${paths[@]+"${paths[@]}"}
status=$?
"$python" "$here/action/helper.py" cap-summary "$full" "$summary"
exit "$status"
