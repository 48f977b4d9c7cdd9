// RAII owners for MPI: the environment, communicators and requests.
#pragma once
#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

#include "errors.hpp"

namespace halo3d {

// The thread support halo3d asks MPI for. Only the main thread calls MPI, but the host
// backend's OpenMP threads (and the CUDA and NCCL runtimes' own threads) exist beside it,
// which MPI_THREAD_SINGLE does not allow.
inline constexpr int kMpiThreadLevel = MPI_THREAD_FUNNELED;
// Throws Error(kExitUnavailable) when `provided` (MPI_Init_thread's) is below kMpiThreadLevel.
void check_mpi_thread_level(int provided);
// Throws Error(kExitUnavailable) on every rank when any rank's CPU lacks the x86-64 level the
// host kernels were compiled for (HALO3D_HOST_ARCH; they would die of SIGILL): before any
// host kernel runs. One MPI_Allreduce.
void check_host_isa(MPI_Comm comm);

// MPI_Init_thread / MPI_Finalize. Errors come back as codes (MPI_ERRORS_RETURN) so the
// check macro can turn them into messages. The thread level MPI provided is kept for
// check_mpi_thread_level, called where errors are reported (main's try block).
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int provided() const { return provided_; }

 private:
  int provided_ = 0;
};

// One nonblocking MPI operation's request (move-only). Normally it is completed by wait(),
// test() or wait_all(); one still pending when its owner goes (only when unwinding from an
// error) is released by the destructor without blocking where MPI allows it: a receive is
// cancelled and freed, so it cannot land in a freed buffer later; a send is freed (it
// completes on its own; MPI 4 deprecates cancelling sends); a nonblocking collective may be
// neither, so it is waited for.
class Request {
 public:
  Request() = default;
  Request(Request&& o) noexcept : r_(std::exchange(o.r_, MPI_REQUEST_NULL)), kind_(o.kind_) {}
  Request& operator=(Request&& o) noexcept {
    if (this != &o) {
      release();
      r_ = std::exchange(o.r_, MPI_REQUEST_NULL);
      kind_ = o.kind_;
    }
    return *this;
  }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request() { release(); }

  // The handle an MPI_Irecv / MPI_Isend / MPI_I<collective> call fills (any request this
  // one still held is released first).
  MPI_Request* for_recv() { return start(Kind::recv); }
  MPI_Request* for_send() { return start(Kind::send); }
  MPI_Request* for_collective() { return start(Kind::collective); }

  bool pending() const { return r_ != MPI_REQUEST_NULL; }
  void wait();  // returns at once when not pending
  bool test();  // true when complete (or not pending)

  // MPI_Waitall over `rs` (nothing to do when empty).
  friend void wait_all(std::vector<Request>& rs);

 private:
  enum class Kind { recv, send, collective };
  MPI_Request* start(Kind kind) {
    release();
    kind_ = kind;
    return &r_;
  }
  void release() noexcept;  // the one cancel-and-free, see the class comment

  MPI_Request r_ = MPI_REQUEST_NULL;
  Kind kind_ = Kind::recv;
};
void wait_all(std::vector<Request>& rs);
// A fixed set of persistent point-to-point requests, all receives or all sends: each made
// once by MPI_Recv_init / MPI_Send_init into the handle add() returns, then started
// together (MPI_Startall) and completed together (wait_all, MPI_Waitall) as often as
// wanted, which saves MPI the matching setup of a fresh MPI_Irecv/MPI_Isend per message.
// The buffers the requests were made with must stay where they are while the set lives.
// Move-only; the destructor frees every request (MPI_Request_free). A set still active
// when it goes (only when unwinding from an error) is released as Request releases a
// pending one: receives cancelled first, so they cannot land in a freed buffer later.
class PersistentRequests {
 public:
  enum class Kind { recv, send };
  explicit PersistentRequests(Kind kind = Kind::recv) : kind_(kind) {}
  PersistentRequests(PersistentRequests&& o) noexcept
      : r_(std::exchange(o.r_, {})), kind_(o.kind_), active_(std::exchange(o.active_, false)) {}
  PersistentRequests& operator=(PersistentRequests&& o) noexcept {
    if (this != &o) {
      release();
      r_ = std::exchange(o.r_, {});
      kind_ = o.kind_;
      active_ = std::exchange(o.active_, false);
    }
    return *this;
  }
  PersistentRequests(const PersistentRequests&) = delete;
  PersistentRequests& operator=(const PersistentRequests&) = delete;
  ~PersistentRequests() { release(); }

  // The handle for one MPI_Recv_init / MPI_Send_init call (of this set's kind).
  MPI_Request* add() {
    r_.push_back(MPI_REQUEST_NULL);
    return &r_.back();
  }
  std::size_t size() const { return r_.size(); }
  bool active() const { return active_; }
  void start_all();  // MPI_Startall; throws std::logic_error when already active
  void wait_all();   // MPI_Waitall; the requests stay, inactive, for the next start_all

 private:
  void release() noexcept;

  std::vector<MPI_Request> r_;
  Kind kind_;
  bool active_ = false;
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
