#!/bin/bash
# jobs/run-workstation.sh and jobs/bind.sh on this GPU-less machine:
#   cpu     no GPU (nvidia-smi failing as without a driver, or HALO3D_NGPUS=0): one rank per core,
#           a real solve whose report shows the rank count; -n 3 on 2 cores oversubscribes unbound
#   gpus    a stand-in nvidia-smi with 2 GPUs and a stand-in sysfs (GPU 0 next to CPU 0, GPU 1 next
#           to CPU 1): 2 ranks, one per GPU, each pinned by bind.sh to its GPU's CPU; also with
#           CUDA_VISIBLE_DEVICES by index and by UUID; and real halo3d runs through that path
# shellcheck source=tests/production/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# Run the binary under test, not whichever build folder the launcher would find first.
export HALO3D_BIN=$BIN
new_workdir workstation
cd "$WORK"
export HALO3D_MPIRUN_FLAGS="--oversubscribe"
unset HALO3D_NGPUS HALO3D_NP CUDA_VISIBLE_DEVICES

# fake nvidia-smi: FAKE_GPUS=0 behaves like a machine without a driver
mkdir -p fakebin
cat >fakebin/nvidia-smi <<'EOF'
#!/bin/bash
[[ ${FAKE_GPUS:-0} == 0 ]] && { echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver." >&2; exit 9; }
case "$*" in
  -L) echo "GPU 0: Fake H200 (UUID: GPU-aaaa-0000)"; echo "GPU 1: Fake H200 (UUID: GPU-bbbb-1111)" ;;
  *--query-gpu=index,uuid,pci.bus_id*) echo "0, GPU-aaaa-0000, 00000000:3B:00.0"; echo "1, GPU-bbbb-1111, 00000000:86:00.0" ;;
  *) echo "fake nvidia-smi: unsupported: $*" >&2; exit 2 ;;
esac
EOF
chmod +x fakebin/nvidia-smi
export PATH=$WORK/fakebin:$PATH
mkdir -p sys/bus/pci/devices/0000:3b:00.0 sys/bus/pci/devices/0000:86:00.0
echo 0 >sys/bus/pci/devices/0000:3b:00.0/local_cpulist
echo 0 >sys/bus/pci/devices/0000:3b:00.0/numa_node
echo 1 >sys/bus/pci/devices/0000:86:00.0/local_cpulist
echo 1 >sys/bus/pci/devices/0000:86:00.0/numa_node

log "cpu: no driver -> CPU fallback, real solve"
FAKE_GPUS=0 "$JOBS/run-workstation.sh" solve --grid 24,24,24 --rhs random --output ws.h5 --report ws.json >cpu.out 2>&1 ||
  fail "CPU fallback run failed: $(tail cpu.out)"
grep -q 'on CPU cores (no GPU found)' cpu.out || fail "no CPU-fallback line: $(cat cpu.out)"
np=$(sed -n 's/.*run-workstation: \([0-9]*\) rank(s).*/\1/p' cpu.out)
grep -q "\"ranks\": $np," ws.json || fail "report does not show $np ranks"
log "  $np rank(s), one per core; report agrees"
HALO3D_NGPUS=0 FAKE_GPUS=1 "$JOBS/run-workstation.sh" -n 3 solve --grid 24,24,24 --output none --report ws3.json >cpu3.out 2>&1 ||
  fail "-n 3 run failed: $(tail cpu3.out)"
grep -q 'not binding, oversubscribing' cpu3.out || [[ $(getconf _NPROCESSORS_ONLN) -ge 3 ]] || fail "no oversubscription warning with 3 ranks on $(getconf _NPROCESSORS_ONLN) cores"
grep -q '"ranks": 3,' ws3.json || fail "-n 3 did not give 3 ranks"
[[ $("$JOBS/run-workstation.sh" --dry-run -n 2 info) == *"-np 2 "* ]] || fail "--dry-run does not show -np 2"

log "gpus: 2 stand-in GPUs"
cat >probe.sh <<'EOF'
#!/bin/bash
echo "local=$OMPI_COMM_WORLD_LOCAL_RANK cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status) order=$CUDA_DEVICE_ORDER omp=$OMP_NUM_THREADS"
EOF
chmod +x probe.sh
export FAKE_GPUS=1 HALO3D_SYSFS=$WORK/sys HALO3D_BIND_VERBOSE=1
probe() { HALO3D_BIN=$WORK/probe.sh "$JOBS/run-workstation.sh" "$@" probe-args >probe.out 2>&1 || fail "probe run failed: $(cat probe.out)"; }
probe
grep -q 'run-workstation: 2 rank(s), one per GPU (2 GPU(s) found)' probe.out || fail "not one rank per GPU: $(cat probe.out)"
if (($(getconf _NPROCESSORS_ONLN) >= 2)); then
  grep -q '^local=0 cpus=0 order=PCI_BUS_ID' probe.out || fail "rank 0 not pinned to GPU 0's CPU 0: $(cat probe.out)"
  grep -q '^local=1 cpus=1 order=PCI_BUS_ID' probe.out || fail "rank 1 not pinned to GPU 1's CPU 1: $(cat probe.out)"
  grep -q 'GPU 1 (0000:86:00.0, NUMA 1) -> CPUs 1' probe.out || fail "bind.sh did not say what it did: $(cat probe.out)"
  log "  rank 0 -> GPU 0 -> CPU 0, rank 1 -> GPU 1 -> CPU 1"
  CUDA_VISIBLE_DEVICES=1 probe
  [[ $(grep -c '^local=[01] cpus=1 ' probe.out) == 2 ]] || fail "CUDA_VISIBLE_DEVICES=1: both ranks should sit next to GPU 1: $(cat probe.out)"
  CUDA_VISIBLE_DEVICES=GPU-bbbb-1111,GPU-aaaa-0000 probe
  grep -q '^local=0 cpus=1 ' probe.out && grep -q '^local=1 cpus=0 ' probe.out ||
    fail "CUDA_VISIBLE_DEVICES by UUID (reversed) not followed: $(cat probe.out)"
  log "  CUDA_VISIBLE_DEVICES by index and by UUID followed"
else
  log "  only $(getconf _NPROCESSORS_ONLN) CPU here: the per-GPU CPU sets cannot differ; binding checks skipped"
fi
HALO3D_BIND=none probe
grep -q 'HALO3D_BIND=none, not binding' probe.out || fail "HALO3D_BIND=none not honoured"
log "gpus: real halo3d through the GPU path (it has no CUDA here, so host backend)"
"$JOBS/run-workstation.sh" info >info.out 2>&1 || fail "info through the GPU path failed: $(tail info.out)"
grep -q '^ranks: 2 on 1 host(s)$' info.out || fail "info: $(cat info.out)"
log "PASS workstation"
cleanup_workdir_on_success
