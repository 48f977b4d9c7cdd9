#include "threads.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "errors.hpp"
#include "mpi_env.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace halo3d {
namespace {

ThreadSetup g_setup;

// This process's CPU affinity mask (all online CPUs where it cannot be read).
cpu_set_t own_cpus() {
  cpu_set_t s;
  CPU_ZERO(&s);
  if (sched_getaffinity(0, sizeof s, &s) != 0 || CPU_COUNT(&s) == 0) {
    CPU_ZERO(&s);
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < n && c < CPU_SETSIZE; ++c) CPU_SET(int(c), &s);
  }
  return s;
}

}  // namespace

const ThreadSetup& thread_setup() { return g_setup; }

const ThreadSetup& configure_threads(MPI_Comm world) {
  ThreadSetup t;
  MPI_Comm shared_raw;
  HALO3D_MPI_CHECK(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, comm_rank(world), MPI_INFO_NULL,
                                       &shared_raw));
  Comm shared(shared_raw);
  t.ranks_on_host = shared.size();

  // The CPUs of this host the ranks on it may use: the union of their affinity masks
  // (mpirun or Slurm may have bound each rank to a core or a socket).
  const cpu_set_t mine = own_cpus();
  cpu_set_t all = mine;
  HALO3D_MPI_CHECK(
      MPI_Allreduce(&mine, &all, int(sizeof(cpu_set_t)), MPI_BYTE, MPI_BOR, shared.get()));
  t.host_cpus = CPU_COUNT(&all);
  const int own = CPU_COUNT(&mine);

  const char* env = std::getenv("OMP_NUM_THREADS");
  t.from_env = env && *env;
#ifdef _OPENMP
  if (t.from_env) {
    t.threads = omp_get_max_threads();
  } else {
    // Each rank its share of the host, never more than it is allowed to run on.
    t.threads = std::max(1, std::min(own, t.host_cpus / t.ranks_on_host));
    omp_set_num_threads(t.threads);
  }
#else
  (void)own;
  t.threads = 1;
#endif

  // Threads of all ranks on this host against its CPUs; rank 0 reports the worst host.
  int host_threads = 0;
  HALO3D_MPI_CHECK(MPI_Allreduce(&t.threads, &host_threads, 1, MPI_INT, MPI_SUM, shared.get()));
  int mine_info[5] = {host_threads - t.host_cpus, host_threads, t.host_cpus, t.ranks_on_host,
                      t.threads};
  struct {
    int excess, rank;
  } in{mine_info[0], comm_rank(world)}, worst{};
  HALO3D_MPI_CHECK(MPI_Allreduce(&in, &worst, 1, MPI_2INT, MPI_MAXLOC, world));
  t.oversubscribed = worst.excess > 0;
  if (t.oversubscribed) {
    int info[5];
    for (int i = 0; i < 5; ++i) info[i] = mine_info[i];
    HALO3D_MPI_CHECK(MPI_Bcast(info, 5, MPI_INT, worst.rank, world));
    const int threads_sum = info[1], cpus = info[2], ranks = info[3], threads = info[4];
    const int fair = std::max(1, cpus / ranks);
    std::string fix;
    if (ranks > cpus)
      fix = "run at most " + std::to_string(cpus) + " rank(s) per host (e.g. mpirun -np " +
            std::to_string(cpus) + ")" + (t.from_env ? " with OMP_NUM_THREADS=1" : "");
    else
      fix = "set OMP_NUM_THREADS=" + std::to_string(fair) +
            " (or unset it: halo3d then gives each rank CPUs / ranks on its host)";
    const std::string per = threads_sum == ranks * threads
                                ? " x " + std::to_string(threads) + " OpenMP thread(s) = "
                                : " with ";
    t.warning = "warning: oversubscribed: " + std::to_string(ranks) + " rank(s)" + per +
                std::to_string(threads_sum) + " threads on a host with " + std::to_string(cpus) +
                " CPU(s) (OMP_NUM_THREADS " +
                (t.from_env ? std::string(env) : std::string("unset")) +
                "); expect a large slowdown. Fix: " + fix + "\n";
  }
  g_setup = t;
  return g_setup;
}

}  // namespace halo3d
