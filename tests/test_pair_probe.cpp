// one_face_plan (src/comm/pair_probe.hpp), which `halo3d probe` times the transports on:
// the face has exactly the size asked for (down to one value), its points and ghosts lie
// in the padded box and do not overlap; and one exchange through every transport available
// here, between every pair of ranks on a communicator of the two, puts into each rank's
// ghost layer exactly the other's boundary values (random doubles, bitwise), in double and
// float. Run under mpirun with 2-3 ranks; HALO3D_TEST_BACKEND=host|cuda.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "errors.hpp"
#include "pair_probe.hpp"
#include "point_ops.hpp"
#include "runtime.hpp"
#include "transports/transports.hpp"

namespace halo3d {
namespace {

const std::vector<std::size_t> kPoints = {1, 2, 3, 4, 5, 7, 9, 12, 97, 128, 1000, 8192, 65537};

TEST(OneFacePlan, FaceHasTheSizeAskedForInsideThePaddedBox) {
  for (std::size_t n : kPoints)
    for (bool low : {true, false}) {
      const HaloPlan p = one_face_plan(n, 5, low);
      ASSERT_EQ(p.faces.size(), 1u);
      const HaloFace& f = p.faces[0];
      EXPECT_EQ(f.points, n);
      EXPECT_EQ(f.neighbor, 5);
      EXPECT_EQ(f.face.axis, 2);
      EXPECT_EQ(f.face.side, low ? 1 : 0);
      EXPECT_EQ(p.bytes_per_exchange(), n * sizeof(double));
      // A plane and its two ghost planes, rows padded: not much more than 3 n.
      EXPECT_LE(p.layout.padded_size(), 4 * n + 64) << n;
      int na = 0, nb = 0;
      ops::face_dims(p.layout, f.face, na, nb);
      std::set<std::ptrdiff_t> sent, ghost;
      for (int b = 0; b < nb; ++b)
        for (int a = 0; a < na; ++a) {
          sent.insert(ops::face_point(p.layout, f.face, a, b, false));
          ghost.insert(ops::face_point(p.layout, f.face, a, b, true));
        }
      ASSERT_EQ(sent.size(), n);
      ASSERT_EQ(ghost.size(), n);
      for (const auto* s : {&sent, &ghost}) {
        EXPECT_GE(*s->begin(), 0);
        EXPECT_LT(std::size_t(*s->rbegin()), p.layout.padded_size());
      }
      for (std::ptrdiff_t i : sent) EXPECT_EQ(ghost.count(i), 0u) << n;
    }
}

// A random double of (rank, index), never zero (splitmix64).
double value(int rank, std::size_t i) {
  std::uint64_t z = (std::uint64_t(rank) << 40) + i + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return 1.0 + double(z >> 11) * 0x1.0p-53;
}

Backend backend_under_test() {
  const char* b = std::getenv("HALO3D_TEST_BACKEND");
  return b && std::string(b) == "cuda" ? Backend::cuda : Backend::host;
}

// One exchange of transport t on a one-face plan of n points between this rank (world rank
// `me`) and world rank `other`, in scalar type T; false when t is not available here.
template <class T>
bool exchange_once(Transport t, Kernels& k, MPI_Comm pair, const HostMap& hosts, int me, int other,
                   std::size_t n) {
  const bool low = me < other;
  const HaloPlan plan = one_face_plan(n, low ? 1 : 0, low);
  const Layout& l = plan.layout;
  std::unique_ptr<HaloTransport> tr;
  try {
    tr = make_named_transport(t, TransportContext{k, plan, pair, hosts, PeerPolicy{}});
  } catch (const Error& e) {
    if (e.code() != kExitUnavailable) throw;
    return false;
  }
  std::vector<T> host(l.padded_size());
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = T(value(me, i));
  BasicBuffer<T> u(k, host.size());
  k.copy(u.data(), host.data(), host.size(), Lane::interior);
  k.synchronize();
  tr->start(u.data());
  tr->finish(u.data());
  k.synchronize();
  k.copy(host.data(), u.data(), host.size(), Lane::interior);
  k.synchronize();
  const Face mine = plan.faces[0].face, theirs{2, 1 - mine.side};
  int na = 0, nb = 0;
  ops::face_dims(l, mine, na, nb);
  std::size_t wrong = 0;
  for (int b = 0; b < nb; ++b)
    for (int a = 0; a < na; ++a) {
      const T want = T(value(other, std::size_t(ops::face_point(l, theirs, a, b, false))));
      const T got = host[std::size_t(ops::face_point(l, mine, a, b, true))];
      wrong += std::memcmp(&want, &got, sizeof(T)) != 0;
    }
  EXPECT_EQ(wrong, 0u) << to_string(t) << ", " << n << " points, ranks " << me << "-" << other;
  return true;
}

TEST(OneFacePlan, EveryTransportDeliversTheOtherRanksFaceBetweenEveryPair) {
  const int rank = [] {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
  }();
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const HostMap world_hosts = HostMap::build(MPI_COMM_WORLD);
  int gpu = -1;
  std::string warnings;
  auto k = make_kernels(backend_under_test(), world_hosts, MPI_COMM_WORLD, gpu, warnings);
  std::set<std::string> measured;
  for (int i = 0; i < size; ++i)
    for (int j = i + 1; j < size; ++j) {
      MPI_Comm c = MPI_COMM_NULL;
      const bool in = rank == i || rank == j;
      MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, rank, &c);
      if (!in) continue;
      const Comm pair(c);
      const HostMap hosts = HostMap::build(pair.get());
      const int other = rank == i ? j : i;
      for (Transport t : concrete_transports())
        for (std::size_t n : kPoints)
          if (exchange_once<double>(t, *k, pair.get(), hosts, rank, other, n) &&
              exchange_once<float>(t, *k, pair.get(), hosts, rank, other, n))
            measured.insert(to_string(t));
    }
  if (size > 1) EXPECT_EQ(measured.count("mpi"), 1u);
  if (rank == 0) {
    std::string list;
    for (const auto& m : measured) list += " " + m;
    std::printf("transports exchanged:%s\n", list.c_str());
  }
}

}  // namespace
}  // namespace halo3d
