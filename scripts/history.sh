#!/usr/bin/env bash
# The weekly history step of .github/workflows/harness-watch.yml: gathers the earlier runs'
# comparison.json files (carried from week to week in the history artifact, whose runs/ folder the
# previous run left) and this run's, then runs `harness-watch history` over them into $HW_HISTORY:
#   $HW_HISTORY/history.html, history.json   the series page and its data
#   $HW_HISTORY/runs/<run id>-r<round>/      each run's comparison.json and final decision.json (an id
#                                            with other characters, or longer than 120: sanitised
#                                            and cut, plus its hash)
# A run's final decision is the confirmation's when there was one. No previous history (first run,
# expired artifact) starts a new series; a gap in the weekly runs shows as a gap on the page.
#
# Environment: HW_OUT (this run's report folder, default hw-out), HW_CONFIRMATION (default
# hw-confirmation), HW_PREVIOUS_HISTORY (the previous run's history artifact, default
# hw-previous-history), HW_HISTORY (output, default hw-history), HW_HISTORY_RUNS (runs kept, newest
# first, default 104), HW_CLI (the command line, default the bundled CLI of the action checkout).
# Output (GITHUB_OUTPUT): runs, the folder of runs carried to next week (written whenever this run was
# added, so a history that fails to build never loses the series); html, the page's path, once written.
set -euo pipefail

out="${HW_OUT:-hw-out}"
confirmation="${HW_CONFIRMATION:-hw-confirmation}"
previous="${HW_PREVIOUS_HISTORY:-hw-previous-history}"
history="${HW_HISTORY:-hw-history}"
keep="${HW_HISTORY_RUNS:-104}"
read -r -a cli <<<"${HW_CLI:-node .harness-watch/dist/cli/index.js}"

if ! [[ "$keep" =~ ^[1-9][0-9]*$ ]]; then
  echo "::error::HW_HISTORY_RUNS must be a whole number ≥ 1, got '$keep'"
  exit 1
fi
if [ ! -f "$out/comparison.json" ]; then
  echo "history: no $out/comparison.json in this run; nothing to add"
  exit 0
fi

runs="$history/runs"
mkdir -p "$runs"

# add <comparison.json> [decision.json]: copy one run into runs/<run id>-r<round>/. A file that is not
# a comparison (unreadable JSON) is left out with a warning naming it; `history` checks the rest.
add() {
  local comparison=$1 decision=${2:-} id
  if ! id=$(jq -er '"\(.run_id // "unknown")-r\(.round // 0)"' "$comparison" 2>/dev/null); then
    echo "::warning::history: $comparison is not a readable comparison.json; left out of the series"
    return 1
  fi
  # A run id with other characters is sanitised, and the raw id's hash is added so that two ids
  # that sanitise alike ("a/b", "a_b") never share a folder; a plain id keeps its own name.
  # A leading dot or dash would hide the folder from the glob below or read as an option.
  # An id longer than 120 characters is cut there (with its hash): a folder name has at most 255 bytes.
  local safe=${id//[^A-Za-z0-9._-]/_}
  if [[ "$safe" == [.-]* ]]; then safe="_${safe}"; fi
  if [ "${#safe}" -gt 120 ]; then safe=${safe:0:120}; fi
  if [ "$safe" != "$id" ]; then
    safe="${safe}-$(printf '%s' "$id" | sha256sum | cut -c1-12)"
  fi
  id=$safe
  # Called as a condition, so `set -e` does not apply here: each step's failure is returned.
  mkdir -p "$runs/$id" || return 1
  cp "$comparison" "$runs/$id/comparison.json" || return 1
  rm -f "$runs/$id/decision.json" || return 1
  if [ -n "$decision" ] && [ -f "$decision" ]; then cp "$decision" "$runs/$id/decision.json" || return 1; fi
}

found=0
if [ -d "$previous/runs" ]; then
  for d in "$previous"/runs/*/; do
    d=${d%/}
    [ -f "$d/comparison.json" ] || continue
    if add "$d/comparison.json" "$d/decision.json"; then found=$((found + 1)); fi
  done
fi
echo "history: $found earlier run(s) from the previous history"
final_decision="$out/decision.json"
if [ -f "$confirmation/decision.json" ]; then final_decision="$confirmation/decision.json"; fi
if ! add "$out/comparison.json" "$final_decision"; then exit 1; fi

# Keep the newest $keep runs by start time (a run without one sorts first and goes first).
mapfile -t ordered < <(
  for d in "$runs"/*/; do
    printf '%s\t%s\n' "$(jq -r '.stamp.started_at // ""' "$d/comparison.json" 2>/dev/null || true)" "${d%/}"
  done | sort | cut -f2
)
excess=$((${#ordered[@]} - keep))
for ((i = 0; i < excess; i++)); do rm -rf "${ordered[$i]}"; done

# The runs are carried to next week even when the page cannot be built from them.
if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "runs=$runs" >>"$GITHUB_OUTPUT"; fi

# The run's result never depends on its history: a history that cannot be built is a warning.
if ! "${cli[@]}" history "$runs"/*/comparison.json --out "$history"; then
  echo "::warning::history: the weekly history could not be built (the error is above); this run's result stands, and its runs are kept for next week"
  exit 0
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "html=$history/history.html" >>"$GITHUB_OUTPUT"; fi
