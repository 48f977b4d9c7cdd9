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
#include "errors.hpp"
#include "files.hpp"
#include "hdf5_io.hpp"
#include "problem.hpp"

namespace halo3d {
namespace {

constexpr double kPi = 3.14159265358979323846;

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// A formula in x, y, z (muparser, with pi and e); the variables are bound to members, so a
// Formula stays where it was made.
class Formula {
 public:
  Formula(const std::string& option, const std::string& text) : option_(option), text_(text) {
    try {
      p_.DefineConst("pi", kPi);
      p_.DefineConst("e", 2.71828182845904523536);
      p_.DefineVar("x", &x_);
      p_.DefineVar("y", &y_);
      p_.DefineVar("z", &z_);
      p_.SetExpr(text);
      (*this)(0.5, 0.5, 0.5);  // parses: syntax errors and unknown names are found here
      if (p_.GetNumResults() != 1)
        fail("one formula expected, got " + std::to_string(p_.GetNumResults()) + " (a comma?)");
    } catch (const mu::Parser::exception_type& e) {
      fail(e.GetMsg());
    }
  }
  Formula(const Formula&) = delete;
  Formula& operator=(const Formula&) = delete;
  double operator()(double x, double y, double z) {
    x_ = x;
    y_ = y;
    z_ = z;
    double v = 0;
    try {
      v = p_.Eval();
    } catch (const mu::Parser::exception_type& e) {
      fail(e.GetMsg());
    }
    // muparser's '=' assigns: a formula must not change its own coordinates.
    if (!(x_ == x && y_ == y && z_ == z)) fail("assigns to x, y or z ('==' compares)");
    return v;
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw BadInput(option_ + " expr:" + printable(text_, 80) + ": " + printable(why, 160));
  }

