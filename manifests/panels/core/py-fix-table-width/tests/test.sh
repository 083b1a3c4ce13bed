#!/usr/bin/env bash
# Hidden verifier: runs the hidden tests against the workspace (the current directory).
set -u
exec python3 -m unittest discover -s "$HW_TESTS_DIR" -t "$HW_TESTS_DIR" -p 'hidden_*.py' -q
