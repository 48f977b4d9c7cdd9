// What a checkpoint saves of a solver and restores into it: named vectors in backend memory
// and scalars. The solvers (src/solver's Method) implement it; checkpoints (checkpoint.hpp)
// see nothing else of them, so io sits below solver.
#pragma once
#include <string>
#include <vector>

#include "kernels.hpp"

namespace halo3d {

// A named vector the method needs to continue (checkpointed and restored).
struct StateVector {
  std::string name;
  Buffer* buffer;
};

class Checkpointable {
 public:
  virtual ~Checkpointable() = default;
  // Vectors and scalars that, restored, make the next step() bitwise the same.
  virtual std::vector<StateVector> state() = 0;
  virtual std::vector<double> scalars() const = 0;
  virtual void set_scalars(const std::vector<double>& s) = 0;
  // Whether the run has a residual per iteration (its history; heat has none).
  virtual bool has_residual() const { return true; }
};

}  // namespace halo3d
