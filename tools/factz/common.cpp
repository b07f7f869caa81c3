#include "common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace factz::cli {

void fail(const std::string& m, int code) { throw Failure{code, m}; }

void check(const factz::Status& s) {
  if (!s.ok()) fail(s.to_string());
}

void dims(const Args& a, int64_t& nx, int64_t& ny) {
  if (!a.has("-2")) fail("missing -2 NX NY", 2);
  const auto& d = a.all("-2").back();
  long long x = 0, y = 0;
  if (!to_int64(d[0], x) || !to_int64(d[1], y) || x <= 0 || y <= 0)
    fail("-2 needs two positive integers, got '" + d[0] + " " + d[1] + "'", 2);
  nx = x;
  ny = y;
}

std::pair<std::string, std::string> two_files(const Args& a, const std::string& flag) {
  const auto& v = a.all(flag);
  if (v.size() != 2) fail("give " + flag + " exactly twice (u then v), got " + std::to_string(v.size()), 2);
  return {v[0][0], v[1][0]};
}

factz::Exec exec_of(const Args& a, factz::Policy* policy) {
  const std::string x = a.get("-x", "omp");
  factz::Exec e;
  if (x == "serial") {
    e.threads = 1;
    if (policy) *policy = factz::Policy::serial;
    return e;
  }
  if (policy) *policy = factz::Policy::omp;
  if (x == "omp") return e;
  long long t = 0;
  if (x.rfind("omp=", 0) == 0 && to_int64(x.substr(4), t) && t > 0 && t <= 1024) {
    e.threads = int(t);
    return e;
  }
  if (x == "cuda") fail("backend_unavailable: this build of factz has no CUDA backend", 1);
  fail("-x must be serial, omp or omp=T, got '" + x + "'", 2);
}

std::string json_number(double x) {
  if (std::isinf(x)) return x > 0 ? "1e999" : "-1e999";  // JSON has no inf; 1e999 parses as inf
  if (std::isnan(x)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

namespace {
std::vector<Registered>& registry() {
  static std::vector<Registered> r;  // function-local: safe from static initialization order
  return r;
}
}  // namespace

bool register_command(const Command* spec, RunFn run) {
  registry().push_back({spec, run});
  return true;
}

std::vector<Registered> registered_commands() {
  auto r = registry();
  std::sort(r.begin(), r.end(), [](const Registered& a, const Registered& b) { return a.spec->name < b.spec->name; });
  return r;
}

}  // namespace factz::cli
