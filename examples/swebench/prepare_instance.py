#!/usr/bin/env python3
"""Prepare one SWE-bench instance for a Harness Watch attempt.

Used as `benchmark.setup` in examples/manifests/swebench-official-harness.yml, the legacy
path (the agent works on the runner host; manifests/p0-swebench-verified.yml runs Harbor's task
folders inside the instance image instead):

    python3 examples/swebench/prepare_instance.py --instance {instance} --workspace {workspace} --out {out} --revision <rev>

It looks the instance up in the SWE-bench dataset at the pinned revision (Hugging Face `datasets`
with `revision=`, or a local JSONL export with --dataset-file, which must declare the same revision
with --dataset-file-revision: anything else is refused), clones the instance's repository at its base
commit into the workspace, writes the problem statement to <out>/instruction.md (the prompt Harness
Watch gives the harness) and the instance's row to <out>/swebench-instance.jsonl, so grading reads the
same revision. Needs network access to GitHub and Hugging Face on the runner, plus `pip install datasets`.
"""
import argparse
import json
import os
import subprocess
import sys


def load_instance(instance_id, dataset, split, dataset_file, revision):
    if dataset_file:
        with open(dataset_file, encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                if row.get("instance_id") == instance_id:
                    return row
        return None
    from datasets import load_dataset  # imported late: only needed without --dataset-file

    for row in load_dataset(dataset, split=split, revision=revision):
        if row["instance_id"] == instance_id:
            return row
    return None


def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--instance", required=True)
    p.add_argument("--workspace", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--dataset", default="princeton-nlp/SWE-bench_Verified")
    p.add_argument("--split", default="test")
    p.add_argument("--revision", help="the dataset revision the manifest pins (benchmark.revision)")
    p.add_argument("--dataset-file", help="local JSONL export of the dataset (one instance per line)")
    p.add_argument("--dataset-file-revision", help="the revision the --dataset-file was exported from")
    a = p.parse_args()

    if not a.revision:
        print("refusing: no --revision; the dataset must be read at the revision the manifest pins", file=sys.stderr)
        return 2
    if a.dataset_file and a.dataset_file_revision != a.revision:
        print(
            f"refusing: --dataset-file is from revision {a.dataset_file_revision or '(undeclared)'}, "
            f"the manifest pins {a.revision}",
            file=sys.stderr,
        )
        return 2
    row = load_instance(a.instance, a.dataset, a.split, a.dataset_file, a.revision)
    if row is None:
        print(f"instance {a.instance} not found in {a.dataset_file or a.dataset}", file=sys.stderr)
        return 2
    os.makedirs(a.workspace, exist_ok=True)
    git("init", "-q", cwd=a.workspace)
    git("remote", "add", "origin", f"https://github.com/{row['repo']}.git", cwd=a.workspace)
    git("fetch", "-q", "--depth", "1", "origin", row["base_commit"], cwd=a.workspace)
    git("checkout", "-q", "FETCH_HEAD", cwd=a.workspace)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "instruction.md"), "w", encoding="utf-8") as f:
        f.write(row["problem_statement"].rstrip() + "\n")
    with open(os.path.join(a.out, "swebench-instance.jsonl"), "w", encoding="utf-8") as f:
        f.write(json.dumps(row, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
