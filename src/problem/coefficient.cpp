#include "coefficient.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "checkpoint.hpp"
#include "coefficients.hpp"
#include "field_inputs.hpp"

namespace halo3d {

namespace {

// The option a point field comes from, and the values it takes.
struct PointField {
  const char* option;
  bool zero_ok;  // sigma >= 0; k > 0
  const char* rule;
};
constexpr PointField kCoefficient{
    "--coefficient", false,
    "k must be a finite number > 0 everywhere, the boundary layer included"};
constexpr PointField kShift{"--shift", true,
                            "sigma must be a finite number >= 0 everywhere, the boundary layer "
                            "included"};

}  // namespace

void check_coefficient_option(const ProblemSpec& o) {
  const FieldSpec f = parse_coefficient_spec(o.coefficient);
  if (f.kind == FieldSpec::kExpr) Formula check("--coefficient", f.expr);
  if (!variable_shift(o)) return;
  const FieldSpec s = parse_shift_spec(o.shift_field);
  if (s.kind == FieldSpec::kExpr) Formula check("--shift", s.expr);
}

namespace {

// The first value of plane k (-1 .. nz) that is not a finite number > 0 (>= 0 where zero
// is allowed), as a message.
std::string check_plane(const PointField& p, const FieldSpec& f, const Decomposition& d,
                        const ProblemSpec& o, const std::vector<double>& kappa, int k) {
  const Layout l = d.layout();
  for (int j = -1; j <= l.ny; ++j)
    for (int i = -1; i <= l.nx; ++i) {
      const double v = kappa[std::size_t(l.at(i, j, k))];
      if ((p.zero_ok ? v >= 0 : v > 0) && std::isfinite(v)) continue;
      const double x = coord(d, 0, d.offset[0] + i, o.box[0]);
      const double y = coord(d, 1, d.offset[1] + j, o.box[1]);
      const double z = coord(d, 2, d.offset[2] + k, o.box[2]);
      return std::string(p.option) + " " + printable(f.text, 160) + ": " +
             (f.kind == FieldSpec::kExpr ? "gives " : "holds ") + number(v) + " at x=" + number(x) +
             ", y=" + number(y) + ", z=" + number(z) + " (" + p.rule + ")";
    }
  return "";
}

// expr:FORMULA at every point of the padded box (ghosts: the coordinates beyond the box,
// 0 and L on a Dirichlet boundary, the wrapped point's on a periodic one); each thread its own
// parser (muparser is not thread-safe). A formula error ends the plane; the lowest plane's first
// error is reported.
void eval_formula(const char* option, const FieldSpec& f, const Decomposition& d,
                  const ProblemSpec& o, std::vector<double>& kappa, std::vector<std::string>& bad) {
  const Layout l = d.layout();
#pragma omp parallel
  {
    std::string setup;
    std::unique_ptr<Formula> formula;
    try {
      formula = std::make_unique<Formula>(option, f.expr);
    } catch (const BadInput& e) {
      setup = e.what();
    }
#pragma omp for schedule(static)
    for (int k = -1; k <= l.nz; ++k) {
      std::string& why = bad[std::size_t(k + 1)];
      if (!formula) why = setup;
      const double z = coord(d, 2, d.offset[2] + k, o.box[2]);
      for (int j = -1; j <= l.ny && why.empty(); ++j) {
        const double y = coord(d, 1, d.offset[1] + j, o.box[1]);
        for (int i = -1; i <= l.nx && why.empty(); ++i) {
          try {
            kappa[std::size_t(l.at(i, j, k))] =
                (*formula)(coord(d, 0, d.offset[0] + i, o.box[0]), y, z);
          } catch (const BadInput& e) {
            why = e.what();
          }
        }
      }
    }
  }
}

// The plane `at` (-1 .. n) of axis a of the padded box, ghosts of the other axes included:
// copied out to buf (out) or in from it.
void plane_copy(const Layout& l, int a, int at, std::vector<double>& v, std::vector<double>& buf,
                bool out) {
  const int n[3] = {l.nx, l.ny, l.nz};
  const int b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
  std::size_t q = 0;
  buf.resize(std::size_t(n[b] + 2) * (n[c] + 2));
  for (int j = -1; j <= n[c]; ++j)
    for (int i = -1; i <= n[b]; ++i, ++q) {
      int idx[3];
      idx[a] = at, idx[b] = i, idx[c] = j;
      double& p = v[std::size_t(l.at(idx[0], idx[1], idx[2]))];
      if (out)
        buf[q] = p;
      else
        p = buf[q];
    }
}

// On a periodic axis the ghosts beyond the domain's ends hold the points they wrap to (a
// file's boundary layer there is ignored), so the face between points N-1 and 0 has the same
// weight on every rank. Axis by axis with the other axes' ghosts, as the halo's per-axis
// rounds: edges and corners wrap too. Only the ranks at an end of the axis take part; one
// rank along it sends to itself.
void wrap_ghosts(const Decomposition& d, MPI_Comm comm, std::vector<double>& v) {
  const Layout l = d.layout();
  const int n[3] = {l.nx, l.ny, l.nz};
  for (int a = 0; a < 3; ++a) {
    if (!d.periodic[a]) continue;
    const bool low = d.offset[a] == 0, high = d.offset[a] + d.count[a] == d.grid[a];
    std::vector<double> send[2], recv[2];
    std::vector<MPI_Request> req;
    for (int side = 0; side < 2; ++side) {
      if (!(side == 0 ? low : high)) continue;
      plane_copy(l, a, side == 0 ? 0 : n[a] - 1, v, send[side], true);
      recv[side].resize(send[side].size());
      req.resize(req.size() + 2);
      // Tag: the side the message arrives at (a low end's plane fills the high end's ghost).
      HALO3D_MPI_CHECK(MPI_Irecv(recv[side].data(), int(recv[side].size()), MPI_DOUBLE,
                                 d.neighbor[a][side], side, comm, &req[req.size() - 2]));
      HALO3D_MPI_CHECK(MPI_Isend(send[side].data(), int(send[side].size()), MPI_DOUBLE,
                                 d.neighbor[a][side], 1 - side, comm, &req.back()));
    }
    HALO3D_MPI_CHECK(MPI_Waitall(int(req.size()), req.data(), MPI_STATUSES_IGNORE));
    for (int side = 0; side < 2; ++side)
      if (side == 0 ? low : high) plane_copy(l, a, side == 0 ? -1 : n[a], v, recv[side], false);
  }
}

// Collective: the field `f` of option `p` over this rank's padded box, every ghost filled,
// checked at every value (fill_coefficient's rules, with p's sign).
std::vector<double> fill_point_field(const PointField& p, const FieldSpec& f, const ProblemSpec& o,
                                     const Decomposition& d, MPI_Comm comm) {
  const Layout l = d.layout();
  std::vector<double> kappa(l.padded_size(), 0.0);
  std::vector<std::string> bad(std::size_t(l.nz) + 2);
  if (f.kind == FieldSpec::kFile) {
    read_file_field(p.option, f, d, 1, comm, kappa);
  } else if (f.kind == FieldSpec::kExpr) {
    eval_formula(p.option, f, d, o, kappa, bad);
  } else {
    for (int k = -1; k <= l.nz; ++k)
      for (int j = -1; j <= l.ny; ++j)
        for (int i = -1; i <= l.nx; ++i) kappa[std::size_t(l.at(i, j, k))] = f.faces[0];
  }
  wrap_ghosts(d, comm, kappa);
  std::string why;
  for (int k = -1; k <= l.nz && why.empty(); ++k) {
    why = bad[std::size_t(k + 1)];
    if (why.empty()) why = check_plane(p, f, d, o, kappa, k);
  }
  agree(why, comm);
  return kappa;
}

}  // namespace

std::vector<double> fill_coefficient(const ProblemSpec& o, const Decomposition& d, MPI_Comm comm) {
  return fill_point_field(kCoefficient, parse_coefficient_spec(o.coefficient), o, d, comm);
}

std::vector<double> fill_shift(const ProblemSpec& o, const Decomposition& d, MPI_Comm comm) {
  const FieldSpec f = parse_shift_spec(variable_shift(o) ? o.shift_field : exact_text(o.shift));
  std::vector<double> sigma = fill_point_field(kShift, f, o, d, comm);
  // Poisson with no Dirichlet face: A = L + V sigma, L 1 = 0, is nonsingular only where sigma
  // > 0 at some point. Refused on the data, every rank agreeing (the maximum over all ranks).
  if (no_dirichlet_face(o) && o.problem != ProblemKind::heat) {
    const Layout l = d.layout();
    double m = 0;
    for (int k = 0; k < l.nz; ++k)
      for (int j = 0; j < l.ny; ++j)
        for (int i = 0; i < l.nx; ++i) m = std::max(m, sigma[std::size_t(l.at(i, j, k))]);
    HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &m, 1, MPI_DOUBLE, MPI_MAX, comm));
    if (!(m > 0))
      throw BadInput("--shift " + o.shift_field +
                     ": sigma is 0 at every point and no face is "
                     "Dirichlet (--bc " +
                     bc_text(o.bc) +
                     "): A 1 = 0; give sigma > 0 somewhere, "
                     "--shift 0 (the singular case) or a Dirichlet face");
  }
  return sigma;
}

