#include "field_spec.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "checks.hpp"
#include "errors.hpp"

namespace halo3d {
namespace {

// A finite decimal number, or false; BadInput naming `spec` for a nonzero value that
// underflows (1e-400 would silently be 0).
bool parse_number(const std::string& s, double& v, const std::string& spec,
                  const char* option = "--boundary") {
  if (!parse_decimal(s, v) || !std::isfinite(v)) return false;
  if (underflows(s, v))
    throw BadInput(std::string(option) + " " + printable(spec, 80) + ": " + printable(s, 40) +
                   " is below the smallest normal double (2.2e-308) in magnitude and would "
                   "underflow; give 0 or a larger value");
  return true;
}

// "file:PATH.h5:/DATASET" (the dataset is what follows the last ":/"), or false when s
// does not start with "file:"; BadInput naming `option` when the rest is not PATH:/DATASET.
bool parse_file(const std::string& option, const std::string& s, FieldSpec& f) {
  if (s.rfind("file:", 0) != 0) return false;
  const std::string rest = s.substr(5);
  const auto cut = rest.rfind(":/");
  if (cut == std::string::npos || cut == 0 || cut + 2 >= rest.size())
    throw BadInput(option + " " + printable(s, 80) + ": expected file:PATH.h5:/DATASET");
  f.kind = FieldSpec::kFile;
  f.file = rest.substr(0, cut);
  f.dataset = rest.substr(cut + 1);
  return true;
}

// "expr:FORMULA", or false when s does not start with "expr:"; BadInput naming `option`
// when the formula is empty.
bool parse_expr(const std::string& option, const std::string& s, FieldSpec& f) {
  if (s.rfind("expr:", 0) != 0) return false;
  f.kind = FieldSpec::kExpr;
  f.expr = s.substr(5);
  if (f.expr.find_first_not_of(" \t") == std::string::npos)
    throw BadInput(option + " expr: the formula is empty");
  return true;
}

}  // namespace

bool FieldSpec::zero() const {
  if (kind != kFaces) return false;
  for (double v : faces)
    if (v != 0) return false;
  return true;
}

FieldSpec parse_source_spec(const std::string& option, const std::string& s) {
  FieldSpec f;
  f.text = s;
  if (s == "modes") {
    f.kind = FieldSpec::kModes;
  } else if (s == "random") {
    f.kind = FieldSpec::kRandom;
  } else if (!parse_file(option, s, f) && !parse_expr(option, s, f)) {
    throw BadInput(option + " " + printable(s, 80) +
                   ": expected modes, random, file:PATH.h5:/DATASET or expr:FORMULA");
  }
  return f;
}

namespace {

// A field of the operator at the points (--coefficient's k > 0, --shift's sigma >= 0):
// file:, expr:, or a constant (kFaces, all six the value) with that sign.
FieldSpec parse_point_spec(const char* option, const std::string& s, bool zero_ok) {
  FieldSpec f;
  f.text = s;
  if (parse_file(option, s, f) || parse_expr(option, s, f)) return f;
  f.kind = FieldSpec::kFaces;
  double v = 0;
  if (!parse_number(s, v, s, option))
    throw BadInput(std::string(option) + " " + printable(s, 80) +
                   ": expected a number, expr:FORMULA or file:PATH.h5:/DATASET");
  if (!(zero_ok ? v >= 0 : v > 0) || !std::isfinite(v))
    throw BadInput(std::string(option) + " " + printable(s, 80) + ": must be a finite number " +
                   (zero_ok ? ">= 0" : "> 0"));
  f.faces.fill(v);
  return f;
}

}  // namespace

FieldSpec parse_coefficient_spec(const std::string& s) {
  return parse_point_spec("--coefficient", s, false);
}

FieldSpec parse_shift_spec(const std::string& s) { return parse_point_spec("--shift", s, true); }

FieldSpec parse_boundary_spec(const std::string& s) {
  FieldSpec f;
  f.text = s;
  if (parse_file("--boundary", s, f) || parse_expr("--boundary", s, f)) return f;
  f.kind = FieldSpec::kFaces;
  double v = 0;
  if (parse_number(s, v, s)) {
    f.faces.fill(v);
  } else if (s.find('=') != std::string::npos) {
    bool seen[6] = {};
    std::size_t start = 0;
    while (true) {
      const std::size_t end = s.find(',', start);
      const std::string item = s.substr(start, end == std::string::npos ? end : end - start);
      const auto eq = item.find('=');
      int face = -1;
      for (int i = 0; i < 6 && eq != std::string::npos; ++i)
        if (item.compare(0, eq, kFaceNames[i]) == 0 && eq == 2) face = i;
      if (face < 0 || !parse_number(item.substr(eq + 1), v, s))
        throw BadInput("--boundary " + printable(s, 80) + ": '" + printable(item, 40) +
                       "' is not FACE=VALUE with FACE one of x0,x1,y0,y1,z0,z1 and VALUE a "
                       "finite number");
      if (seen[face])
        throw BadInput("--boundary " + printable(s, 80) + ": face " + kFaceNames[face] +
                       " given twice");
      seen[face] = true;
      f.faces[face] = v;
      if (end == std::string::npos) break;
      start = end + 1;
    }
  } else {
    throw BadInput("--boundary " + printable(s, 80) +
                   ": expected a finite number, x0=V,x1=V,y0=V,y1=V,z0=V,z1=V (faces left out "
                   "are 0), expr:FORMULA or file:PATH.h5:/DATASET");
  }
  return f;
}

}  // namespace halo3d
