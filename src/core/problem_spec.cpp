#include "problem_spec.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "checks.hpp"
#include "error.hpp"
#include "point_ops.hpp"

namespace halo3d {

void check_operator(const ProblemSpec& p) {
  const std::string box =
      exact_text(p.box[0]) + "," + exact_text(p.box[1]) + "," + exact_text(p.box[2]);
  for (int a = 0; a < 3; ++a) {
    if (!(p.box[a] > 0) || !std::isfinite(p.box[a]))
      throw BadInput("--box " + box + ": every side must be a finite number > 0");
    // The stencil's weights are 1/h^2: they must be finite and keep full precision.
    if ((p.bc[2 * a] == Bc::neumann || p.bc[2 * a + 1] == Bc::neumann) && p.grid[a] < 2)
      throw BadInput("--bc " + bc_text(p.bc) + ": a Neumann axis needs at least 2 points (" +
                     "xyz"[a] + " has " + std::to_string(p.grid[a]) + ")");
    const double h = p.box[a] / double(intervals(p, a)), c = 1.0 / (h * h);
    if (!std::isfinite(c) || !(c >= std::numeric_limits<double>::min()))
      throw BadInput("--box " + box + ": the spacing " + exact_text(h) + " along " + "xyz"[a] +
                     " gives a stencil weight 1/h^2 = " + exact_text(c) +
                     " outside double's normal range");
  }
  if (!(p.shift >= 0) || !std::isfinite(p.shift))
    throw BadInput("--shift " + exact_text(p.shift) + ": must be a finite number >= 0");
  if (variable_shift(p)) {
    parse_shift_spec(p.shift_field);  // malformed: BadInput naming --shift
    if (p.shift != 0)
      throw BadInput("--shift " + printable(p.shift_field, 80) + " and a constant shift " +
                     exact_text(p.shift) + ": give one of them");
  }
}

bool variable_coefficient(const ProblemSpec& p) { return p.coefficient != "1"; }
bool variable_shift(const ProblemSpec& p) { return !p.shift_field.empty(); }
bool variable_operator(const ProblemSpec& p) {
  return variable_coefficient(p) || variable_shift(p) || has_neumann(p);
}
bool point_shift(const ProblemSpec& p) {
  return variable_shift(p) || (has_neumann(p) && p.shift != 0);
}

FaceKinds periodic_bc(const Periodic& axes) {
  FaceKinds f{};
  for (int a = 0; a < 3; ++a)
    if (axes[a]) f[2 * a] = f[2 * a + 1] = Bc::periodic;
  return f;
}
Periodic periodic_axes(const ProblemSpec& p) { return periodic_axes(p.bc); }
int neumann_mask(const ProblemSpec& p) { return neumann_mask(p.bc); }
bool has_neumann(const ProblemSpec& p) { return neumann_mask(p) != 0; }
int intervals(const ProblemSpec& p, int a) {
  return ops::axis_intervals(p.grid[a], p.bc[2 * a] == Bc::periodic, p.bc[2 * a] == Bc::neumann,
                             p.bc[2 * a + 1] == Bc::neumann);
}
int first_point(const ProblemSpec& p, int a) {
  return ops::axis_first(p.bc[2 * a] == Bc::periodic, p.bc[2 * a] == Bc::neumann);
}

void set_shift(ProblemSpec& p, const std::string& spec) {
  const FieldSpec f = parse_shift_spec(spec);
  const bool constant = f.kind == FieldSpec::kFaces;
  p.shift = constant ? f.faces[0] : 0.0;
  p.shift_field = constant ? "" : spec;
}

namespace {

// One --bc item FACE=KIND into kind[axis][side] (1 dirichlet, 2 periodic, 3 neumann).
void parse_bc_item(const std::string& text, const std::string& item, int kind[3][2]) {
  const std::size_t eq = item.find('=');
  const std::string face = item.substr(0, eq),
                    what = eq == std::string::npos ? "" : item.substr(eq + 1);
  const bool axis_ok = (face.size() == 1 || face.size() == 2) && face[0] >= 'x' && face[0] <= 'z' &&
                       (face.size() == 1 || face[1] == '0' || face[1] == '1');
  if (eq == std::string::npos || !axis_ok ||
      (what != "dirichlet" && what != "periodic" && what != "neumann"))
    throw BadInput("--bc " + text + ": '" + item +
                   "' is not FACE=KIND (FACE x0,x1,y0,y1,z0,z1 or x,y,z; KIND dirichlet, "
                   "periodic or neumann)");
  const int a = face[0] - 'x', k = what == "periodic" ? 2 : what == "neumann" ? 3 : 1;
  if (face.size() == 1 || face[1] == '0') kind[a][0] = k;
  if (face.size() == 1 || face[1] == '1') kind[a][1] = k;
}

}  // namespace

FaceKinds parse_bc(const std::string& text) {
  if (text.empty() || text == "dirichlet") return FaceKinds{};  // the default: every face
  int kind[3][2] = {};  // per face: 0 not named, 1 dirichlet, 2 periodic, 3 neumann
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    parse_bc_item(text, text.substr(at, end - at), kind);
    at = end + 1;
  }
  FaceKinds bc{};
  for (int a = 0; a < 3; ++a) {
    const bool p0 = kind[a][0] == 2, p1 = kind[a][1] == 2;
    if (p0 != p1)
      throw BadInput("--bc " + text + ": periodic needs both faces of axis " + "xyz"[a] + " (" +
                     "xyz"[a] + "=periodic)");
    for (int side = 0; side < 2; ++side)
      bc[2 * a + side] = kind[a][side] == 2   ? Bc::periodic
                         : kind[a][side] == 3 ? Bc::neumann
                                              : Bc::dirichlet;
  }
  return bc;
}

