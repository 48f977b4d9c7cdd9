// Multigrid's transfers between consecutive levels: the restriction's and prolongation's
// per-axis tables, checked to stay within one ghost layer, in one backend allocation.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "multigrid.hpp"
#include "multigrid_level.hpp"
#include "point_ops.hpp"

namespace halo3d {

namespace ops {

// A transfer's tables on the host (see Transfer): per axis, the integer tables and the
// weights in double.
struct TransferTables {
  std::vector<int> pidx[3], ridx[3];
  std::vector<double> pw[3], rw[3];
};
inline TransferTables transfer_tables(const Transfer& t) {
  TransferTables out;
  const int nfl[3] = {t.fine.nx, t.fine.ny, t.fine.nz};
  const int ncl[3] = {t.coarse.nx, t.coarse.ny, t.coarse.nz};
  for (int a = 0; a < 3; ++a) {
    out.pidx[a].assign(std::size_t(nfl[a]), 0);
    out.pw[a].assign(2 * std::size_t(nfl[a]), 0.0);
    for (int i = 0; i < nfl[a]; ++i) {
      int lo;
      double f;
      interp_1d(t.fo[a] + i, t.mf[a], t.mc[a], lo, f, t.at0[a]);
      out.pidx[a][std::size_t(i)] = lo - t.co[a];
      out.pw[a][2 * std::size_t(i)] = 1.0 - f;
      out.pw[a][2 * std::size_t(i) + 1] = f;
    }
    out.ridx[a].assign(2 * std::size_t(ncl[a]), 0);
    out.rw[a].assign(4 * std::size_t(ncl[a]), 0.0);
    for (int I = 0; I < ncl[a]; ++I) {
      int first, last;
      restrict_span(t.co[a] + I, t.nf[a], t.mf[a], t.mc[a], first, last, t.at0[a], t.bounded[a]);
      out.ridx[a][2 * std::size_t(I)] = first - t.fo[a];
      out.ridx[a][2 * std::size_t(I) + 1] = last - first + 1;  // at most 4; make_transfer checks
      for (int n = 0; n <= last - first && n < 4; ++n)
        out.rw[a][4 * std::size_t(I) + std::size_t(n)] =
            interp_weight(first + n, t.co[a] + I, t.mf[a], t.mc[a], t.at0[a]);
    }
  }
  return out;
}

}  // namespace ops

namespace {
constexpr std::size_t round8(std::size_t n) { return (n + 7) / 8 * 8; }
}  // namespace

// Per axis, as make_transfer places them: the prolongation's index (int) and two weights
// (double, float) per fine point, the restriction's first index and span (ints) and four
// weights (double, float) per coarse point; then 8 bytes, so the block is never empty.
std::size_t transfer_table_bytes(const Layout& fine, const Layout& coarse) {
  const int nf[3] = {fine.nx, fine.ny, fine.nz}, nc[3] = {coarse.nx, coarse.ny, coarse.nz};
  std::size_t b = 8;
  for (int a = 0; a < 3; ++a) {
    const auto f = std::size_t(nf[a]), c = std::size_t(nc[a]);
    b += round8(f * sizeof(int)) + round8(2 * c * sizeof(int)) + 2 * f * sizeof(double) +
         4 * c * sizeof(double) + round8(2 * f * sizeof(float)) + 4 * c * sizeof(float);
  }
  return b;
}

TransferOp make_transfer(Kernels& k, const Decomposition& f, const Decomposition& c,
                         TransferUse uses) {
  TransferOp op;
  Transfer& t = op.t;
  t.fine = f.layout();
  t.coarse = c.layout();
  if (f.periodic != c.periodic || f.neumann != c.neumann)
    throw std::logic_error("multigrid: levels with different boundary kinds");
  double scale = 1.0;
  for (int a = 0; a < 3; ++a) {
    t.nf[a] = f.grid[a], t.nc[a] = c.grid[a];
    t.fo[a] = f.offset[a], t.co[a] = c.offset[a];
    t.mf[a] = f.intervals(a);
    t.mc[a] = c.intervals(a);
    // Positions i + 1 on Dirichlet and periodic axes (a periodic grid's shift does not
    // matter), i behind a Neumann low face (its boundary node at 0 on both levels).
    t.at0[a] = f.neumann_face(a, 0) ? 0 : 1;
    t.bounded[a] = !f.periodic[a];
    scale *= double(t.mc[a]) / double(t.mf[a]);
  }
  t.wd.scale = scale;
  t.wf.scale = float(scale);
  // The ownership rule keeps every transfer within one ghost layer; check it, since a
  // violation would read stale ghosts silently.
  for (int a = 0; a < 3; ++a) {
    for (int I = c.offset[a]; uses != TransferUse::prolongation && I < c.offset[a] + c.count[a];
         ++I) {
      int first, last;
      ops::restrict_span(I, t.nf[a], t.mf[a], t.mc[a], first, last, t.at0[a], t.bounded[a]);
      if (first < f.offset[a] - 1 || last > f.offset[a] + f.count[a] || last - first > 3)
        throw std::logic_error("multigrid: restriction outside the ghost layer");
      t.span = std::max(t.span, last - first + 1);
    }
    for (int i = f.offset[a]; uses != TransferUse::restriction && i < f.offset[a] + f.count[a];
         ++i) {
      int lo;
      double w;
      ops::interp_1d(i, t.mf[a], t.mc[a], lo, w, t.at0[a]);
      if (lo < c.offset[a] - 1 || lo + 1 > c.offset[a] + c.count[a])
        throw std::logic_error("multigrid: prolongation outside the ghost layer");
    }
  }
  // The tables in one allocation: each array at a multiple of 8 bytes, placed by byte
  // offset, then the pointers set once the block is in backend memory.
  const ops::TransferTables tab = ops::transfer_tables(t);
  std::vector<unsigned char> bytes;
  const auto place = [&bytes](const void* data, std::size_t n) {
    const std::size_t at = bytes.size();
    bytes.resize(at + round8(n));
    if (n) std::memcpy(bytes.data() + at, data, n);
    return at;
  };
  std::size_t at[6][3];
  for (int a = 0; a < 3; ++a) {
    std::vector<float> pwf(tab.pw[a].begin(), tab.pw[a].end());  // rounded to nearest
    std::vector<float> rwf(tab.rw[a].begin(), tab.rw[a].end());
    at[0][a] = place(tab.pidx[a].data(), tab.pidx[a].size() * sizeof(int));
    at[1][a] = place(tab.ridx[a].data(), tab.ridx[a].size() * sizeof(int));
    at[2][a] = place(tab.pw[a].data(), tab.pw[a].size() * sizeof(double));
    at[3][a] = place(tab.rw[a].data(), tab.rw[a].size() * sizeof(double));
    at[4][a] = place(pwf.data(), pwf.size() * sizeof(float));
    at[5][a] = place(rwf.data(), rwf.size() * sizeof(float));
  }
  bytes.resize(bytes.size() + 8);  // never empty
  if (bytes.size() != transfer_table_bytes(t.fine, t.coarse))
    throw std::logic_error("multigrid: transfer tables unlike their count");
  op.tables = Buffer(k, bytes.size() / sizeof(double));
  k.copy_bytes(op.tables.data(), bytes.data(), bytes.size(), Lane::interior);
  k.synchronize(Lane::interior);  // before `bytes` goes
  const auto* base = reinterpret_cast<const unsigned char*>(op.tables.data());
  for (int a = 0; a < 3; ++a) {
    t.pidx[a] = reinterpret_cast<const int*>(base + at[0][a]);
    t.ridx[a] = reinterpret_cast<const int*>(base + at[1][a]);
    t.wd.pw[a] = reinterpret_cast<const double*>(base + at[2][a]);
    t.wd.rw[a] = reinterpret_cast<const double*>(base + at[3][a]);
    t.wf.pw[a] = reinterpret_cast<const float*>(base + at[4][a]);
    t.wf.rw[a] = reinterpret_cast<const float*>(base + at[5][a]);
  }
  return op;
}

// Variable coefficients: level F's operator-dependent interpolation (Transfer::od) from its
// face weights, made at its points and exchanged (the restriction and the Galerkin parts
// read them in the ghost layer), for both of its transfers.
void Multigrid::interpolation_weights(Level& F, LevelCoefficients& above) {
  Kernels& k = *rt_.kernels;
  const std::size_t n = F.decomp.layout().padded_size();
  F.od = FloatBuffer(k, 3 * n);
  k.od_weights(F.down.t, above.weights(), F.od.data());
  for (int a = 0; a < 3; ++a) F.A->exchange(F.od.data() + std::size_t(a) * n);
  F.down.t.od = F.od.data();
  if (F.gathers) F.up.t.od = F.od.data();
}

}  // namespace halo3d
