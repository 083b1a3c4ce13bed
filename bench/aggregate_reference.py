"""Reference for bench/aggregate.ts: the same workload written plainly with numpy and scipy.

Reads the plan and every leg's attempts.jsonl, ledger.jsonl and leg.json from disk, checks each row's
fields and that every attempt's ledger row count matches its record, builds one block per instance
(the trials of a cell summed, outcomes counted), then for each treatment against the baseline: the
exact McNemar test over the paired trials, and a joint block bootstrap (one resample of instances
shared by every metric and comparison) of the ratio of means of 8 metrics with percentile intervals;
writes comparison.json. Prints one JSON line: {"wall_s", "cpu_s", ...} for the workload after imports.

Usage: python3 bench/aggregate_reference.py <folder with plan.json and artifacts/> [--resamples B]
"""

import json
import os
import sys
import time

import numpy as np
from scipy import stats

METRICS = [
    "spend_usd",
    "proxy_requests",
    "input_tokens",
    "input_fresh_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "output_tokens",
    "wall_s",
]
ATTEMPT_FIELDS = {
    "schema_version": int,
    "cell_id": str,
    "instance_id": str,
    "trial": int,
    "attempt": int,
    "final": bool,
    "outcome": str,
    "verifier": dict,
    "telemetry": dict,
    "phases_ms": dict,
}
LEDGER_FIELDS = {"schema_version": int, "request_id": str, "status": str, "tokens": dict, "attribution": dict}


def check(row, fields, where):
    for k, t in fields.items():
        if not isinstance(row.get(k), t):
            raise SystemExit(f"{where}: field {k} missing or not {t.__name__}")


def read_jsonl(path, fields):
    rows = []
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if line.strip():
                row = json.loads(line)
                check(row, fields, f"{path}:{i}")
                rows.append(row)
    return rows


def main():
    root = sys.argv[1]
    B = int(sys.argv[sys.argv.index("--resamples") + 1]) if "--resamples" in sys.argv else 10_000
    t0, c0 = time.perf_counter(), time.process_time()

    with open(os.path.join(root, "plan.json"), encoding="utf-8") as f:
        plan = json.load(f)
    instances = plan["panel"]["instances"]
    index = {inst: i for i, inst in enumerate(instances)}
    n, k = len(instances), plan["trials"]
    cells = [c["id"] for c in plan["cells"]]

    # Per cell: outcome [n, k] (1 resolved, 0 unresolved) and metric sums per block [n, 8].
    outcome = {}
    sums = {}
    for leg in plan["legs"]:
        folder = os.path.join(root, "artifacts", leg["artifact"])
        with open(os.path.join(folder, "leg.json"), encoding="utf-8") as f:
            json.load(f)
        attempts = read_jsonl(os.path.join(folder, "attempts.jsonl"), ATTEMPT_FIELDS)
        ledger = read_jsonl(os.path.join(folder, "ledger.jsonl"), LEDGER_FIELDS)
        per_attempt = {}
        for row in ledger:
            a = row["attribution"]
            key = (a["instance_id"], a["trial"], a["attempt"])
            per_attempt[key] = per_attempt.get(key, 0) + 1
        out = np.zeros((n, k))
        m = np.zeros((n, len(METRICS)))
        for a in attempts:
            tel = a["telemetry"]
            if per_attempt.get((a["instance_id"], a["trial"], a["attempt"]), 0) != tel["rows"]:
                raise SystemExit(f"{leg['artifact']}: ledger rows disagree for {a['instance_id']}")
            i = index[a["instance_id"]]
            out[i, a["trial"]] = 1.0 if a["outcome"] == "resolved" else 0.0
            values = [tel[name] for name in METRICS[:-1]] + [a["phases_ms"]["harness"] / 1000]
            m[i] += values
        outcome[leg["cell"]] = out
        sums[leg["cell"]] = m

    # One resample of blocks shared by every metric and comparison (the joint block bootstrap).
    rng = np.random.default_rng(7)
    idx = rng.integers(0, n, size=(B, n))
    boot = {c: np.stack([sums[c][:, j][idx].sum(axis=1) for j in range(len(METRICS))], axis=1) for c in cells}

    baseline = plan["baseline"]
    comparisons = []
    for t in plan["treatments"]:
        b_out, t_out = outcome[baseline].ravel(), outcome[t].ravel()
        only_b = int(((b_out == 1) & (t_out == 0)).sum())
        only_t = int(((b_out == 0) & (t_out == 1)).sum())
        p = stats.binomtest(only_t, only_b + only_t, 0.5).pvalue if only_b + only_t else 1.0
        metrics = {}
        for j, name in enumerate(METRICS):
            point = sums[t][:, j].sum() / sums[baseline][:, j].sum()
            ratios = boot[t][:, j] / boot[baseline][:, j]
            lo, hi = np.percentile(ratios, [2.5, 97.5])
            metrics[name] = {"ratio_of_means": float(point), "ci": [float(lo), float(hi)]}
        comparisons.append(
            {
                "treatment": t,
                "resolve_rate": [float(b_out.mean()), float(t_out.mean())],
                "mcnemar": {"only_baseline": only_b, "only_treatment": only_t, "p": float(p)},
                "metrics": metrics,
            }
        )
    with open(os.path.join(root, "reference-comparison.json"), "w", encoding="utf-8") as f:
        json.dump({"baseline": baseline, "resamples": B, "comparisons": comparisons}, f)

    print(
        json.dumps(
            {
                "wall_s": time.perf_counter() - t0,
                "cpu_s": time.process_time() - c0,
                "numpy": np.__version__,
                "comparisons": len(comparisons),
            }
        )
    )


if __name__ == "__main__":
    main()
