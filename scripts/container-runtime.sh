#!/usr/bin/env bash
# A leg's container runtime, before the action's run step (reusable workflow, run and confirm-run jobs).
# For a plan whose manifest says sandbox.backend: container: name the runtime the leg's probe will take
# (docker when its engine answers, else podman; or the one sandbox.container.runtime names), the cgroup
# version and the disk free where that runtime stores images, and warn when the leg's instances may not
# fit. On GitHub-hosted runners (HOSTED=true) it first removes images no container uses and, with
# FREE_DISK=true, the runner image's largest preinstalled toolchains (sudo, the runner's own). Other
# backends: nothing to do. Self-hosted runners keep their images (they may be another job's cache).
#   in:  PLAN (plan.json), LEG (matrix.leg), HOSTED, FREE_DISK
#   out: backend, runtime (docker | podman), cgroup (v1 | v2), disk-free-gb, instances
set -euo pipefail
: "${PLAN:?plan.json is required}"
: "${LEG:?the leg id is required}"
backend=$(jq -r '.manifest.sandbox.backend // "auto"' "$PLAN")
echo "backend=$backend" >> "$GITHUB_OUTPUT"
if [ "$backend" != container ]; then
  echo "sandbox.backend $backend: no container runtime needed"
  exit 0
fi

choice=$(jq -r '.manifest.sandbox.container.runtime // "auto"' "$PLAN")
runtime=
for rt in docker podman; do
  if [ "$choice" != auto ] && [ "$choice" != "$rt" ]; then continue; fi
  if command -v "$rt" >/dev/null 2>&1 && timeout 60 "$rt" info >/dev/null 2>&1; then
    runtime=$rt
    break
  fi
done
if [ -z "$runtime" ]; then
  echo "::error title=No container runtime::sandbox.container.runtime is $choice but no engine answers on this runner: install Podman (sudo apt-get install podman) or Docker, or point DOCKER_HOST / CONTAINER_HOST at an engine"
  exit 1
fi
echo "runtime=$runtime" >> "$GITHUB_OUTPUT"
echo "container runtime: $("$runtime" --version)"

if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then cgroup=v2; else cgroup=v1; fi
echo "cgroup=$cgroup" >> "$GITHUB_OUTPUT"

if [ "${HOSTED:-false}" = true ]; then
  "$runtime" image prune --all --force >/dev/null
  if [ "${FREE_DISK:-false}" = true ]; then
    sudo rm -rf /usr/local/lib/android /usr/share/dotnet /opt/ghc /usr/local/.ghcup /opt/hostedtoolcache/CodeQL
  fi
fi

# Free disk where the runtime keeps its images (Docker: its root dir; Podman: its graph root).
if [ "$runtime" = docker ]; then
  store=$(docker info --format '{{.DockerRootDir}}' 2>/dev/null || true)
else
  store=$(podman info --format '{{.Store.GraphRoot}}' 2>/dev/null || true)
fi
[ -d "$store" ] || store=/
free=$(df -P -BG "$store" | awk 'NR == 2 { sub("G", "", $4); print $4 }')
echo "disk-free-gb=$free" >> "$GITHUB_OUTPUT"

instances=$(jq -r --arg leg "$LEG" '[.legs[] | select(.leg == $leg) | .instances | length] | first // 0' "$PLAN")
echo "instances=$instances" >> "$GITHUB_OUTPUT"
echo "leg $LEG: $instances instance(s), $cgroup cgroups, ${free} GB free at $store"
# A SWE-bench instance image is 1–3 GB; its task image adds a thin layer on top.
if [ "$free" -lt $((instances * 3 + 2)) ]; then
  echo "::warning title=Disk for task images::leg $LEG runs $instances instance(s) and ${free} GB is free at $store: instance images of 1–3 GB each may not fit; raise shards.count (fewer instances per leg) or set free-disk: true"
fi
