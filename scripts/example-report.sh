#!/usr/bin/env bash
# Regenerate docs/example-report/: the demo (real Pi vs real OpenCode on the built-in panel, scripted
# model, offline) run with `harness-watch local manifests/demo.yml`, and its reports copied in —
# the first run's report, the confirmation round's report and its diagnosis folder (dossier.md and
# dossier.json, the ATIF trajectories it links, the analyst's proposal), and the ATIF trajectories both
# reports link.
#   bash scripts/example-report.sh [existing-demo-output-folder]
# With a folder, its reports are copied without running the demo again (about 15 minutes).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-}
if [ -z "$out" ]; then
  out=$(mktemp -d)/demo
  node --import tsx "$root/src/cli/entry.ts" local "$root/manifests/demo.yml" --out "$out"
fi
# Absolute, as the records write it: the replacement below then finds every path of this folder.
out=$(cd "$out" && pwd)
dest="$root/docs/example-report"
rm -rf "$dest"
mkdir -p "$dest/confirm-1/diagnosis"
cp "$out/report.md" "$out/report.html" "$dest/"
for f in report.md report.html; do
  [ -f "$out/confirm-1/$f" ] && cp "$out/confirm-1/$f" "$dest/confirm-1/"
done
# The whole diagnosis folder: dossier.md links atif/*.json, report.html links dossier.json.
[ -d "$out/confirm-1/diagnosis" ] && cp -R "$out/confirm-1/diagnosis/." "$dest/confirm-1/diagnosis/"
# The ATIF trajectories the reports link (artifacts/<leg>/logs/…/trajectory.atif.json), so every link
# in the example resolves; nothing else of the artifacts is copied.
for run in "" confirm-1/; do
  [ -d "$out/${run}artifacts" ] || continue
  (cd "$out/${run}artifacts" && find . -name trajectory.atif.json -print0) |
    while IFS= read -r -d '' f; do
      mkdir -p "$dest/${run}artifacts/$(dirname "$f")"
      cp "$out/${run}artifacts/$f" "$dest/${run}artifacts/$f"
    done
done
# Paths of this machine never enter the repository: the run folder becomes out/demo, and the
# repository's own folder (the panel's tests named in verifier output) the current folder.
{ grep -rlF "$out" "$dest" || true; } | xargs -r sed -i "s#$out#out/demo#g"
{ grep -rlF "$root/" "$dest" || true; } | xargs -r sed -i "s#$root/#./#g"
echo "wrote $dest"
