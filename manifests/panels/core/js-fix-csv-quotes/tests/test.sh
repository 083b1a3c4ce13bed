#!/usr/bin/env bash
# Hidden verifier: runs the hidden tests against the workspace (the current directory).
set -u
exec node --test "$HW_TESTS_DIR/hidden.test.mjs"
