// The input machinery shared by the fields a run reads (fields.cpp: --rhs, --initial,
// --boundary; coefficient.cpp: --coefficient): formulas, coordinates, HDF5 file fields and
// collective agreement on errors. Internal to src/problem.
#pragma once
#include <mpi.h>
#include <muParser.h>

#include <functional>
#include <string>
#include <vector>

#include "checks.hpp"
#include "decomposition.hpp"
#include "errors.hpp"
#include "field_spec.hpp"
#include "hdf5_io.hpp"

namespace halo3d {

// v with every digit ("NaN" for NaNs).
std::string number(double v);

// A formula in x, y, z (muparser, with pi and e); the variables are bound to members, so a
// Formula stays where it was made.
class Formula {
 public:
  Formula(const std::string& option, const std::string& text) : option_(option), text_(text) {
    try {
      p_.DefineConst("pi", 3.14159265358979323846);
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

// Point g (global; ghosts -1 and N) of axis a of d's grid on [0, L]: between Dirichlet faces
// at L (g+1)/(N+1), 0 and L exactly on the boundary. Periodic: at L g/N, a ghost at the point
// it wraps to. With a Neumann face (node-centred, ops::axis_first and axis_intervals): at
// L (g + first)/m, and a ghost beyond a Neumann face at its boundary node (on the face).
double coord(const Decomposition& d, int a, int g, double L);

// Every rank throws the same BadInput when one rank's `why` is non-empty.
void agree(const std::string& why, MPI_Comm comm);

// Collective: opens file field `f` and checks that it can be read as the grid's field
// ([NZ][NY][NX], or with ghost = 1 [NZ+2][NY+2][NX+2]); BadInput/IoError naming `what`.
H5Id open_file_field(const std::string& what, const FieldSpec& f, const Decomposition& d, int ghost,
                     MPI_Comm comm);

// Collective: reads file field `f` into the padded array: this rank's box ([NZ][NY][NX]), or
// its box with the ghost layer around it (ghost = 1: [NZ+2][NY+2][NX+2]). BadInput/IoError
// naming `option` when the file, the dataset or its shape does not fit.
void read_file_field(const std::string& option, const FieldSpec& f, const Decomposition& d,
                     int ghost, MPI_Comm comm, std::vector<double>& padded);

// Calls fn(i, j, k) for every ghost cell of the local box that lies on the domain's
// boundary (faces only: the 7-point stencil never reads edges or corners).
void for_boundary_ghosts(const Decomposition& d, const std::function<void(int, int, int)>& fn);

}  // namespace halo3d
