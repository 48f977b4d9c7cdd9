#include "reduction.hpp"

#include <csignal>

#include "errors.hpp"
#include "mpi_env.hpp"
#include "nvtx.hpp"
#include "point_ops.hpp"

namespace halo3d {

void global_sums(MPI_Comm comm, const DD* local, int n, double* out) {
  HALO3D_NVTX_RANGE("global_sums (double-double MPI_Allgather)");
  const int ranks = comm_size(comm);
  std::vector<double> mine(2 * std::size_t(n)), all(2 * std::size_t(n) * ranks);
  for (int i = 0; i < n; ++i) mine[2 * i] = local[i].hi, mine[2 * i + 1] = local[i].lo;
  HALO3D_MPI_CHECK(
      MPI_Allgather(mine.data(), 2 * n, MPI_DOUBLE, all.data(), 2 * n, MPI_DOUBLE, comm));
  for (int i = 0; i < n; ++i) {
    DD s{};
    for (int r = 0; r < ranks; ++r) {
      const double* p = &all[(std::size_t(r) * n + i) * 2];
      s = ops::dd_add(s, DD{p[0], p[1]});
    }
    out[i] = s.hi + s.lo;
  }
}

DD dd_global_sum(MPI_Comm comm, DD local) {
  const int ranks = comm_size(comm);
  double mine[2] = {local.hi, local.lo};
  std::vector<double> all(2 * std::size_t(ranks));
  HALO3D_MPI_CHECK(MPI_Allgather(mine, 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, comm));
  DD s{};
  for (int r = 0; r < ranks; ++r) s = ops::dd_add(s, DD{all[2 * r], all[2 * r + 1]});
  return s;
}

namespace {
volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_stop_signal(int sig) { g_signal = sig; }
}  // namespace

void install_stop_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGUSR1, &sa, nullptr);
}
bool stop_signal_received() { return g_signal != 0; }
int stop_signal_number() { return g_signal; }

void StopVote::begin() {
  local_ = stop_signal_number();  // 0, or the signal: all ranks learn which one it was
  HALO3D_MPI_CHECK(
      MPI_Iallreduce(&local_, &global_, 1, MPI_INT, MPI_MAX, comm_, req_.for_collective()));
}
bool StopVote::end() {
  req_.wait();
  return global_ != 0;
}

}  // namespace halo3d
