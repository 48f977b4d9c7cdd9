// RAII owners for MPI: the environment, communicators and requests.
#pragma once
#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

#include "errors.hpp"

namespace halo3d {

// MPI_Init_thread / MPI_Finalize. Errors come back as codes (MPI_ERRORS_RETURN) so the
// check macro can turn them into messages.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

// Owns a communicator created by MPI (never MPI_COMM_WORLD itself).
class Comm {
 public:
  Comm() = default;
  explicit Comm(MPI_Comm c) : c_(c) {}
  Comm(Comm&& o) noexcept : c_(std::exchange(o.c_, MPI_COMM_NULL)) {}
  Comm& operator=(Comm&& o) noexcept {
    std::swap(c_, o.c_);
    return *this;
  }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  ~Comm() {
    if (c_ != MPI_COMM_NULL) MPI_Comm_free(&c_);
  }
  MPI_Comm get() const { return c_; }
  int rank() const;
  int size() const;

 private:
  MPI_Comm c_ = MPI_COMM_NULL;
};

int comm_rank(MPI_Comm c);
int comm_size(MPI_Comm c);

// Which ranks share a host: the node-local rank and size (MPI_Comm_split_type shared),
// the host names of all ranks, and a dense host index per rank.
struct HostMap {
  int local_rank = 0, local_size = 1;
  int host_index = 0;                  // of this rank
  std::vector<std::string> rank_host;  // host name of every rank
  std::vector<int> rank_host_index;    // host index of every rank
  std::vector<std::string> hosts;      // distinct host names, by first rank
  static HostMap build(MPI_Comm comm);
};

}  // namespace halo3d
