#!/usr/bin/env bash
# Input verifier-setup of the reusable workflow: run the caller's script (VERIFIER_SETUP, a path in the
# calling repository) that installs the benchmark verifier's tools on the leg's runner. It runs with a
# cleared environment: PATH, HOME, RUNNER_TEMP, GITHUB_WORKSPACE and CI only, so no secret, token or
# runner variable reaches it through its variables, whatever the caller's workflow puts in the job's
# environment. It still runs as the job's user, before the step that holds the secrets: it has the
# job's full trust (the workflow and README say so).
set -euo pipefail
script="${VERIFIER_SETUP:?}"
case "$script" in
  /* | ../* | */../* | *'/..') echo "::error::verifier-setup must be a path inside the calling repository, got $script"; exit 1 ;;
esac
if [ ! -f "$script" ]; then
  echo "::error::verifier-setup: no file $script in the calling repository (the path is relative to its root)"
  exit 1
fi
echo "verifier-setup: running $script with a cleared environment"
exec env -i PATH="$PATH" HOME="$HOME" RUNNER_TEMP="${RUNNER_TEMP:-/tmp}" GITHUB_WORKSPACE="${GITHUB_WORKSPACE:-$PWD}" CI=true \
  bash -eo pipefail "$script"
