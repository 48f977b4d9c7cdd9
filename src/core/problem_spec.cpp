#include "problem_spec.hpp"

namespace halo3d {

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
