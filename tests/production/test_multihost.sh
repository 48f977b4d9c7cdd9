#!/bin/bash
# Multi-host on one machine: three test hosts h3d-a, h3d-b, h3d-c made of Linux network
# namespaces (a veth pair each into a bridge that lives in a fourth namespace; addresses
# 10.77.0.1-3/24 exist only inside them, and no namespace has a route anywhere else).
# mpirun runs inside h3d-a and starts orted on the others through netns-agent.sh (its
# plm_rsh_agent); Open MPI is restricted to 10.77.0.0/24 (oob and btl tcp).
# Proves:
#   A  `halo3d info`, 6 ranks, 2 per host: the rank-to-host map and the per-host grouping
#      (host index, local rank R of N) match where mpirun placed each rank
#   B  uneven placement (1 + 3 ranks) is grouped right too
#   C  a solve split over 2 and over 3 hosts gives bitwise the /u of the same process grid on
#      one host, and its report counts the hosts
# All test hosts share one kernel, yet MPI_Comm_split_type(SHARED), which HostMap groups by,
# puts each test host's ranks in their own group: Open MPI derives that locality from its
# runtime (one orted per host), not from the kernel. Each test host gets its own UTS name
# (unshare --uts), as real hosts have: Open MPI itself keys shared-memory segments and TCP
# peers by host name, and test hosts sharing one name (and one /dev/shm) crash it.
# Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN), ip netns and unshare: skipped (77) otherwise.
# shellcheck source=tests/production/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/production/netns_hosts.sh
source "$(dirname "${BASH_SOURCE[0]}")/netns_hosts.sh"
need_python_h5py
[[ $(id -u) == 0 ]] || skip "needs root to create network namespaces (ip netns)"
command -v ip >/dev/null || skip "no ip command (apt-get install iproute2)"
command -v unshare >/dev/null || skip "no unshare command (util-linux)"

PREFIX=h3dmh$$-
NS=("${PREFIX}a" "${PREFIX}b" "${PREFIX}c")
if ! netns_bridge_up "$PREFIX" 2>/tmp/h3d-netns-err.$$; then
  why=$(cat /tmp/h3d-netns-err.$$); rm -f /tmp/h3d-netns-err.$$
  skip "cannot create a network namespace here: $why"
fi
rm -f /tmp/h3d-netns-err.$$
ip netns exec "$NETNS_BR" true 2>/dev/null || skip "cannot enter a network namespace (ip netns exec)"
ip netns exec "$NETNS_BR" unshare --uts true 2>/dev/null || skip "cannot create a UTS namespace (unshare --uts)"

new_workdir multihost
cd "$WORK"

# ---- the test network ----
netns_hosts_up a b c
# no IPv6 in the namespaces; here only: the bench keeps the setup its numbers were measured on
for ns in "${NETNS_CREATED[@]}"; do ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null || true; done
for h in a b c; do
  routes=$(ip -n "$PREFIX$h" -4 route show)
  [[ $routes == "10.77.0.0/24 dev eth0 "* && $(wc -l <<<"$routes") == 1 ]] ||
    fail "h3d-$h has routes other than 10.77.0.0/24: $routes"
done
log "test hosts h3d-a/b/c = namespaces ${NS[*]} on bridge $NETNS_BR; only route: 10.77.0.0/24"

# a machine-local Slurm allocation in the environment must not take over the launch
unset "${!SLURM_@}" 2>/dev/null || true
# on_hosts (netns_hosts.sh) runs this mpirun, each launch limited to 120 s
NETNS_MPIRUN=$MPIRUN
NETNS_TIMEOUT=120

# check_info OUTFILE NRANKS NHOSTS "NAME HOSTINDEX LOCALRANK LOCALSIZE" per rank...
check_info() {
  local out=$1 n=$2 nh=$3
  shift 3
  grep -q "^ranks: $n on $nh host(s)$" "$out" || fail "expected 'ranks: $n on $nh host(s)': $(cat "$out")"
  local r=0 name hi lr ls
  for spec in "$@"; do
    read -r name hi lr ls <<<"$spec"
    grep -qx "  rank $r: host $name (host $hi, local rank $lr of $ls), no GPU" "$out" ||
      fail "rank $r: expected host $name (host $hi, local rank $lr of $ls): $(grep "rank $r:" "$out")"
    r=$((r + 1))
  done
}