double max_diagonal(const Stencil& spacing, const Decomposition& d,
                    const std::vector<double>& kappa, const std::vector<double>* sigma,
                    MPI_Comm comm) {
  double m = local_max_diagonal(d.layout(), spacing, kappa, sigma, neumann_planes(d));
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &m, 1, MPI_DOUBLE, MPI_MAX, comm));
  return m;
}

double max_diagonal(Kernels& k, const LevelCoefficients& c, MPI_Comm comm) {
  double m = c.local_max_diagonal(k);
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &m, 1, MPI_DOUBLE, MPI_MAX, comm));
  return m;
}

std::uint64_t coefficient_checksum(const Decomposition& d, const std::vector<double>& kappa,
                                   MPI_Comm comm) {
  // This rank's box of the (N+2)^3 grid: its own points, and the boundary layer beyond
  // each side on the domain's boundary.
  Decomposition e = d;
  int lo[3];
  for (int a = 0; a < 3; ++a) {
    lo[a] = d.offset[a] == 0 ? 1 : 0;
    const int hi = d.offset[a] + d.count[a] == d.grid[a] ? 1 : 0;
    e.grid[a] = d.grid[a] + 2;
    e.offset[a] = d.offset[a] + 1 - lo[a];
    e.count[a] = d.count[a] + lo[a] + hi;
  }
  const Layout l = d.layout(), el = e.layout();
  std::vector<double> padded(el.padded_size(), 0.0);
  for (int k = 0; k < el.nz; ++k)
    for (int j = 0; j < el.ny; ++j)
      for (int i = 0; i < el.nx; ++i)
        padded[std::size_t(el.at(i, j, k))] =
            kappa[std::size_t(l.at(i - lo[0], j - lo[1], k - lo[2]))];
  return field_checksum(e, padded, comm);
}

}  // namespace halo3d
