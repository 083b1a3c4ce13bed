#!/usr/bin/env python3
"""Grade one attempt's patch with SWE-bench's own harness, pinned.

Used as `benchmark.verifier.command` in examples/manifests/swebench-official-harness.yml, the legacy
path (the agent works on the runner host; manifests/p0-swebench-verified.yml runs Harbor's task
folders inside the instance image instead), with
`verifier.reports: true`, so only the report decides:

    python3 examples/swebench/grade.py --swebench-version 4.0.3 --dataset {out}/../swebench-instance.jsonl \\
        --instance {instance} --predictions {predictions} --run-id {run_id} --report-dir {out}

It refuses (exit 3, no report: the attempt is ungraded) unless the installed `swebench` is the pinned
version, then runs `python -m swebench.harness.run_evaluation` on the instance row that preparation
wrote from the pinned dataset revision. The run id is unique per attempt, so SWE-bench never reuses an
earlier attempt's report; a report written anywhere but --report-dir is not read.
"""
import argparse
import subprocess
import sys
from importlib import metadata


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("--swebench-version", "--dataset", "--instance", "--predictions", "--run-id", "--report-dir"):
        p.add_argument(name, required=True)
    p.add_argument("--max-workers", default="1")
    a = p.parse_args()
    try:
        installed = metadata.version("swebench")
    except metadata.PackageNotFoundError:
        installed = None
    if installed != a.swebench_version:
        print(
            f"refusing: swebench {installed or 'is not installed'}, the manifest pins {a.swebench_version} "
            f"(pip install swebench=={a.swebench_version})",
            file=sys.stderr,
        )
        return 3
    cmd = [
        sys.executable, "-m", "swebench.harness.run_evaluation",
        "--dataset_name", a.dataset, "--split", "test",
        "--instance_ids", a.instance, "--predictions_path", a.predictions,
        "--run_id", a.run_id, "--report_dir", a.report_dir, "--max_workers", a.max_workers,
    ]
    return subprocess.run(cmd, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
