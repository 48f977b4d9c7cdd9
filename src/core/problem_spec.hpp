// What is solved, as the library takes it: the grid, the equation and the fields it starts
// from. The command line's SolveOptions (src/app) is one, plus how to solve and what to
// write; an embedding code fills one directly.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "choices.hpp"
#include "decomposition.hpp"
#include "field_spec.hpp"

namespace halo3d {

struct ProblemSpec {
  Int3 grid{64, 64, 64};
  ProblemKind problem = ProblemKind::poisson;
  std::string rhs = "modes";   // modes | random | file:PATH.h5:/DATASET | expr:FORMULA
  std::string initial;         // heat's initial state, as --rhs (empty: --rhs gives it)
  std::string boundary = "0";  // VALUE | x0=V,x1=V,... | expr:FORMULA | file:PATH.h5:/DATASET
  std::vector<Int3> modes{{1, 1, 1}};
  // The operator: -lap u + shift u on the box [0,LX]x[0,LY]x[0,LZ] (heat: u_t = alpha (lap u
  // - shift u)). NX interior points per axis at x_i = (i+1) LX/(NX+1).
  std::array<double, 3> box{1.0, 1.0, 1.0};
  double shift = 0.0;
  // A variable shift: sigma >= 0 at the points as expr:FORMULA or file:PATH.h5:/DATASET
  // (--coefficient's forms, [NZ+2][NY+2][NX+2]); empty: the constant `shift`. It runs as a
  // variable operator (k = 1's face weights when --coefficient is 1), sigma_c on each
  // point's diagonal.
  std::string shift_field;
  // k in -div(k grad u) (heat: u_t = alpha div(k grad u)), at the points and the boundary
  // layer: "1" (the Laplacian), a constant > 0, expr:FORMULA or file:PATH.h5:/DATASET
  // ([NZ+2][NY+2][NX+2]). Anything but "1" runs as a variable coefficient.
  std::string coefficient = "1";
  // Per face (--bc FACE=KIND): Dirichlet (the default), periodic (both faces of an axis: the
  // N points sit at x_i = i L/N, h = L/N, and the ghosts wrap) or Neumann (--boundary gives
  // the outward flux k du/dn there; the axis is node-centred: point i at (i + [low face
  // Dirichlet]) h, h = L/(N - 1 + [low Dirichlet] + [high Dirichlet]); see intervals()).
  FaceKinds bc{};
  std::uint64_t seed = 1;
  long steps = 100;    // heat
  double alpha = 1.0;  // heat diffusivity
  double dt = 0.0;     // heat; 0 = 0.9 of the stability limit
  // heat: explicit (Euler) | implicit (backward Euler) | crank-nicolson
  TimeScheme time_scheme = TimeScheme::explicit_;
};

// Refuses (BadInput, naming --box or --shift) a box side that is not a finite number > 0,
// a spacing whose 1/h^2 is not a finite normal number, and a shift that is not finite and >= 0.
void check_operator(const ProblemSpec& p);
// --bc FACE=KIND,... (FACE x0,x1,y0,y1,z0,z1 or x,y,z; KIND dirichlet, periodic or neumann)
// as per-face kinds; BadInput for a malformed item or a periodic axis with one face only.
FaceKinds parse_bc(const std::string& text);
// The kinds as --bc takes them ("dirichlet", or "x=periodic,y0=neumann,z=neumann").
std::string bc_text(const FaceKinds& bc);
// Periodic axes as face kinds (every other face Dirichlet).
FaceKinds periodic_bc(const Periodic& axes);
// The spec's periodic axes, and its Neumann faces as a mask (bit 2 axis + side).
Periodic periodic_axes(const ProblemSpec& p);
int neumann_mask(const ProblemSpec& p);
bool has_neumann(const ProblemSpec& p);
// The intervals of axis a (ops::axis_intervals: N + 1 between Dirichlet faces, N periodic,
// N - 1 between Neumann faces) and the position of point 0 in them (ops::axis_first).
int intervals(const ProblemSpec& p, int a);
int first_point(const ProblemSpec& p, int a);
// Whether no face is Dirichlet (every face periodic or Neumann): with no shift, A 1 = 0.
bool no_dirichlet_face(const ProblemSpec& p);
// Poisson with no Dirichlet face and no shift (neither a constant one nor a field): A 1 = 0,
// solved as the singular case (the source's mean removed, the zero-mean answer). A variable
// shift is nonsingular where sigma > 0 somewhere (SolveSession refuses sigma = 0 everywhere).
bool singular_operator(const ProblemSpec& p);
// Whether the shift is carried per point (sigma): a variable one, or a constant one on a grid
// with a Neumann face (scaled by the control volume's fraction V_p there).
bool point_shift(const ProblemSpec& p);
// Whether the operator has a variable coefficient (--coefficient other than "1").
bool variable_coefficient(const ProblemSpec& p);
// Whether the shift is a field (shift_field given).
bool variable_shift(const ProblemSpec& p);
// Any of these or a Neumann face: the operator runs with face weights (and sigma per point
// where point_shift).
bool variable_operator(const ProblemSpec& p);
// Sets --shift from its text: a constant (>= 0) into `shift`, expr:/file: into
// `shift_field` (shift 0). BadInput naming --shift for a malformed one.
void set_shift(ProblemSpec& p, const std::string& spec);
// The operator's identity as text ("box=LX,LY,LZ shift=S", every digit, or shift=SPEC for a
// variable one, " coefficient=SPEC" for a variable k, " bc=..." with a periodic axis):
// checkpoints store it.
std::string operator_text(const ProblemSpec& p);

// theta of a time scheme (0 for explicit, 1 backward Euler, 1/2 Crank-Nicolson).
double time_scheme_theta(TimeScheme s);

// The spec of the field the problem starts from: heat's --initial when given, else --rhs.
const std::string& source_spec(const ProblemSpec& p);
// The option that gave it ("--initial" or "--rhs").
const char* source_option(const ProblemSpec& p);
// That spec parsed (BadInput, naming the option, for a malformed one).
FieldSpec source_field(const ProblemSpec& p);

}  // namespace halo3d
