#!/usr/bin/env bash
# Hidden verifier: runs the hidden tests against the workspace, once in UTC and once in a zone with DST.
set -u
TZ=UTC node --test "$HW_TESTS_DIR/hidden.test.mjs" || exit 1
TZ=America/New_York node --test "$HW_TESTS_DIR/hidden.test.mjs" || exit 1
