# shellcheck shell=bash
# Test hosts made of Linux network namespaces (sourced), for tests/production/test_multihost.sh
# and bench/host/multihost_netns.sh: a bridge in a namespace of its own, and per host X a
# namespace ${PREFIX}X with a veth pair into the bridge at 10.77.0.N/24 (N = 1, 2, ... in
# the order given); no namespace has a route anywhere else. mpirun runs inside host a and
# starts orted on the others through netns-agent.sh (its plm_rsh_agent), which maps host
# name h3d-X to namespace ${H3D_NETNS_PREFIX}X. Needs root, ip and unshare. Use:
#   netns_bridge_up PREFIX     the bridge namespace; everything made is removed on exit
#   netns_hosts_up HOST...     the hosts (a b c ...), after netns_bridge_up
#   on_hosts HOSTFILE_LINES MPIRUN_ARGS...
# with NETNS_TIMEOUT (seconds an on_hosts call may take) set by the caller, and optionally
# NETNS_MPIRUN (the mpirun to run) and NETNS_MPIRUN_ARGS (options after the MCA list): the
# test and the bench differ there. netns_bridge_up returns non-zero, with ip's message on
# stderr, where namespaces cannot be made: the test skips, the bench fails. The other
# functions expect errexit (set -e) to stop the caller on a failure.

NETNS_PREFIX=
NETNS_BR=
NETNS_CREATED=()
NETNS_MPIRUN=mpirun
NETNS_MPIRUN_ARGS=()
# The agent by absolute path: mpirun runs it from the caller's working folder.
NETNS_AGENT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/netns-agent.sh
# Open MPI between the test hosts only: started through the agent, TCP on 10.77.0.0/24.
# shellcheck disable=SC2054  # self,vader,tcp is one argument: the btl list
NETNS_MCA=(--mca plm rsh --mca plm_rsh_agent "$NETNS_AGENT" --mca btl self,vader,tcp
           --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24)

# netns_teardown: the EXIT trap; kills what runs in the namespaces made, then deletes them.
netns_teardown() {
  local ns pid
  for ns in "${NETNS_CREATED[@]}"; do
    # anything still running inside our namespaces was started by this script
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
  done
  for ns in "${NETNS_CREATED[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
}

# netns_bridge_up PREFIX: the namespace ${PREFIX}br (NETNS_BR); registers netns_teardown on
# EXIT. Written to work without errexit too (a caller's `if !` or `||` turns it off).
netns_bridge_up() {
  NETNS_PREFIX=$1
  NETNS_BR=${1}br
  export H3D_NETNS_PREFIX=$1 # for netns-agent.sh
  trap netns_teardown EXIT
  ip netns add "$NETNS_BR" || return
  NETNS_CREATED+=("$NETNS_BR")
}

# netns_hosts_up HOST...: the bridge inside NETNS_BR and one host namespace per HOST.
netns_hosts_up() {
  local i=1 h ns
  ip -n "$NETNS_BR" link add br0 type bridge
  ip -n "$NETNS_BR" link set br0 up
  ip -n "$NETNS_BR" link set lo up
  for h in "$@"; do
    ns=$NETNS_PREFIX$h
    ip netns add "$ns"
    NETNS_CREATED+=("$ns")
    # both ends are created inside namespaces: nothing appears in the machine's own namespace
    ip link add eth0 netns "$ns" type veth peer name "p$h" netns "$NETNS_BR"
    ip -n "$NETNS_BR" link set "p$h" master br0 up
    ip -n "$ns" addr add "10.77.0.$i/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    i=$((i + 1))
  done
}

# on_hosts HOSTFILE_LINES MPIRUN_ARGS...: mpirun inside host a, under the host name h3d-a
# (its own UTS namespace, as netns-agent.sh gives the others), with HOSTFILE_LINES (printf %b)
# written to ./hosts as its hostfile.
on_hosts() {
  local lines=$1
  shift
  printf '%b' "$lines" >hosts
  # shellcheck disable=SC2016  # "$@" belongs to the inner shell
  timeout "${NETNS_TIMEOUT:?}" ip netns exec "${NETNS_PREFIX}a" unshare --uts /bin/sh -c 'hostname h3d-a; exec "$@"' sh \
    "$NETNS_MPIRUN" --hostfile hosts "${NETNS_MCA[@]}" "${NETNS_MPIRUN_ARGS[@]}" "$@"
}
