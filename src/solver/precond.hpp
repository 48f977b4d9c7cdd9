// Preconditioners for CG: z = M^{-1} r with M symmetric positive definite and fixed (the
// same linear operator at every iteration), so the textbook PCG recurrences hold.
#pragma once
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels.hpp"

namespace halo3d {

class Preconditioner {
 public:
  virtual ~Preconditioner() = default;
  virtual std::string name() const = 0;
  // out = M^{-1} in; slot += in.out (the kernels' reduction slot, as Kernels::dot; PCG's r.z
  // comes from the preconditioner's last sweep instead of another pass). `in` is only read
  // (its ghost layers may be refreshed). `scratch`, if given, is a vector of in's layout
  // that the caller does not need across the call (CG's A p), with zero ghosts on the
  // domain's boundary (never written, as every vector's): the preconditioner may keep work
  // there instead of in memory of its own (null: its own, allocated at first need).
  virtual void apply(double* in, double* out, int dot_slot = kNoReduction,
                     double* scratch = nullptr) = 0;
  // Mixed precision, where M^{-1} runs in float: the float vector apply_float() reads its
  // input from, so that PCG writes r there, rounded, in its update's pass (null: no float
  // path; apply() only). Fixed for the preconditioner's life.
  virtual float* float_input() { return nullptr; }
  // z = M^{-1} r from r rounded to float, which the caller wrote to float_input(); z is
  // returned in float (valid until the next call; it may lie in `scratch`, as apply's) and
  // slot += r.z with z widened, as apply() would give it: the same bits, without a double z.
  // `r` is only read, for r.z.
  virtual const float* apply_float(const double* /*r*/, int /*dot_slot*/, double* /*scratch*/) {
    throw std::logic_error("apply_float without a float input");
  }
  // A first iterate x for A x = b that CG starts from instead of 0 (multigrid's --fmg), or
  // false (x untouched). b is only read (its ghost layers may be refreshed); `scratch` as
  // apply's. Collective.
  virtual bool first_iterate(double* /*b*/, double* /*x*/, double* /*scratch*/ = nullptr) {
    return false;
  }
  // Global bytes moved through device memory by one apply (for GB/s), and by one
  // apply_float.
  virtual double bytes_per_apply() const = 0;
  virtual double bytes_per_float_apply() const { return bytes_per_apply(); }
};

}  // namespace halo3d
