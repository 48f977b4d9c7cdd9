#include "reduction.hpp"

#include <csignal>

#include "errors.hpp"
#include "mpi_env.hpp"
#include "nvtx.hpp"
#include "point_ops.hpp"

namespace halo3d {

GlobalSums::GlobalSums(MPI_Comm comm) : comm_(comm), ranks_(comm_size(comm)) {}

void GlobalSums::start(const DD* local, int n) {
  HALO3D_NVTX_RANGE("global sums start (double-double MPI_Iallgather)");
  n_ = n;
  mine_.resize(2 * std::size_t(n));
  all_.resize(2 * std::size_t(n) * ranks_);
  for (int i = 0; i < n; ++i) mine_[2 * i] = local[i].hi, mine_[2 * i + 1] = local[i].lo;
  HALO3D_MPI_CHECK(MPI_Iallgather(mine_.data(), 2 * n, MPI_DOUBLE, all_.data(), 2 * n, MPI_DOUBLE,
                                  comm_, req_.for_collective()));
}

void GlobalSums::finish(double* out) {
  HALO3D_NVTX_RANGE("global sums finish");
  req_.wait();
  for (int i = 0; i < n_; ++i) {
    DD s{};
    for (int r = 0; r < ranks_; ++r) {
      const double* p = &all_[(std::size_t(r) * n_ + i) * 2];
      s = ops::dd_add(s, DD{p[0], p[1]});
    }
    out[i] = s.hi + s.lo;
  }
}

void global_sums(MPI_Comm comm, const DD* local, int n, double* out) {
  GlobalSums sums(comm);
  sums.start(local, n);
  sums.finish(out);
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
