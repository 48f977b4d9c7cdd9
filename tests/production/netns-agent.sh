#!/bin/bash
# rsh/ssh stand-in for mpirun (--mca plm_rsh_agent) in the multi-host test: "logs in" to a
# test host by entering its network namespace. mpirun calls it as
#   netns-agent.sh HOST COMMAND...        (COMMAND is a shell command line, as for ssh)
# HOST h3d-X maps to the namespace ${H3D_NETNS_PREFIX}X; no /etc/hosts entry or DNS is
# needed, and no name ever resolves outside the test. The command also gets its own UTS
# namespace named HOST, so gethostname() (MPI_Get_processor_name) tells the test hosts
# apart the way real hosts would be (Open MPI needs distinct names: it keys shared-memory
# segments and TCP peers by host name).
set -euo pipefail
host=$1
shift
[[ $host == h3d-? ]] || { echo "netns-agent: unknown test host '$host'" >&2; exit 255; }
ns=${H3D_NETNS_PREFIX:?}${host#h3d-}
# shellcheck disable=SC2016  # $1/$* belong to the inner shell
exec ip netns exec "$ns" unshare --uts /bin/sh -c 'hostname "$1"; shift; exec /bin/sh -c "$*"' sh "$host" "$@"
