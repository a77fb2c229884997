#!/usr/bin/env bash
# A target slower than the load generator, for checking that npm run capacity finds the same capacity twice:
# the compiled sandbox (npm run build) held to a share of one core by a Linux cgroup's CPU quota.
#
#   sandbox-quality/benchmark/capped-sandbox.sh <cores> [sandbox flags...]
#   e.g. sandbox-quality/benchmark/capped-sandbox.sh 0.1 --port 18500
#
# On a machine where k6 outruns no sandbox (two shared cores), every capacity figure of the embedded sandbox is
# the generator's; this one is the target's. It needs a writable cgroup (root, or a delegated one): cgroup v2's
# cpu.max, else v1's cpu controller. The quota is counted in periods of 20 ms, so a throttled request waits
# at most 20 ms for its turn, far under the latency SLOs. Ctrl-C (or SIGTERM) stops the sandbox and removes the group.
set -euo pipefail

cores=${1:-}
if [[ ! $cores =~ ^(0\.[0-9]*[1-9][0-9]*|[1-9][0-9]*(\.[0-9]+)?)$ ]]; then
  echo "usage: $0 <cores> [sandbox flags...]   (cores: a positive number, e.g. 0.1 for a tenth of one core)" >&2
  exit 2
fi
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
program="$root/dist/node/cli/momo-harness.js"
[[ -f $program ]] || { echo "$program is missing: run npm run build first" >&2; exit 2; }

period_us=20000
quota_us=$(awk -v c="$cores" -v p="$period_us" 'BEGIN { q = int(c * p + 0.5); if (q < 1000) q = 1000; print q }')
name="momo-capped-$$"
if [[ -w /sys/fs/cgroup/cgroup.subtree_control ]] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
  group="/sys/fs/cgroup/$name"
  mkdir "$group"
  echo "$quota_us $period_us" > "$group/cpu.max"
elif [[ -w /sys/fs/cgroup/cpu ]]; then
  group="/sys/fs/cgroup/cpu/$name"
  mkdir "$group"
  echo "$period_us" > "$group/cpu.cfs_period_us"
  echo "$quota_us" > "$group/cpu.cfs_quota_us"
else
  echo "no writable cgroup with a CPU controller here (run as root, or in a delegated cgroup)" >&2
  exit 2
fi

node "$program" sandbox "$@" &
sandbox=$!
echo "$sandbox" > "$group/cgroup.procs"
stop() {
  kill "$sandbox" 2>/dev/null || true
  wait "$sandbox" 2>/dev/null || true
  rmdir "$group" 2>/dev/null || true
}
trap stop EXIT
trap 'exit 0' INT TERM
echo "sandbox $sandbox held to $cores of a core ($quota_us µs of every $period_us µs, $group)" >&2
wait "$sandbox"
