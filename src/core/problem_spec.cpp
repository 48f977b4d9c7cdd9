#include "problem_spec.hpp"

#include <cmath>
#include <limits>

#include "checks.hpp"
#include "error.hpp"

namespace halo3d {

void check_operator(const ProblemSpec& p) {
  const std::string box =
      exact_text(p.box[0]) + "," + exact_text(p.box[1]) + "," + exact_text(p.box[2]);
  for (int a = 0; a < 3; ++a) {
    if (!(p.box[a] > 0) || !std::isfinite(p.box[a]))
      throw BadInput("--box " + box + ": every side must be a finite number > 0");
    // The stencil's weights are 1/h^2: they must be finite and keep full precision.
    const double h = p.box[a] / (double(p.grid[a]) + 1.0), c = 1.0 / (h * h);
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
  return variable_coefficient(p) || variable_shift(p);
}

void set_shift(ProblemSpec& p, const std::string& spec) {
  const FieldSpec f = parse_shift_spec(spec);
  const bool constant = f.kind == FieldSpec::kFaces;
  p.shift = constant ? f.faces[0] : 0.0;
  p.shift_field = constant ? "" : spec;
}

std::string operator_text(const ProblemSpec& p) {
  return "box=" + exact_text(p.box[0]) + "," + exact_text(p.box[1]) + "," + exact_text(p.box[2]) +
         " shift=" + (variable_shift(p) ? p.shift_field : exact_text(p.shift)) +
         (variable_coefficient(p) ? " coefficient=" + p.coefficient : "");
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
