# shellcheck shell=bash
# Site settings for the halo3d job scripts: sourced by jobs/submit.sh, jobs/run-workstation.sh
# and the batch scripts in jobs/slurm/ before they read any HALO3D_* variable.
#
# Everything is commented out: the scripts run without it. Uncomment what your site needs.
# Each line keeps a value already in the environment (the ${VAR:-default} form), so a
# one-off `HALO3D_PARTITION=debug jobs/submit.sh ...` still wins. Point HALO3D_SITE_ENV at
# another file to keep several sites' settings apart.

# ---- where jobs run (read by jobs/submit.sh) -----------------------------------------------
# export HALO3D_PARTITION=${HALO3D_PARTITION:-gpu}
# export HALO3D_ACCOUNT=${HALO3D_ACCOUNT:-myproject}
# export HALO3D_QOS=${HALO3D_QOS:-normal}
# export HALO3D_GPUS_PER_NODE=${HALO3D_GPUS_PER_NODE:-4}
# export HALO3D_CPUS_PER_TASK=${HALO3D_CPUS_PER_TASK:-16}     # cores per GPU
# export HALO3D_TIME=${HALO3D_TIME:-02:00:00}

# ---- software -----------------------------------------------------------------------------
# module load openmpi/4.1 hdf5/1.14-mpi cuda/12.4 2>/dev/null || true
# export HALO3D_BIN=${HALO3D_BIN:-$HOME/halo3d/build/halo3d}

# ---- srun --------------------------------------------------------------------------------
# srun's MPI plugin: pmix is the default; some clusters only have pmi2 (see `srun --mpi=list`).
# export HALO3D_SRUN_MPI=${HALO3D_SRUN_MPI:-pmix}
# Extra srun flags, e.g. where the site's gres.conf has Cores= for each GPU:
# export HALO3D_SRUN_FLAGS=${HALO3D_SRUN_FLAGS:---cpu-bind=cores --gpu-bind=closest}
# jobs/bind.sh pins each rank to the CPUs next to its GPU (auto); set none where the site's
# own binding (task/cgroup + --gpu-bind) already does it.
# export HALO3D_BIND=${HALO3D_BIND:-auto}

# ---- InfiniBand with UCX (Open MPI 4.x/5.x) ---------------------------------------------------
# export OMPI_MCA_pml=${OMPI_MCA_pml:-ucx}               # UCX for point-to-point
# export OMPI_MCA_osc=${OMPI_MCA_osc:-ucx}
# export OMPI_MCA_btl=${OMPI_MCA_btl:-^openib,uct,smcuda} # keep the old BTLs off the HCA
# export UCX_NET_DEVICES=${UCX_NET_DEVICES:-mlx5_0:1}     # the HCA port(s) next to the GPUs
# export UCX_TLS=${UCX_TLS:-rc,sm,self,cuda_copy,cuda_ipc,gdr_copy}
# export UCX_RNDV_THRESH=${UCX_RNDV_THRESH:-8192}          # large halos: zero-copy rendezvous
# export UCX_MEMTYPE_CACHE=${UCX_MEMTYPE_CACHE:-n}         # safer with cudaMalloc'd buffers
# export UCX_WARN_UNUSED_ENV_VARS=${UCX_WARN_UNUSED_ENV_VARS:-n}
# Ethernet only (no HCA): TCP on the right interface.
# export OMPI_MCA_btl_tcp_if_include=${OMPI_MCA_btl_tcp_if_include:-eth0}
