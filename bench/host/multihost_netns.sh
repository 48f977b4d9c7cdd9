#!/bin/bash
# Usage: bench/host/multihost_netns.sh HALO3D OUTDIR [N]
# The host backend across two test hosts made of network namespaces (the setup of
# tests/production/test_multihost.sh, shared in tests/production/netns_hosts.sh: veth pairs
# into a bridge, Open MPI's tcp btl over 10.77.0.0/24 only), against the same ranks on one
# host, N^3 (default 96): the pair probe's latency and bandwidth between the hosts,
# `bench --backend host` and `solve --rhs random` on 1 rank, on 2 ranks on one host and on 2
# ranks on two hosts (one each). Needs root, ip and unshare. Results (text and JSON reports)
# go to OUTDIR. Open MPI spins in its waits unless OMPI_MCA_mpi_yield_when_idle=1 is in the
# environment: run it both ways (docs/CLUSTERS.md, "TCP between hosts with a rank on every
# core").
set -euo pipefail
BIN=$(readlink -f "$1")
OUT=$(mkdir -p "$2" && cd "$2" && pwd)
N=${3:-96}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# No skip here, unlike the test: a measurement that cannot make its hosts fails (set -e).
# shellcheck source=tests/production/netns_hosts.sh
source "$SRC/tests/production/netns_hosts.sh"
netns_bridge_up h3dbn$$-
netns_hosts_up a b
# on_hosts: each launch limited to 300 s, ranks bound to cores
NETNS_TIMEOUT=300
NETNS_MPIRUN_ARGS=(--bind-to core)
cd "$OUT"
one='h3d-a slots=2\n'
two='h3d-a slots=1\nh3d-b slots=1\n'
B=(bench --backend host --grid "$N,$N,$N" --reps 5 --warmup 1)
S=(solve --backend host --grid "$N,$N,$N" --rhs random --tol 1e-8 --output none --quiet)
on_hosts "$two" -np 2 --map-by ppr:1:node "$BIN" probe --backend host --report probe_2hosts.json >probe_2hosts.txt 2>&1
on_hosts "$one" -np 2 "$BIN" probe --backend host --report probe_1host.json >probe_1host.txt 2>&1
for rep in 1 2; do
  on_hosts "$one" -np 1 "$BIN" "${B[@]}" --report "bench1_$rep.json" >"bench1_$rep.txt" 2>&1
  on_hosts "$one" -np 2 "$BIN" "${B[@]}" --report "bench2_1host_$rep.json" >"bench2_1host_$rep.txt" 2>&1
  on_hosts "$two" -np 2 --map-by ppr:1:node "$BIN" "${B[@]}" --report "bench2_2hosts_$rep.json" >"bench2_2hosts_$rep.txt" 2>&1
  on_hosts "$one" -np 1 "$BIN" "${S[@]}" --report "solve1_$rep.json" >/dev/null 2>&1
  on_hosts "$one" -np 2 "$BIN" "${S[@]}" --report "solve2_1host_$rep.json" >/dev/null 2>&1
  on_hosts "$two" -np 2 --map-by ppr:1:node "$BIN" "${S[@]}" --report "solve2_2hosts_$rep.json" >/dev/null 2>&1
done
python3 - <<'PY'
import glob, json
for f in sorted(glob.glob("solve*.json")):
    j = json.load(open(f)); t = j["timing"]
    print(f, "hosts", j.get("hosts", j.get("parallel", {}).get("hosts")), "it", j["result"]["iterations"],
          "setup %.4f start %.4f solve %.4f" % (t["setup_s"], t.get("start_s", 0), t["solve_s"]))
for f in sorted(glob.glob("bench*.json")):
    j = json.load(open(f)); r = {x["name"]: x["median_ms"] for x in j["results"]}
    print(f, "copy %.1f GB/s" % j["copy_gbytes_per_s"], "mg_pcg_iteration %.3f ms" % r["mg_pcg_iteration"],
          "mg_vcycle %.3f" % r["mg_vcycle"], "cg_iteration %.3f" % r["cg_iteration"])
PY
grep -E "^ *(8 B|64 KiB|1 MiB|8|65536|1048576)|latency|bandwidth" probe_2hosts.txt | head -20
