#include "fields.hpp"

#include <muParser.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>

#include "checks.hpp"
#include "coefficient.hpp"
#include "coefficients.hpp"
#include "errors.hpp"
#include "field_inputs.hpp"
#include "files.hpp"
#include "hdf5_io.hpp"
#include "problem.hpp"

namespace halo3d {
namespace {

constexpr double kPi = 3.14159265358979323846;

}  // namespace

bool has_boundary_values(const ProblemSpec& o) { return !parse_boundary_spec(o.boundary).zero(); }

void check_field_options(const ProblemSpec& o) {
  if (o.problem != ProblemKind::heat && !o.initial.empty())
    throw BadInput("--initial " + printable(o.initial, 80) +
                   ": an initial state is for --problem heat; Poisson's source is --rhs");
  const FieldSpec src = source_field(o);
  if (src.kind == FieldSpec::kExpr) Formula check(source_option(o), src.expr);
  const FieldSpec b = parse_boundary_spec(o.boundary);
  if (b.kind == FieldSpec::kExpr) Formula check("--boundary", b.expr);
  check_coefficient_option(o);
}

namespace {

// Collective: --rhs/--initial file:PATH.h5:/DATASET into this rank's box, every value finite.
void read_source_file(const char* option, const FieldSpec& src, const Decomposition& d,
                      MPI_Comm comm, std::vector<double>& padded) {
  const Layout l = d.layout();
  read_file_field(option, src, d, 0, comm, padded);
  std::string why;
  for (int k = 0; k < l.nz && why.empty(); ++k)
    for (int j = 0; j < l.ny && why.empty(); ++j)
      for (int i = 0; i < l.nx && why.empty(); ++i)
        if (!std::isfinite(padded[l.at(i, j, k)]))
          why = std::string(option) + " " + printable("file:" + src.file + ":" + src.dataset, 160) +
                ": holds " + number(padded[l.at(i, j, k)]) + " at [" +
                std::to_string(d.offset[2] + k) + "][" + std::to_string(d.offset[1] + j) + "][" +
                std::to_string(d.offset[0] + i) + "]";
  agree(why, comm);
}

// Collective: --rhs/--initial expr:FORMULA at this rank's points, every value finite.
void eval_source_formula(const char* option, const FieldSpec& src, const Decomposition& d,
                         const std::array<double, 3>& box, MPI_Comm comm,
                         std::vector<double>& padded) {
  const Layout l = d.layout();
  padded.assign(l.padded_size(), 0.0);
  // The rank's threads share the planes, each with its own parser (a muparser instance is
  // not thread-safe); the first bad point of the lowest plane is the one reported.
  std::vector<std::string> bad(std::size_t(l.nz) + 1);
#pragma omp parallel
  {
    std::string setup;
    std::unique_ptr<Formula> f;
    try {
      f = std::make_unique<Formula>(option, src.expr);
    } catch (const BadInput& e) {
      setup = e.what();
    }
#pragma omp for schedule(static)
    for (int k = 0; k < l.nz; ++k) {
      std::string& why = bad[std::size_t(k)];
      if (!f) why = setup;
      for (int j = 0; j < l.ny && why.empty(); ++j)
        for (int i = 0; i < l.nx && why.empty(); ++i) {
          const double x = coord(d, 0, d.offset[0] + i, box[0]);
          const double y = coord(d, 1, d.offset[1] + j, box[1]);
          const double z = coord(d, 2, d.offset[2] + k, box[2]);
          try {
            const double v = (*f)(x, y, z);
            if (!std::isfinite(v))
              why = std::string(option) + " expr:" + printable(src.expr, 80) + ": gives " +
                    number(v) + " at x=" + number(x) + ", y=" + number(y) + ", z=" + number(z);
            padded[l.at(i, j, k)] = v;
          } catch (const BadInput& e) {
            why = e.what();
          }
        }
    }
  }
  std::string why;
  for (const std::string& w : bad)
    if (why.empty()) why = w;
  agree(why, comm);
}

// The boundary values in the ghost cells on the domain's boundary, for each kind of
// --boundary; the first bad value sets `why`.
void read_boundary_file(const FieldSpec& b, const Decomposition& d, MPI_Comm comm,
                        std::vector<double>& g, std::string& why) {
  const Layout l = d.layout();
  read_file_field("--boundary", b, d, 1, comm, g);
  for_boundary_ghosts(d, [&](int i, int j, int k) {
    const double v = g[l.at(i, j, k)];
    if (why.empty() && !std::isfinite(v))
      why = "--boundary " + printable("file:" + b.file + ":" + b.dataset, 160) + ": holds " +
            number(v) + " at [" + std::to_string(d.offset[2] + k + 1) + "][" +
            std::to_string(d.offset[1] + j + 1) + "][" + std::to_string(d.offset[0] + i + 1) +
            "] on the boundary";
  });
}
void eval_boundary_formula(const FieldSpec& b, const Decomposition& d,
                           const std::array<double, 3>& box, std::vector<double>& g,
                           std::string& why) {
  const Layout l = d.layout();
  g.assign(l.padded_size(), 0.0);
  try {
    Formula f("--boundary", b.expr);
    for_boundary_ghosts(d, [&](int i, int j, int k) {
      const double x = coord(d, 0, d.offset[0] + i, box[0]);
      const double y = coord(d, 1, d.offset[1] + j, box[1]);
      const double z = coord(d, 2, d.offset[2] + k, box[2]);
      const double v = f(x, y, z);
      if (why.empty() && !std::isfinite(v))
        why = "--boundary expr:" + printable(b.expr, 80) + ": gives " + number(v) +
              " at x=" + number(x) + ", y=" + number(y) + ", z=" + number(z);
      g[l.at(i, j, k)] = v;
    });
  } catch (const BadInput& e) {
    why = e.what();
  }
}
void fill_boundary_faces(const FieldSpec& b, const Decomposition& d, std::vector<double>& g) {
  const Layout l = d.layout();
  g.assign(l.padded_size(), 0.0);
  const int n[3] = {l.nx, l.ny, l.nz};
  for_boundary_ghosts(d, [&](int i, int j, int k) {
    const int idx[3] = {i, j, k};
    for (int a = 0; a < 3; ++a)
      if (idx[a] < 0 || idx[a] >= n[a]) g[l.at(i, j, k)] = b.faces[2 * a + (idx[a] < 0 ? 0 : 1)];
  });
}

// One boundary face's term of b at a point: a Dirichlet value times the face's weight w
// (c_axis; with a variable coefficient the face's own, face_weight of kappa with the lower
// point first), times its area fraction where the face lies in Neumann planes
// (ops::neumann_face_factor, as the operator's weight has it); a Neumann flux times its area
// fraction over h_axis (the dual cell's boundary face over the full cell volume).
struct BoundaryTerm {
  const Decomposition& d;
  const std::vector<double>* kappa;
  double c[3], h[3];
  NeumannPlanes np;
  double operator()(int a, int side, const int gl[3], std::ptrdiff_t lo, std::ptrdiff_t hi,
                    double g) const {
    if (d.neumann_face(a, side)) return ops::neumann_area(np, a, gl) * g / h[a];
    const double w =
        kappa ? face_weight((*kappa)[std::size_t(lo)], (*kappa)[std::size_t(hi)], c[a]) : c[a];
    if (np.faces == 0) return w * g;  // the bits of the plain lifting
    return ops::neumann_area(np, a, gl) * w * g;
  }
};

// b = f + B g: each point next to the boundary gets its boundary faces' terms (BoundaryTerm)
// in a fixed order (x, y, z; low side first), so the sum does not depend on the ranks.
void lift_boundary(const Problem& p, const Decomposition& d, const std::vector<double>& g,
                   const std::vector<double>* kappa, std::vector<double>& padded) {
  const Layout l = d.layout();
  const Stencil s = p.stencil();
  const BoundaryTerm term{
      d, kappa, {s.cx, s.cy, s.cz}, {p.h()[0], p.h()[1], p.h()[2]}, neumann_planes(d)};
  const std::ptrdiff_t step[3] = {1, l.sy(), l.sz()};
  for (int k = 0; k < l.nz; ++k)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i) {
        const int gl[3] = {d.offset[0] + i, d.offset[1] + j, d.offset[2] + k};
        const std::ptrdiff_t at = l.at(i, j, k);
        double v = padded[std::size_t(at)];
        for (int a = 0; a < 3; ++a) {
          const std::ptrdiff_t lo = at - step[a], hi = at + step[a];
          if (gl[a] == 0) v += term(a, 0, gl, lo, at, g[std::size_t(lo)]);
          if (gl[a] == d.grid[a] - 1) v += term(a, 1, gl, at, hi, g[std::size_t(hi)]);
        }
        padded[std::size_t(at)] = v;
      }
}

}  // namespace

