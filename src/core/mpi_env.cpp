#include "mpi_env.hpp"

#include <algorithm>
#include <cstring>

namespace halo3d {

MpiSession::MpiSession(int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
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
