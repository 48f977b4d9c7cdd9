// The field options parsed: --rhs / --initial (modes, random, file:PATH.h5:/DATASET,
// expr:FORMULA) and --boundary (VALUE, x0=V,x1=V,..., expr:FORMULA, file:PATH.h5:/DATASET).
// The text as given stays in SolveOptions (reports, checkpoint identity); what it means is
// read here, once, and compared by kind everywhere else.
#pragma once
#include <array>
#include <string>

namespace halo3d {

inline constexpr const char* kFaceNames[6] = {"x0", "x1", "y0", "y1", "z0", "z1"};

struct FieldSpec {
  enum Kind { kModes, kRandom, kFile, kExpr, kFaces };
  Kind kind = kModes;
  std::string text;               // as given
  std::string file, dataset;      // kFile
  std::string expr;               // kExpr
  std::array<double, 6> faces{};  // kFaces: x0, x1, y0, y1, z0, z1 (a constant: all six)
  bool zero() const;              // a boundary that is zero everywhere (kFaces, all 0)
};

// `option` (e.g. "--rhs") names the option in errors (BadInput, one line).
FieldSpec parse_source_spec(const std::string& option, const std::string& s);
FieldSpec parse_boundary_spec(const std::string& s);
// --coefficient: file:, expr:, or a constant (kFaces, all six the value) that must be > 0.
FieldSpec parse_coefficient_spec(const std::string& s);
// --shift: the same forms; a constant must be >= 0.
FieldSpec parse_shift_spec(const std::string& s);

}  // namespace halo3d
