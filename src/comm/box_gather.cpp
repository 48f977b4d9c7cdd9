#include "box_gather.hpp"

#include <type_traits>

#include "errors.hpp"
#include "halo.hpp"
#include "nvtx.hpp"
#include "transports/transports.hpp"

namespace halo3d {

Layout box_layout(const std::vector<int>& boxes, int r) {
  const int* b = &boxes[6 * std::size_t(r)];
  return Layout{b[3], b[4], b[5]};
}

namespace {

// f(i, j, k) over a box of n[0] x n[1] x n[2] points, x fastest.
template <class F>
void for_box(const int* n, F&& f) {
  for (int kk = 0; kk < n[2]; ++kk)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) f(i, j, kk);
}

// Through host memory: the MPI need not take device pointers.
class HostBoxGather final : public BoxGather {
 public:
  HostBoxGather(Kernels& k, const std::vector<int>& boxes, const Int3& grid, MPI_Comm comm)
      : k_(k), boxes_(boxes), whole_{grid[0], grid[1], grid[2]}, comm_(comm) {
    int rank = 0;
    HALO3D_MPI_CHECK(MPI_Comm_rank(comm, &rank));
    own_ = box_layout(boxes_, rank);
    const int ranks = int(boxes_.size() / 6);
    counts_.resize(ranks);
    displs_.resize(ranks);
    int total = 0;
    for (int r = 0; r < ranks; ++r) {
      counts_[r] = int(box_layout(boxes_, r).interior_size());
      displs_[r] = total;
      total += counts_[r];
    }
  }
  void gather(const double* own, double* whole) override { run(own, whole, d_); }
  void gather(const float* own, float* whole) override { run(own, whole, f_); }
  std::string describe() const override { return "host"; }

 private:
  template <class T>
  struct Staging {
    std::vector<T> local, mine, gathered, global;
  };
  template <class T>
  void run(const T* own, T* whole, Staging<T>& s) {
    HALO3D_NVTX_RANGE("multigrid gather (host)");
    s.local.resize(own_.padded_size());
    k_.synchronize();
    k_.copy(s.local.data(), own, s.local.size(), Lane::interior);
    k_.synchronize(Lane::interior);
    s.mine.clear();
    const int own_n[3] = {own_.nx, own_.ny, own_.nz};
    for_box(own_n, [&](int i, int j, int kk) { s.mine.push_back(s.local[own_.at(i, j, kk)]); });
    s.gathered.resize(std::size_t(displs_.back()) + std::size_t(counts_.back()));
    HALO3D_MPI_CHECK(MPI_Allgatherv(s.mine.data(), int(s.mine.size()), mpi_datatype<T>(),
                                    s.gathered.data(), counts_.data(), displs_.data(),
                                    mpi_datatype<T>(), comm_));
    s.global.assign(whole_.padded_size(), T(0));
    for (std::size_t r = 0; r < counts_.size(); ++r) {
      const int* box = &boxes_[6 * r];
      std::size_t n = std::size_t(displs_[r]);
      for_box(box + 3, [&](int i, int j, int kk) {
        s.global[whole_.at(box[0] + i, box[1] + j, box[2] + kk)] = s.gathered[n++];
      });
    }
    k_.copy(whole, s.global.data(), s.global.size(), Lane::interior);
    k_.synchronize(Lane::interior);
  }

  Kernels& k_;
  std::vector<int> boxes_;
  Layout whole_, own_;
  MPI_Comm comm_;
  std::vector<int> counts_, displs_;
  Staging<double> d_;
  Staging<float> f_;
};

}  // namespace

std::unique_ptr<BoxGather> make_box_gather(Kernels& k, const std::vector<int>& boxes,
                                           const Int3& grid, MPI_Comm comm, const HostMap& hosts,
                                           const PeerPolicy& peer, bool ipc) {
  if (ipc)
    if (auto g = make_ipc_box_gather(k, boxes, grid, comm, hosts, peer)) return g;
  return std::make_unique<HostBoxGather>(k, boxes, grid, comm);
}

}  // namespace halo3d