 private:
  std::string option_, text_;
  mu::Parser p_;
  double x_ = 0.5, y_ = 0.5, z_ = 0.5;
};

// Point i of an axis of N points on [0, L] (ghosts: -1 and N) at L (i+1)/(N+1): 0 and L
// exactly on the boundary.
double coord(int i, int n, double L) { return i == n ? L : L * double(i + 1) / double(n + 1); }

// Every rank throws the same BadInput when one rank's `why` is non-empty.
void agree(const std::string& why, MPI_Comm comm) {
  const std::string first = first_error(why, comm);
  if (!first.empty()) throw BadInput(first);
}

std::string shape_text(const hsize_t* dims, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += "[" + std::to_string(dims[i]) + "]";
  return s.empty() ? "a scalar" : s;
}

// Collective: opens file field `f` and checks that it can be read as the grid's field
// ([NZ][NY][NX], or with ghost = 1 [NZ+2][NY+2][NX+2]); BadInput/IoError naming `what`.
H5Id open_file_field(const std::string& what, const FieldSpec& f, const Decomposition& d, int ghost,
                     MPI_Comm comm) {
  check_input_h5(what, f.file, comm, "not an HDF5 file");  // rank 0 looks, all agree
  QuietHdf5 quiet;
  H5Id file = h5_open_read(f.file, comm);
  const std::string link = h5_external_link(file.get(), f.dataset);
  if (!link.empty())
    throw BadInput(what + ": " + link +
                   " is an external link into another file (not supported: inputs must hold "
                   "their data in the named file)");
  // Each group on the way must exist, and the object must be a dataset.
  for (std::size_t at = f.dataset.find('/', 1);; at = f.dataset.find('/', at + 1)) {
    const std::string prefix = f.dataset.substr(0, at);
    if (H5Lexists(file.get(), prefix.c_str(), H5P_DEFAULT) <= 0)
      throw BadInput(what + ": no " + prefix + " in the file");
    if (at == std::string::npos) break;
  }
#if H5_VERSION_GE(1, 12, 0)
  H5O_info2_t info;
  const herr_t got =
      H5Oget_info_by_name3(file.get(), f.dataset.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT);
#else
  H5O_info_t info;
  const herr_t got = H5Oget_info_by_name(file.get(), f.dataset.c_str(), &info, H5P_DEFAULT);
#endif
  if (got < 0 || info.type != H5O_TYPE_DATASET) throw BadInput(what + ": not a dataset");
  H5Id dset(H5Dopen2(file.get(), f.dataset.c_str(), H5P_DEFAULT), H5Dclose);
  refuse_external_storage(dset.get(), what);
  H5Id type(H5Dget_type(dset.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_FLOAT)
    throw BadInput(what + ": holds no floating-point numbers (float64 or float32 expected)");
  H5Id space(H5Dget_space(dset.get()), H5Sclose);
  hsize_t dims[8] = {};
  const int nd = H5Sget_simple_extent_ndims(space.get());
  if (nd < 0 || nd > 8) throw BadInput(what + ": cannot read the dataset's shape");
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  const hsize_t want[3] = {hsize_t(d.grid[2] + 2 * ghost), hsize_t(d.grid[1] + 2 * ghost),
                           hsize_t(d.grid[0] + 2 * ghost)};
  if (nd != 3 || dims[0] != want[0] || dims[1] != want[1] || dims[2] != want[2])
    throw BadInput(what + ": shape " + shape_text(dims, nd) + " does not match " +
                   shape_text(want, 3) + (ghost ? " ([NZ+2][NY+2][NX+2], ghosts included)" : "") +
                   " of --grid " + to_string(d.grid));
  return file;
}

// Collective: reads file field `f` into the padded array: this rank's box ([NZ][NY][NX]), or
// its box with the ghost layer around it (ghost = 1: [NZ+2][NY+2][NX+2]).
void read_file_field(const std::string& option, const FieldSpec& f, const Decomposition& d,
                     int ghost, MPI_Comm comm, std::vector<double>& padded) {
  const std::string what = option + " " + printable("file:" + f.file + ":" + f.dataset, 160);
  H5Id file = open_file_field(what, f, d, ghost, comm);
  QuietHdf5 quiet;
  padded.assign(d.layout().padded_size(), 0.0);
  h5_read_field(file.get(), f.dataset, d, padded.data(), ghost);
}

// Calls fn(i, j, k, axis) for every ghost cell of the local box that lies on the domain's
// boundary (faces only: the 7-point stencil never reads edges or corners).
void for_boundary_ghosts(const Decomposition& d, const std::function<void(int, int, int)>& fn) {
  const Layout l = d.layout();
  const int n[3] = {l.nx, l.ny, l.nz};
  for (int a = 0; a < 3; ++a)
    for (int side = 0; side < 2; ++side) {
      const bool on = side == 0 ? d.offset[a] == 0 : d.offset[a] + d.count[a] == d.grid[a];
      if (!on) continue;
      const int b = (a + 1) % 3, c = (a + 2) % 3;
      for (int q = 0; q < n[c]; ++q)
        for (int p = 0; p < n[b]; ++p) {
          int idx[3];
          idx[a] = side == 0 ? -1 : n[a];
          idx[b] = p;
          idx[c] = q;
          fn(idx[0], idx[1], idx[2]);
        }
    }
}

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
          const double x = coord(d.offset[0] + i, d.grid[0], box[0]);
          const double y = coord(d.offset[1] + j, d.grid[1], box[1]);
          const double z = coord(d.offset[2] + k, d.grid[2], box[2]);
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
      const double x = coord(d.offset[0] + i, d.grid[0], box[0]);
      const double y = coord(d.offset[1] + j, d.grid[1], box[1]);
      const double z = coord(d.offset[2] + k, d.grid[2], box[2]);
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

// b = f + B g: each point next to the boundary gets c_axis * g of its boundary neighbours,
// in a fixed order (x, y, z; low side first), so the sum does not depend on the ranks.
void lift_boundary(const Problem& p, const Decomposition& d, const std::vector<double>& g,
                   std::vector<double>& padded) {
  const Layout l = d.layout();
  const Stencil s = p.stencil();
  const double c[3] = {s.cx, s.cy, s.cz};
  for (int k = 0; k < l.nz; ++k)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i) {
        const int gl[3] = {d.offset[0] + i, d.offset[1] + j, d.offset[2] + k};
        double v = padded[l.at(i, j, k)];
        for (int a = 0; a < 3; ++a) {
          const int di = a == 0, dj = a == 1, dk = a == 2;
          if (gl[a] == 0) v += c[a] * g[l.at(i - di, j - dj, k - dk)];
          if (gl[a] == d.grid[a] - 1) v += c[a] * g[l.at(i + di, j + dj, k + dk)];
        }
        padded[l.at(i, j, k)] = v;
      }
}

}  // namespace

void fill_fields(const ProblemSpec& o, const Problem& p, const Decomposition& d, MPI_Comm comm,
                 std::vector<double>& padded) {
  const char* option = source_option(o);
  const FieldSpec src = source_field(o);
  if (src.kind == FieldSpec::kModes || src.kind == FieldSpec::kRandom)
    p.fill_source(d, padded);
  else if (src.kind == FieldSpec::kFile)
    read_source_file(option, src, d, comm, padded);
  else
    eval_source_formula(option, src, d, o.box, comm, padded);

  if (o.problem != ProblemKind::heat) add_boundary_values(o, p, d, comm, padded);
}

std::vector<double> boundary_source(const ProblemSpec& o, const Problem& p, const Decomposition& d,
                                    MPI_Comm comm) {
  std::vector<double> bg;
  if (parse_boundary_spec(o.boundary).zero()) return bg;
  bg.assign(d.layout().padded_size(), 0.0);
  add_boundary_values(o, p, d, comm, bg);
  return bg;
}

void add_boundary_values(const ProblemSpec& o, const Problem& p, const Decomposition& d,
                         MPI_Comm comm, std::vector<double>& padded) {
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
  lift_boundary(p, d, g, padded);
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
                   MPI_Comm comm) {
  Buffer b(k, d.layout().padded_size());
  const FieldSpec src = source_field(o);
  // Heat's boundary values are not in its initial state (see boundary_source).
  if ((src.kind == FieldSpec::kModes || src.kind == FieldSpec::kRandom) &&
      (o.problem == ProblemKind::heat || !has_boundary_values(o))) {
    p.fill(k, d, ModeField::source, b.data());
  } else {
    std::vector<double> host;
    fill_fields(o, p, d, comm, host);
    k.copy(b.data(), host.data(), host.size(), Lane::interior);
  }
  k.synchronize(Lane::interior);
  return b;
}

}  // namespace halo3d
