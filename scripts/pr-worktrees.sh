#!/usr/bin/env bash
# The code a PR check compares, as two git worktrees of the workspace (reusable workflow, run jobs):
#   hw-head/  the pull request's head: the checkout itself (HEAD, the merge commit GitHub checks out
#             for pull_request events), or, with PR_HEAD_SHA (an on-demand evaluation a maintainer
#             asked for), exactly that commit of refs/pull/<PR_NUMBER>/head — a later push is refused;
#   hw-base/  the merge-base of that head with origin/BASE_REF.
# With PR_HEAD_SHA the workspace stays the base repository: its manifest, verifier and panel are used,
# never the pull request's; the head's code is only read by the harness inside the sandbox.
set -euo pipefail
: "${BASE_REF:?base-ref is required}"
head=$(git rev-parse HEAD)
if [ -n "${PR_HEAD_SHA:-}" ]; then
  if ! [[ "$PR_HEAD_SHA" =~ ^[0-9a-f]{40}$ ]]; then
    echo "::error::pr-head-sha must be a full 40-character commit SHA, got '$PR_HEAD_SHA'"
    exit 1
  fi
  if ! [[ "${PR_NUMBER:-}" =~ ^[0-9]+$ ]]; then
    echo "::error::pr-head-sha needs pr-number (the pull request whose head it is)"
    exit 1
  fi
  git fetch --no-tags origin "refs/pull/$PR_NUMBER/head"
  now=$(git rev-parse FETCH_HEAD)
  if [ "$now" != "$PR_HEAD_SHA" ]; then
    echo "::error::pull request #$PR_NUMBER moved to $now after $PR_HEAD_SHA was approved for evaluation: not running unapproved code; ask again"
    exit 1
  fi
  head=$PR_HEAD_SHA
fi
git worktree add --detach hw-head "$head"
git worktree add --detach hw-base "$(git merge-base "$head" "origin/$BASE_REF")"
