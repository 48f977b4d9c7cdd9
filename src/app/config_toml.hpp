#pragma once
// --config files read with a conforming TOML parser (toml++), so quoting, comments, escapes
// and duplicate keys mean what TOML says, and every error names file:line:column.
#include <string>
#include <vector>

namespace halo3d {

// One top-level key of a config file, its values as command-line text (an array gives one
// text per element), and where it stands in the file.
struct ConfigEntry {
  std::string key;
  std::vector<std::string> values;
  long line = 0, column = 0;
  bool section = false;  // a [table]: no option takes one
};

// Parses `text` (the contents of `shown`, the file's name as printed) into its keys, in file
// order. Throws BadInput, one line "--config FILE:LINE:COLUMN: why", on a TOML error, a table
// (sections are not options), a nested array or a date/time value.
std::vector<ConfigEntry> parse_config_toml(const std::string& text, const std::string& shown);

}  // namespace halo3d