void scale_by_volume(const Decomposition& d, std::vector<double>& padded) {
  if (d.neumann == 0) return;
  const Layout l = d.layout();
  const NeumannPlanes np = neumann_planes(d);
  for (int k = 0; k < l.nz; ++k)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i) {
        const int g[3] = {d.offset[0] + i, d.offset[1] + j, d.offset[2] + k};
        padded[std::size_t(l.at(i, j, k))] *= ops::neumann_volume(np, g);
      }
}

void fill_fields(const ProblemSpec& o, const Problem& p, const Decomposition& d, MPI_Comm comm,
                 std::vector<double>& padded, const std::vector<double>* kappa) {
  const char* option = source_option(o);
  const FieldSpec src = source_field(o);
  if (src.kind == FieldSpec::kModes || src.kind == FieldSpec::kRandom)
    p.fill_source(d, padded);
  else if (src.kind == FieldSpec::kFile)
    read_source_file(option, src, d, comm, padded);
  else
    eval_source_formula(option, src, d, o.box, comm, padded);

  if (o.problem == ProblemKind::heat) return;
  scale_by_volume(d, padded);
  add_boundary_values(o, p, d, comm, padded, kappa);
}

std::vector<double> boundary_source(const ProblemSpec& o, const Problem& p, const Decomposition& d,
                                    MPI_Comm comm, const std::vector<double>* kappa) {
  std::vector<double> bg;
  if (parse_boundary_spec(o.boundary).zero()) return bg;
  bg.assign(d.layout().padded_size(), 0.0);
  add_boundary_values(o, p, d, comm, bg, kappa);
  return bg;
}

