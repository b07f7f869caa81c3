// A small option parser for the factz command line (sz3/zfp-style letters such as
// `-2 NX NY`, `-i U -i V`, `-M REL 1e-2`), with generated help text.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace factz::cli {

struct OptionSpec {
  std::string name;        ///< e.g. "-2", "--json"
  int nargs;               ///< values that follow the flag (0 for a switch)
  std::string metavar;     ///< e.g. "NX NY"
  std::string help;
  bool repeatable = false;
  /// Values that may follow the nargs required ones, taken while the next token is not an
  /// option (`--blocks PX PY [PZ]`).
  int optional_nargs = 0;
};

struct Command {
  std::string name;
  std::string summary;
  std::string usage;
  std::vector<OptionSpec> options;
};

/// Parsed options: flag -> list of occurrences, each a list of values.
class Args {
 public:
  bool has(const std::string& flag) const { return values_.count(flag) > 0; }
  const std::vector<std::vector<std::string>>& all(const std::string& flag) const;
  /// First value of the last occurrence, or `fallback`.
  std::string get(const std::string& flag, const std::string& fallback = "") const;
  std::map<std::string, std::vector<std::vector<std::string>>> values_;
};

/// Parses argv (after the subcommand). Returns false and sets `error` on bad input.
bool parse(const Command& cmd, const std::vector<std::string>& argv, Args& out, std::string& error);
std::string help_text(const Command& cmd);

/// Strict numeric parsing: the whole token must be a number.
bool to_int64(const std::string& s, long long& out);
bool to_double(const std::string& s, double& out);

}  // namespace factz::cli
