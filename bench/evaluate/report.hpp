// Output of the evaluation: the rows as CSV and JSON, and the Table 2 analog (each
// compressor at its topology-preserving bound) as CSV and Markdown.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "factz/status.hpp"
#include "harness.hpp"

namespace factz::eval {

/// The CSV header line (no newline); one column per Row member, in declaration order.
std::string csv_header();
std::string csv_line(const Row& r);
Status write_csv(const std::string& path, const std::vector<Row>& rows);
/// {"meta": {key: value, ...}, "rows": [{column: value, ...}, ...]}; meta values are
/// written as JSON strings, +-inf as +-1e999.
Status write_json(const std::string& path, const std::vector<Row>& rows,
                  const std::vector<std::pair<std::string, std::string>>& meta);

/// One line of the Table 2 analog for a (field, compressor, coder) of the bound sweep.
struct Table2Entry {
  std::string field, compressor, coder;
  std::string kind;    ///< "loosest" (loosest zero-violation bound), "at" (at `at_bound`), "best" (highest ratio with zero violations)
  bool found = false;  ///< false: no bound of the sweep preserved every critical point (or `at` missing)
  Row row;             ///< the measurement chosen (when found)
  bool every_bound_preserves = false;  ///< zero violations at every bound swept
  int bounds_swept = 0;
};

/// The topology-preserving bound per (field, compressor, coder) of the "bounds" sweep:
/// rows sorted by bound from loosest to tightest, the first with zero violations
/// ("loosest"). For FaCTz-B and FaCTz-S also the row at REL `at_bound` ("at") and the
/// zero-violation row of highest ratio ("best"). Entries follow the order of first
/// appearance of (field, compressor, coder) in `rows`.
std::vector<Table2Entry> table2(const std::vector<Row>& rows, double at_bound = 1e-2);
Status write_table2_csv(const std::string& path, const std::vector<Table2Entry>& t);
Status write_table2_markdown(const std::string& path, const std::vector<Table2Entry>& t);

}  // namespace factz::eval
