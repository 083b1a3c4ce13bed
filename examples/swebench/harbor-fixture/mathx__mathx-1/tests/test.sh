#!/usr/bin/env bash
# SWE-bench's grading, in small: reset the test files to the base commit, apply the test patch, run the
# FAIL_TO_PASS and PASS_TO_PASS tests, and write the reward (1 only when all of them pass) with a report.
set -u
cd /testbed
mkdir -p /logs/verifier
git checkout -q HEAD -- tests/
git apply --whitespace=nowarn /tests/test.patch || { echo "test patch does not apply"; exit 2; }
python3 - <<'PY'
import json, subprocess, sys
cfg = json.load(open("/tests/config.json"))
status = {}
for name in cfg["FAIL_TO_PASS"] + cfg["PASS_TO_PASS"]:
    r = subprocess.run([sys.executable, "-m", "unittest", name], capture_output=True, text=True)
    status[name] = "PASSED" if r.returncode == 0 else "FAILED"
    print(name, status[name])
resolved = all(status[n] == "PASSED" for n in cfg["FAIL_TO_PASS"] + cfg["PASS_TO_PASS"])
report = {cfg["instance_id"]: {"resolved": resolved, "tests_status": status}}
json.dump(report, open("/logs/verifier/report.json", "w"), indent=2)
open("/logs/verifier/reward.txt", "w").write("1" if resolved else "0")
PY
