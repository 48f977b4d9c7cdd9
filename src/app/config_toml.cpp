#include "config_toml.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "checks.hpp"
#include "errors.hpp"

namespace halo3d {
namespace {

std::string where(const std::string& shown, const toml::source_position& at) {
  return "--config " + shown + ":" + std::to_string(at.line) + ":" + std::to_string(at.column);
}

std::string line_of(const std::string& text, long line) {
  std::istringstream in(text);
  std::string s;
  for (long i = 0; i < line && std::getline(in, s); ++i) {
  }
  return s;
}

// A float as the file wrote it (underscores dropped), so the option's own checks see what
// the user typed: "1e-400" must be refused as an underflow, not arrive as 0. The source text
// is used only where it reads back to the same double; otherwise the value, exactly.
std::string float_text(const toml::value<double>& v, const std::string& text) {
  const auto& at = v.source();
  std::string raw;
  if (at.begin.line == at.end.line && at.end.column > at.begin.column) {
    const std::string line = line_of(text, long(at.begin.line));
    if (std::size_t(at.end.column - 1) <= line.size())
      raw = line.substr(at.begin.column - 1, at.end.column - at.begin.column);
    raw.erase(std::remove(raw.begin(), raw.end(), '_'), raw.end());
  }
  const double x = v.get();
  if (!raw.empty()) {
    char* end = nullptr;
    const double back = std::strtod(raw.c_str(), &end);
    // NaN never compares equal: "nan" is passed as written, for the option to refuse.
    if (end && *end == '\0' && (back == x || (back != back && x != x))) return raw;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

// One scalar as command-line text; arrays of arrays, tables and dates are refused.
std::string scalar_text(const toml::node& n, const std::string& text, const std::string& key,
                        const std::string& shown) {
  if (auto s = n.as_string()) return s->get();
  if (auto i = n.as_integer()) return std::to_string(i->get());
  if (auto f = n.as_floating_point()) return float_text(*f, text);
  if (auto b = n.as_boolean()) return b->get() ? "true" : "false";
  throw BadInput(where(shown, n.source().begin) + ": key '" + printable(key) +
                 "': expected a string, number, boolean or an array of them");
}

}  // namespace

std::vector<ConfigEntry> parse_config_toml(const std::string& text, const std::string& shown) {
  toml::table table;
  try {
    table = toml::parse(std::string_view(text), std::string_view(shown));
  } catch (const toml::parse_error& e) {
    throw BadInput(where(shown, e.source().begin) + ": " + printable(std::string(e.description())));
  }
  std::vector<ConfigEntry> entries;
  for (auto&& [k, node] : table) {
    ConfigEntry e;
    e.key = std::string(k.str());
    e.line = long(k.source().begin.line);
    e.column = long(k.source().begin.column);
    if (node.is_table()) {
      e.section = true;
      entries.push_back(std::move(e));
      continue;
    }
    if (auto a = node.as_array()) {
      for (const auto& el : *a) e.values.push_back(scalar_text(el, text, e.key, shown));
    } else {
      e.values.push_back(scalar_text(node, text, e.key, shown));
    }
    entries.push_back(std::move(e));
  }
  // toml::table is ordered by key; file order makes the first error the first in the file.
  std::stable_sort(entries.begin(), entries.end(), [](const ConfigEntry& a, const ConfigEntry& b) {
    return a.line != b.line ? a.line < b.line : a.column < b.column;
  });
  return entries;
}

}  // namespace halo3d
