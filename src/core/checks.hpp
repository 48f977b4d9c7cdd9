// Small checks shared by the commands: text safe to print in a one-line error, and
// whether a distributed field holds only finite numbers.
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

#include "kernels.hpp"
#include "layout.hpp"

namespace halo3d {

// `s` with bytes that are not printable ASCII (control characters, newlines, raw binary)
// escaped as \xNN (idempotent: backslashes are kept as they are), cut to `max` characters (with
// "...") so that an error stays one line.
std::string printable(const std::string& s, std::size_t max = 120);
// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF): what may be stored as UTF-8 text for readers that decode it.
bool valid_utf8(const std::string& s);

// The shortest of %.15g..%.17g that reads back as v: messages and identities (checkpoints)
// show values exactly ("NaN", "inf" for those).
std::string exact_text(double v);

// A decimal number, [+-]digits[.digits][e[+-]digits], read into v (hexadecimal, inf, nan
// and anything else: false). v may be 0 or subnormal for a text that is not: see underflows.
bool parse_decimal(const std::string& s, double& v);
// Whether the decimal `text`, read as v, names a nonzero number below the smallest normal
// double (2.2e-308) in magnitude, which double cannot hold (1e-400 reads as 0).
bool underflows(const std::string& text, double v);

// Whether every interior value of every rank's padded field is finite (one MPI_Allreduce;
// every rank gets the same answer).
bool all_finite(const Layout& l, const std::vector<double>& padded, MPI_Comm comm);
// The same for a field in backend memory, checked where it lives (no download).
bool all_finite(Kernels& k, const Layout& l, const double* u, MPI_Comm comm);

}  // namespace halo3d
