#include "cli.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace factz::cli {

const std::vector<std::vector<std::string>>& Args::all(const std::string& flag) const {
  static const std::vector<std::vector<std::string>> kNone;
  auto it = values_.find(flag);
  return it == values_.end() ? kNone : it->second;
}

std::string Args::get(const std::string& flag, const std::string& fallback) const {
  auto it = values_.find(flag);
  if (it == values_.end() || it->second.back().empty()) return fallback;
  return it->second.back().front();
}

bool parse(const Command& cmd, const std::vector<std::string>& argv, Args& out, std::string& error) {
  for (size_t k = 0; k < argv.size(); ++k) {
    std::string tok = argv[k];
    std::string inline_value;
    bool has_inline = false;
    if (tok.rfind("--", 0) == 0) {
      const size_t eq = tok.find('=');
      if (eq != std::string::npos) {
        inline_value = tok.substr(eq + 1);
        tok = tok.substr(0, eq);
        has_inline = true;
      }
    }
    const OptionSpec* spec = nullptr;
    for (const auto& o : cmd.options)
      if (o.name == tok) spec = &o;
    if (!spec) {
      error = "unknown option '" + argv[k] + "' for 'factz " + cmd.name + "' (see factz " + cmd.name + " --help)";
      return false;
    }
    std::vector<std::string> vals;
    if (has_inline) {
      if (spec->nargs != 1) {
        error = "option " + tok + " does not take '=' syntax";
        return false;
      }
      vals.push_back(inline_value);
    } else {
      for (int a = 0; a < spec->nargs; ++a) {
        bool is_flag = false;  // "-2 20 -i u.f32": the flag is not a value of -2
        if (k + 1 < argv.size())
          for (const auto& o : cmd.options) is_flag = is_flag || o.name == argv[k + 1];
        if (k + 1 >= argv.size() || is_flag) {
          error = "option " + tok + " needs " + std::to_string(spec->nargs) + " value(s): " + spec->metavar;
          return false;
        }
        vals.push_back(argv[++k]);
      }
      for (int a = 0; a < spec->optional_nargs && k + 1 < argv.size(); ++a) {
        bool is_flag = false;
        for (const auto& o : cmd.options) is_flag = is_flag || o.name == argv[k + 1];
        if (is_flag) break;
        vals.push_back(argv[++k]);
      }
    }
    if (out.has(tok) && !spec->repeatable) {
      error = "option " + tok + " given more than once";
      return false;
    }
    out.values_[tok].push_back(vals);
  }
  return true;
}

std::string help_text(const Command& cmd) {
  std::ostringstream os;
  os << "usage: " << cmd.usage << "\n\n" << cmd.summary << "\n\noptions:\n";
  for (const auto& o : cmd.options) {
    std::string left = "  " + o.name + (o.metavar.empty() ? "" : " " + o.metavar);
    if (left.size() < 26) left.resize(26, ' ');
    else left += "\n" + std::string(26, ' ');
    os << left << o.help << "\n";
  }
  return os.str();
}

bool to_int64(const std::string& s, long long& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtoll(s.c_str(), &end, 10);
  return errno == 0 && end && *end == '\0';
}

bool to_double(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtod(s.c_str(), &end);
  return errno == 0 && end && *end == '\0' && std::isfinite(out);
}

}  // namespace factz::cli
