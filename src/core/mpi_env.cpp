#include "mpi_env.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "build_info.hpp"

namespace halo3d {

namespace {
const char* thread_level_name(int level) {
  if (level == MPI_THREAD_SINGLE) return "MPI_THREAD_SINGLE";
  if (level == MPI_THREAD_FUNNELED) return "MPI_THREAD_FUNNELED";
  if (level == MPI_THREAD_SERIALIZED) return "MPI_THREAD_SERIALIZED";
  if (level == MPI_THREAD_MULTIPLE) return "MPI_THREAD_MULTIPLE";
  return "an unknown thread level";
}
}  // namespace

void check_mpi_thread_level(int provided) {
  // The levels are ordered: SINGLE < FUNNELED < SERIALIZED < MULTIPLE.
  if (provided < kMpiThreadLevel)
    throw Error(kExitUnavailable, std::string("this MPI library provides ") +
                                      thread_level_name(provided) + ", halo3d needs " +
                                      thread_level_name(kMpiThreadLevel) +
                                      " (OpenMP threads run beside the thread that calls MPI)");
}

void check_host_isa(MPI_Comm comm) {
  int lacking = host_isa_supported() ? 0 : 1;
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &lacking, 1, MPI_INT, MPI_SUM, comm));
  if (lacking > 0)
    throw Error(kExitUnavailable, "this binary's host kernels were built for " + host_march() +
                                      " (cmake's HALO3D_HOST_ARCH), which the CPU of " +
                                      std::to_string(lacking) +
                                      " rank(s) lacks: rebuild halo3d on such a machine, or "
                                      "with -DHALO3D_HOST_ARCH= (empty) for any x86-64 CPU");
}

namespace {
// Open MPI's own MPI-IO (ompio) writes wrong data now and then with its default collective
// algorithm, fcoll/vulcan, in releases before the fix of open-mpi/ompi#12718 (2024): on
// Debian 12's 4.1.4, 3 ranks writing a 5x7x3 /u as z-planes gave a shuffled file in about 2
// runs of 5 (Hdf5.WriteOnAnyProcessGridEqualsTheOneRankFile). ROMIO, Open MPI's other io
// component, never did, and wrote /u as fast or faster here (docs/PERFORMANCE.md), so halo3d
// excludes ompio, through the environment MPI_Init reads, unless the user chose an io or
// fcoll component themselves.
void avoid_broken_mpi_io_defaults() {
#if defined(OPEN_MPI)
  if (!std::getenv("OMPI_MCA_fcoll") && !std::getenv("OMPI_MCA_io"))
    ::setenv("OMPI_MCA_io", "^ompio", 0);
#endif
}
}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  avoid_broken_mpi_io_defaults();
  MPI_Init_thread(argc, argv, kMpiThreadLevel, &provided_);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

void Request::release() noexcept {
  if (r_ == MPI_REQUEST_NULL) return;
  if (kind_ == Kind::collective) {
    MPI_Wait(&r_, MPI_STATUS_IGNORE);
    return;
  }
  if (kind_ == Kind::recv) MPI_Cancel(&r_);
  MPI_Request_free(&r_);
}

void Request::wait() {
  if (r_ != MPI_REQUEST_NULL) HALO3D_MPI_CHECK(MPI_Wait(&r_, MPI_STATUS_IGNORE));
}

bool Request::test() {
  int done = 1;
  if (r_ != MPI_REQUEST_NULL) HALO3D_MPI_CHECK(MPI_Test(&r_, &done, MPI_STATUS_IGNORE));
  return done != 0;
}

void wait_all(std::vector<Request>& rs) {
  if (rs.empty()) return;
  // MPI_Waitall needs the handles side by side; completed ones come back as
  // MPI_REQUEST_NULL and are stored back before any error is raised, so the Requests
  // still own exactly the pending ones.
  std::vector<MPI_Request> raw;
  raw.reserve(rs.size());
  for (const Request& r : rs) raw.push_back(r.r_);
  const int rc = MPI_Waitall(int(raw.size()), raw.data(), MPI_STATUSES_IGNORE);
  for (std::size_t i = 0; i < rs.size(); ++i) rs[i].r_ = raw[i];
  HALO3D_MPI_CHECK(rc);
}

void PersistentRequests::start_all() {
  // Starting an active persistent request is erroneous in MPI (and would reuse buffers a
  // message is still in): one use at a time.
  if (active_) throw std::logic_error("PersistentRequests::start_all: the set is still active");
  if (r_.empty()) return;
  HALO3D_MPI_CHECK(MPI_Startall(int(r_.size()), r_.data()));
  active_ = true;
}

void PersistentRequests::wait_all() {
  if (!active_) return;
  HALO3D_MPI_CHECK(MPI_Waitall(int(r_.size()), r_.data(), MPI_STATUSES_IGNORE));
  active_ = false;
}

void PersistentRequests::release() noexcept {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;  // MPI has let go of everything already
  for (MPI_Request& r : r_) {
    if (r == MPI_REQUEST_NULL) continue;
    if (active_ && kind_ == Kind::recv) MPI_Cancel(&r);
    MPI_Request_free(&r);
  }
  r_.clear();
  active_ = false;
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

int comm_rank(MPI_Comm c) {
  int r = 0;
  HALO3D_MPI_CHECK(MPI_Comm_rank(c, &r));
  return r;
}
int comm_size(MPI_Comm c) {
  int s = 0;
  HALO3D_MPI_CHECK(MPI_Comm_size(c, &s));
  return s;
}
int Comm::rank() const { return comm_rank(c_); }
int Comm::size() const { return comm_size(c_); }

HostMap HostMap::build(MPI_Comm comm) {
  HostMap m;
  MPI_Comm shared;
  HALO3D_MPI_CHECK(
      MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, comm_rank(comm), MPI_INFO_NULL, &shared));
  Comm owner(shared);
  m.local_rank = owner.rank();
  m.local_size = owner.size();

  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  HALO3D_MPI_CHECK(MPI_Get_processor_name(name, &len));
  const int size = comm_size(comm);
  std::vector<char> all(std::size_t(size) * MPI_MAX_PROCESSOR_NAME);
  HALO3D_MPI_CHECK(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(),
                                 MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm));
  // Group by the shared-memory communicator, not by name: two containers can share a
  // host name, and one host can have several names. The lowest world rank of each
  // shared group identifies the host.
  int leader = comm_rank(comm);
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, shared));
  std::vector<int> leaders(size);
  HALO3D_MPI_CHECK(MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, comm));
  std::vector<int> distinct;
  for (int r = 0; r < size; ++r) {
    m.rank_host.emplace_back(&all[std::size_t(r) * MPI_MAX_PROCESSOR_NAME]);
    auto it = std::find(distinct.begin(), distinct.end(), leaders[r]);
    if (it == distinct.end()) {
      distinct.push_back(leaders[r]);
      m.hosts.push_back(m.rank_host.back());
      it = distinct.end() - 1;
    }
    m.rank_host_index.push_back(int(it - distinct.begin()));
  }
  m.host_index = m.rank_host_index[comm_rank(comm)];
  return m;
}

}  // namespace halo3d
