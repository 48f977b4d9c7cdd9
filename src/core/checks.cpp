#include "checks.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "errors.hpp"

namespace halo3d {

std::string exact_text(double v) {
  char buf[48];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string printable(const std::string& s, std::size_t max) {
  std::string out;
  for (const char ch : s) {
    if (out.size() >= max) {
      out += "...";
      break;
    }
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

bool parse_decimal(const std::string& s, double& v) {
  std::size_t i = 0;
  const auto digits = [&] {
    const std::size_t from = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    return i - from;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  std::size_t mantissa = digits();
  if (i < s.size() && s[i] == '.') {
    ++i;
    mantissa += digits();
  }
  if (mantissa == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  if (i != s.size()) return false;
  v = std::strtod(s.c_str(), nullptr);
  return true;
}

bool underflows(const std::string& text, double v) {
  if (std::abs(v) >= std::numeric_limits<double>::min()) return false;
  const std::size_t exp = text.find_first_of("eE");
  return text.substr(0, exp).find_first_of("123456789") != std::string::npos;
}

bool all_finite(const Layout& l, const std::vector<double>& padded, MPI_Comm comm) {
  int ok = 1;
  for (int k = 0; k < l.nz && ok; ++k)
    for (int j = 0; j < l.ny && ok; ++j)
      for (int i = 0; i < l.nx; ++i)
        if (!std::isfinite(padded[l.at(i, j, k)])) {
          ok = 0;
          break;
        }
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm));
  return ok == 1;
}

bool all_finite(Kernels& k, const Layout& l, const double* u, MPI_Comm comm) {
  // The largest magnitude is finite exactly when every value is (NaN and Inf propagate).
  int ok = std::isfinite(k.max_abs(l, u)) ? 1 : 0;
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm));
  return ok == 1;
}

bool valid_utf8(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    // The sequence's length and the range of its second byte (RFC 3629, table 3-7).
    int n = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c < 0x80)
      n = 0;
    else if (c >= 0xC2 && c <= 0xDF)
      n = 1;
    else if (c >= 0xE0 && c <= 0xEF)
      n = 2, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4)
      n = 3, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else
      return false;
    if (i + n >= s.size()) return false;  // the sequence is cut off
    for (int k = 1; k <= n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return false;
    }
    i += n + 1;
  }
  return true;
}

}  // namespace halo3d
