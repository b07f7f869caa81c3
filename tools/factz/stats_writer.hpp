// The one writer of the CLI's statistics: an ordered list of (key, value) that a subcommand
// fills once and prints either as one `key=value` line (values as a C++ stream prints them:
// integers in full, floating point with 6 significant digits) or, with --json, as one JSON
// object (json_number: 17 significant digits, inf as +-1e999, NaN as null). Scripts and
// tests parse both forms, so their text is part of the CLI's interface.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <vector>

namespace factz::cli {

class StatsWriter {
 public:
  /// Which rendering shows an entry (some commands show a value differently in each, e.g.
  /// max_abs_error as a JSON array and as max_abs_error_u / max_abs_error_v).
  enum class In { both, json, text };

  /// An integer.
  template <std::integral I>
    requires(!std::same_as<I, bool>)
  StatsWriter& count(const std::string& key, I value, In in = In::both) {
    return add(key, std::to_string(value), std::to_string(value), in);
  }
  /// A floating-point number.
  StatsWriter& num(const std::string& key, double value, In in = In::both);
  /// A string (quoted in JSON).
  StatsWriter& text(const std::string& key, const std::string& value, In in = In::both);
  /// A boolean: 1 or 0 in the line, true or false in JSON.
  StatsWriter& flag(const std::string& key, bool value, In in = In::both);
  /// A JSON value the caller rendered (an array or a nested object); JSON only.
  StatsWriter& json(const std::string& key, const std::string& value);

  /// `key=value key=value ...` (no newline).
  std::string line() const;
  /// `{"key": value, ...}` (no newline; `{}` when empty).
  std::string object() const;
  /// The JSON object on stdout with `json`, otherwise the line on stdout or stderr
  /// (`text_to_stdout`); each with a newline, in one write.
  void print(bool json, bool text_to_stdout) const;

 private:
  struct Entry {
    std::string key, text, json;
    In in;
  };
  StatsWriter& add(const std::string& key, std::string text, std::string json, In in);
  std::vector<Entry> entries_;
};

}  // namespace factz::cli