log "A: halo3d info, 6 ranks, 2 per host"
on_hosts 'h3d-a slots=2\nh3d-b slots=2\nh3d-c slots=2\n' -np 6 --map-by ppr:2:node "$BIN" info >A.out 2>A.err ||
  fail "A: mpirun failed: $(tail -n 20 A.err)"
# where mpirun really put each rank, from the ranks themselves
# shellcheck disable=SC2016
on_hosts 'h3d-a slots=2\nh3d-b slots=2\nh3d-c slots=2\n' -np 6 --map-by ppr:2:node \
  sh -c 'echo "$OMPI_COMM_WORLD_RANK $(hostname) $OMPI_COMM_WORLD_LOCAL_RANK"' | sort -n >A.placement
[[ $(cut -d' ' -f2 A.placement | tr '\n' ' ') == "h3d-a h3d-a h3d-b h3d-b h3d-c h3d-c " ]] ||
  fail "A: unexpected placement: $(cat A.placement)"
check_info A.out 6 3 "h3d-a 0 0 2" "h3d-a 0 1 2" "h3d-b 1 0 2" "h3d-b 1 1 2" "h3d-c 2 0 2" "h3d-c 2 1 2"
sed -n '/^ranks:/,$p' A.out

log "B: uneven, 1 rank on h3d-a and 3 on h3d-b"
on_hosts 'h3d-a slots=1\nh3d-b slots=3\n' -np 4 "$BIN" info >B.out 2>B.err || fail "B: mpirun failed: $(tail -n 20 B.err)"
check_info B.out 4 2 "h3d-a 0 0 1" "h3d-b 1 0 3" "h3d-b 1 1 3" "h3d-b 1 2 3"
sed -n '/^ranks:/,$p' B.out

log "C: one solve split over hosts against the same process grid on one host"
# shellcheck disable=SC2054  # 24,24,24 is one argument
S=(solve --grid 24,24,24 --rhs random --seed 9 --tol 1e-9)
on_hosts 'h3d-a slots=4\n' -np 4 "$BIN" "${S[@]}" --procs 2,2,1 --output "$WORK/one4.h5" --report "$WORK/one4.json" >D1.out 2>D1.err ||
  fail "C: one-host run failed: $(tail -n 20 D1.err)"
on_hosts 'h3d-a slots=2\nh3d-b slots=2\n' -np 4 --map-by ppr:2:node "$BIN" "${S[@]}" --procs 2,2,1 \
  --output "$WORK/two.h5" --report "$WORK/two.json" >D2.out 2>D2.err || fail "C: 2-host run failed: $(tail -n 20 D2.err)"
on_hosts 'h3d-a slots=3\n' -np 3 "$BIN" "${S[@]}" --procs 3,1,1 --output "$WORK/one3.h5" >D3.out 2>D3.err ||
  fail "C: one-host 3-rank run failed: $(tail -n 20 D3.err)"
on_hosts 'h3d-a slots=1\nh3d-b slots=1\nh3d-c slots=1\n' -np 3 --map-by ppr:1:node "$BIN" "${S[@]}" --procs 3,1,1 \
  --output "$WORK/three.h5" --report "$WORK/three.json" >D4.out 2>D4.err || fail "C: 3-host run failed: $(tail -n 20 D4.err)"
grep -q '"hosts": 1,' one4.json || fail "C: one-host report does not say 1 host"
grep -q '"hosts": 2,' two.json || fail "C: 2-host report does not say 2 hosts"
grep -q '"hosts": 3,' three.json || fail "C: 3-host report does not say 3 hosts"
h5 same one4.h5 two.h5 || fail "C: 4 ranks over 2 hosts differ from 4 ranks on one host"
h5 same one3.h5 three.h5 || fail "C: 3 ranks over 3 hosts differ from 3 ranks on one host"
h5 same one4.h5 three.h5 --close 1e-12 || fail "C: 2,2,1 and 3,1,1 process grids differ by more than rounding"
log "PASS multihost"
cleanup_workdir_on_success
