#!/usr/bin/env bash
# Hidden verifier: behaviour unchanged and the refactor's structure in place.
set -u
exec node --test "$HW_TESTS_DIR/hidden.test.mjs"