void add_boundary_values(const ProblemSpec& o, const Problem& p, const Decomposition& d,
                         MPI_Comm comm, std::vector<double>& padded,
                         const std::vector<double>* kappa) {
  const FieldSpec b = parse_boundary_spec(o.boundary);
  if (b.zero()) return;  // homogeneous: b = f, bitwise as before
  // g: the boundary values in the ghost cells on the domain's boundary.
  std::vector<double> g;
  std::string why;
  if (b.kind == FieldSpec::kFile)
    read_boundary_file(b, d, comm, g, why);
  else if (b.kind == FieldSpec::kExpr)
    eval_boundary_formula(b, d, o.box, g, why);
  else
    fill_boundary_faces(b, d, g);
  agree(why, comm);
  lift_boundary(p, d, g, kappa, padded);
  // Finite values whose lifted sum f + c_d g leaves the double range: refused, not solved.
  const Layout l = d.layout();
  for (int k = 0; k < l.nz && why.empty(); ++k)
    for (int j = 0; j < l.ny && why.empty(); ++j)
      for (int i = 0; i < l.nx && why.empty(); ++i)
        if (!std::isfinite(padded[l.at(i, j, k)]))
          why = "--boundary " + printable(o.boundary, 80) +
                ": the right-hand side with the boundary values, f + g/h^2, overflows the double "
                "range at [" +
                std::to_string(d.offset[2] + k) + "][" + std::to_string(d.offset[1] + j) + "][" +
                std::to_string(d.offset[0] + i) + "]";
  agree(why, comm);
}

void check_file_fields(const ProblemSpec& o, const Decomposition& d, MPI_Comm comm) {
  const FieldSpec src = source_field(o);
  if (src.kind == FieldSpec::kFile)
    open_file_field(std::string(source_option(o)) + " " +
                        printable("file:" + src.file + ":" + src.dataset, 160),
                    src, d, 0, comm);
  const FieldSpec b = parse_boundary_spec(o.boundary);
  if (b.kind == FieldSpec::kFile)
    open_file_field("--boundary " + printable("file:" + b.file + ":" + b.dataset, 160), b, d, 1,
                    comm);
}

nlohmann::json fields_json(const ProblemSpec& o) {
  const auto describe = [](const FieldSpec& f) {
    nlohmann::json j = {{"spec", f.text}};
    switch (f.kind) {
      case FieldSpec::kModes:
        j["kind"] = "modes";
        break;
      case FieldSpec::kRandom:
        j["kind"] = "random";
        break;
      case FieldSpec::kFile: {
        j["kind"] = "file";
        j["file"] = f.file;
        char* abs = ::realpath(f.file.c_str(), nullptr);
        j["file_absolute"] = abs ? std::string(abs) : f.file;
        std::free(abs);
        j["dataset"] = f.dataset;
        break;
      }
      case FieldSpec::kExpr:
        j["kind"] = "expr";
        j["expr"] = f.expr;
        break;
      case FieldSpec::kFaces: {
        bool constant = true;
        for (double v : f.faces) constant = constant && v == f.faces[0];
        j["kind"] = constant ? "constant" : "faces";
        nlohmann::json faces = nlohmann::json::object();
        for (int i = 0; i < 6; ++i) faces[kFaceNames[i]] = f.faces[i];
        j["faces"] = faces;
        break;
      }
    }
    return j;
  };
  nlohmann::json j;
  j[o.problem == ProblemKind::heat ? "initial" : "rhs"] = describe(source_field(o));
  j["boundary"] = describe(parse_boundary_spec(o.boundary));
  return j;
}

Buffer fill_fields(Kernels& k, const ProblemSpec& o, const Problem& p, const Decomposition& d,
                   MPI_Comm comm, const std::vector<double>* kappa) {
  Buffer b(k, d.layout().padded_size());
  const FieldSpec src = source_field(o);
  // Heat's boundary values are not in its initial state (see boundary_source); a Neumann
  // face's control volumes scale Poisson's right-hand side on the host.
  if ((src.kind == FieldSpec::kModes || src.kind == FieldSpec::kRandom) &&
      (o.problem == ProblemKind::heat || (!has_boundary_values(o) && !has_neumann(o)))) {
    p.fill(k, d, ModeField::source, b.data());
  } else {
    std::vector<double> host;
    fill_fields(o, p, d, comm, host, kappa);
    k.copy(b.data(), host.data(), host.size(), Lane::interior);
  }
  k.synchronize(Lane::interior);
  return b;
}

}  // namespace halo3d
