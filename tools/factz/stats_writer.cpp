#include "stats_writer.hpp"

#include <iostream>
#include <sstream>

#include "common.hpp"

namespace factz::cli {

StatsWriter& StatsWriter::add(const std::string& key, std::string text, std::string json, In in) {
  entries_.push_back({key, std::move(text), std::move(json), in});
  return *this;
}

StatsWriter& StatsWriter::num(const std::string& key, double value, In in) {
  std::ostringstream os;
  os << value;
  return add(key, os.str(), json_number(value), in);
}

StatsWriter& StatsWriter::text(const std::string& key, const std::string& value, In in) {
  return add(key, value, "\"" + value + "\"", in);
}

StatsWriter& StatsWriter::flag(const std::string& key, bool value, In in) {
  return add(key, value ? "1" : "0", value ? "true" : "false", in);
}

StatsWriter& StatsWriter::json(const std::string& key, const std::string& value) {
  return add(key, "", value, In::json);
}

std::string StatsWriter::line() const {
  std::string out;
  for (const Entry& e : entries_) {
    if (e.in == In::json) continue;
    if (!out.empty()) out += ' ';
    out += e.key + '=' + e.text;
  }
  return out;
}

std::string StatsWriter::object() const {
  std::string out = "{";
  bool first = true;
  for (const Entry& e : entries_) {
    if (e.in == In::text) continue;
    out += (first ? "\"" : ", \"") + e.key + "\": " + e.json;
    first = false;
  }
  return out + "}";
}

void StatsWriter::print(bool json, bool text_to_stdout) const {
  const std::string s = (json ? object() : line()) + "\n";
  (json || text_to_stdout ? std::cout : std::cerr) << s;
}

}  // namespace factz::cli