std::string bc_text(const FaceKinds& bc) {
  // An axis whose two faces agree is named once (x=periodic), as before Neumann faces came:
  // the identity text of a periodic run's checkpoint is unchanged.
  std::string s;
  const auto add = [&s](const std::string& item) { s += (s.empty() ? "" : ",") + item; };
  for (int a = 0; a < 3; ++a) {
    const Bc lo = bc[2 * a], hi = bc[2 * a + 1];
    const std::string axis(1, "xyz"[a]);
    if (lo == hi && lo != Bc::dirichlet)
      add(axis + (lo == Bc::periodic ? "=periodic" : "=neumann"));
    else
      for (int side = 0; side < 2; ++side)
        if (bc[2 * a + side] == Bc::neumann) add(axis + char('0' + side) + "=neumann");
  }
  return s.empty() ? "dirichlet" : s;
}

bool no_dirichlet_face(const ProblemSpec& p) {
  for (const Bc b : p.bc)
    if (b == Bc::dirichlet) return false;
  return true;
}

bool singular_operator(const ProblemSpec& p) {
  return no_dirichlet_face(p) && p.shift == 0 && !variable_shift(p) &&
         p.problem != ProblemKind::heat;
}

std::string operator_text(const ProblemSpec& p) {
  return "box=" + exact_text(p.box[0]) + "," + exact_text(p.box[1]) + "," + exact_text(p.box[2]) +
         " shift=" + (variable_shift(p) ? p.shift_field : exact_text(p.shift)) +
         (variable_coefficient(p) ? " coefficient=" + p.coefficient : "") +
         (bc_text(p.bc) != "dirichlet" ? " bc=" + bc_text(p.bc) : "");
}

double time_scheme_theta(TimeScheme s) {
  switch (s) {
    case TimeScheme::implicit:
      return 1.0;
    case TimeScheme::crank_nicolson:
      return 0.5;
    case TimeScheme::explicit_:
      break;
  }
  return 0.0;
}

const std::string& source_spec(const ProblemSpec& p) {
  return p.problem == ProblemKind::heat && !p.initial.empty() ? p.initial : p.rhs;
}
const char* source_option(const ProblemSpec& p) {
  return p.problem == ProblemKind::heat && !p.initial.empty() ? "--initial" : "--rhs";
}

FieldSpec source_field(const ProblemSpec& p) {
  return parse_source_spec(source_option(p), source_spec(p));
}

}  // namespace halo3d
