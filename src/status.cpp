#include "factz/status.hpp"

namespace factz {

const char* code_name(Code c) {
  switch (c) {
    case Code::ok: return "ok";
    case Code::invalid_argument: return "invalid_argument";
    case Code::corrupt_stream: return "corrupt_stream";
    case Code::unsupported_version: return "unsupported_version";
    case Code::backend_unavailable: return "backend_unavailable";
    case Code::io: return "io";
    case Code::cuda: return "cuda";
    case Code::internal: return "internal";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return std::string(code_name(code_)) + ": " + message_;
}

}  // namespace factz
