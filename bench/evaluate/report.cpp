#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace factz::eval {
namespace {

std::string num(double x) {
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (std::isnan(x)) return "nan";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

std::string json_num(double x) {
  if (std::isinf(x)) return x > 0 ? "1e999" : "-1e999";
  if (std::isnan(x)) return "null";
  return num(x);
}

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\';
    if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      o += buf;
      continue;
    }
    o += ch;
  }
  return o + "\"";
}

// The columns once: name, value as CSV text, value as JSON text.
struct Column {
  const char* name;
  std::string csv;
  std::string json;
};

std::vector<Column> columns(const Row& r) {
  auto i = [](int64_t x) { return std::to_string(x); };
  auto s = [](const std::string& x) { return Column{nullptr, x, json_string(x)}; };
  auto d = [](double x) { return Column{nullptr, num(x), json_num(x)}; };
  auto n = [&](int64_t x) { return Column{nullptr, i(x), i(x)}; };
  std::vector<std::pair<const char*, Column>> c = {
      {"sweep", s(r.sweep)}, {"field", s(r.field)}, {"nx", n(r.nx)}, {"ny", n(r.ny)},
      {"compressor", s(r.compressor)}, {"coder", s(r.coder)}, {"bound", d(r.bound)}, {"eb_abs", d(r.eb_abs)},
      {"raw_bytes", n(r.raw_bytes)}, {"compressed_bytes", n(r.compressed_bytes)}, {"ratio", d(r.ratio)},
      {"bit_rate", d(r.bit_rate)}, {"psnr", d(r.psnr)}, {"max_error", d(r.max_error)}, {"nrmse", d(r.nrmse)},
      {"cp_original", n(r.cp_original)}, {"cp_decompressed", n(r.cp_decompressed)}, {"lost", n(r.lost)},
      {"spurious", n(r.spurious)}, {"type_changed", n(r.type_changed)}, {"violations", n(r.violations())},
      {"compress_mbps", d(r.compress_mbps)}, {"decompress_mbps", d(r.decompress_mbps)}, {"repeats", n(r.repeats)},
      {"bound_respected", Column{nullptr, r.bound_respected ? "1" : "0", r.bound_respected ? "true" : "false"}},
  };
  std::vector<Column> out;
  for (auto& [name, col] : c) out.push_back(Column{name, col.csv, col.json});
  return out;
}

Status write_text(const std::string& path, const std::string& text) {
  std::ofstream os(path, std::ios::binary);
  if (!os) return io_error("cannot open '" + path + "' for writing");
  os << text;
  os.close();
  return os ? Status::Ok() : io_error("cannot write '" + path + "'");
}

std::string ratio_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", x);
  return buf;
}

std::string short_num(double x, const char* fmt = "%.3g") {
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

}  // namespace

std::string csv_header() {
  std::string h;
  for (const auto& c : columns(Row{})) {
    if (!h.empty()) h += ',';
    h += c.name;
  }
  return h;
}

std::string csv_line(const Row& r) {
  std::string l;
  bool first = true;
  for (const auto& c : columns(r)) {
    l += (first ? "" : ",") + c.csv;  // names hold no commas: fields come from file names
    first = false;
  }
  return l;
}

Status write_csv(const std::string& path, const std::vector<Row>& rows) {
  std::string t = csv_header() + "\n";
  for (const auto& r : rows) t += csv_line(r) + "\n";
  return write_text(path, t);
}

Status write_json(const std::string& path, const std::vector<Row>& rows,
                  const std::vector<std::pair<std::string, std::string>>& meta) {
  std::ostringstream os;
  os << "{\n  \"meta\": {";
  for (size_t k = 0; k < meta.size(); ++k)
    os << (k ? ", " : "") << json_string(meta[k].first) << ": " << json_string(meta[k].second);
  os << "},\n  \"rows\": [";
  for (size_t k = 0; k < rows.size(); ++k) {
    os << (k ? ",\n    {" : "\n    {");
    bool first = true;
    for (const auto& c : columns(rows[k])) {
      os << (first ? "" : ", ") << json_string(c.name) << ": " << c.json;
      first = false;
    }
    os << "}";
  }
  os << "\n  ]\n}\n";
  return write_text(path, os.str());
}

