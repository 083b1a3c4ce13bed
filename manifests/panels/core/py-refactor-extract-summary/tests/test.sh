#!/usr/bin/env bash
# Hidden verifier: behaviour unchanged and the refactor's structure in place.
set -u
exec python3 -m unittest discover -s "$HW_TESTS_DIR" -t "$HW_TESTS_DIR" -p 'hidden_*.py' -q
