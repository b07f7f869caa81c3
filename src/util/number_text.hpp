// The shortest decimal text of a float or double that reads back as the same value
// (std::to_chars): what `factz info`, the container's and the source record's descriptions
// and the readers' messages print.
#pragma once

#include <charconv>
#include <string>

namespace factz::detail {

template <class T>
std::string shortest(T value) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, r.ptr);
}

}  // namespace factz::detail