std::vector<Table2Entry> table2(const std::vector<Row>& rows, double at_bound) {
  std::vector<std::vector<const Row*>> groups;
  std::map<std::string, size_t> index;
  for (const auto& r : rows) {
    if (r.sweep != "bounds") continue;
    const std::string key = r.field + '\n' + r.compressor + '\n' + r.coder;
    auto [it, fresh] = index.emplace(key, groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(&r);
  }
  std::vector<Table2Entry> out;
  for (auto& g : groups) {
    std::stable_sort(g.begin(), g.end(), [](const Row* a, const Row* b) { return a->bound > b->bound; });
    Table2Entry base;
    base.field = g[0]->field;
    base.compressor = g[0]->compressor;
    base.coder = g[0]->coder;
    base.bounds_swept = int(g.size());
    base.every_bound_preserves = std::all_of(g.begin(), g.end(), [](const Row* r) { return r->violations() == 0; });
    Table2Entry loosest = base;
    loosest.kind = "loosest";
    for (const Row* r : g)
      if (r->violations() == 0) {
        loosest.found = true;
        loosest.row = *r;
        break;
      }
    out.push_back(loosest);
    if (base.compressor != "factz-B" && base.compressor != "factz-S") continue;
    Table2Entry at = base;
    at.kind = "at";
    for (const Row* r : g)
      if (std::fabs(r->bound - at_bound) <= 1e-9 * at_bound) {
        at.found = true;
        at.row = *r;
      }
    out.push_back(at);
    Table2Entry best = base;
    best.kind = "best";
    for (const Row* r : g)
      if (r->violations() == 0 && (!best.found || r->ratio > best.row.ratio)) {
        best.found = true;
        best.row = *r;
      }
    out.push_back(best);
  }
  return out;
}

Status write_table2_csv(const std::string& path, const std::vector<Table2Entry>& t) {
  std::string s = "field,compressor,coder,kind,found,bound,eb_abs,ratio,bit_rate,psnr,violations,compress_mbps,decompress_mbps,every_bound_preserves,bounds_swept\n";
  for (const auto& e : t) {
    s += e.field + "," + e.compressor + "," + e.coder + "," + e.kind + "," + (e.found ? "1" : "0") + ",";
    if (e.found)
      s += num(e.row.bound) + "," + num(e.row.eb_abs) + "," + num(e.row.ratio) + "," + num(e.row.bit_rate) + "," +
           num(e.row.psnr) + "," + std::to_string(e.row.violations()) + "," + num(e.row.compress_mbps) + "," +
           num(e.row.decompress_mbps);
    else
      s += ",,,,,,,";
    s += std::string(",") + (e.every_bound_preserves ? "1" : "0") + "," + std::to_string(e.bounds_swept) + "\n";
  }
  return write_text(path, s);
}

Status write_table2_markdown(const std::string& path, const std::vector<Table2Entry>& t) {
  std::string s =
      "| field | compressor | setting | REL bound | ratio | PSNR (dB) | violations | comp. MB/s | decomp. MB/s | zero violations at every bound |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& e : t) {
    const std::string setting = e.kind == "loosest" ? "loosest preserving" : e.kind == "at" ? "at REL 1e-2" : "best ratio, preserving";
    const std::string who = e.compressor + (e.coder == "-" ? "" : " (" + e.coder + ")");
    s += "| " + e.field + " | " + who + " | " + setting + " | ";
    if (e.found)
      s += short_num(e.row.bound) + " | " + ratio_text(e.row.ratio) + " | " + short_num(e.row.psnr, "%.1f") + " | " +
           std::to_string(e.row.violations()) + " | " + short_num(e.row.compress_mbps, "%.1f") + " | " +
           short_num(e.row.decompress_mbps, "%.1f") + " | ";
    else
      s += "never | - | - | - | - | - | ";
    s += std::string(e.every_bound_preserves ? "yes" : "no") + " |\n";
  }
  return write_text(path, s);
}

}  // namespace factz::eval
