// The .npy header (NumPy's format, numpy/lib/format.py, versions 1.0, 2.0 and 3.0): one
// parser for every .npy reader (field planes in field_io.cpp, float64 arrays in src/flow).
//
// Layout: "\x93NUMPY", major, minor, the header length (2 bytes little-endian in version
// 1.0, 4 bytes in 2.0 and 3.0), then the header: the repr of a Python dict with exactly the
// keys 'descr' (a dtype string), 'fortran_order' (True/False) and 'shape' (a tuple of
// ints), padded with spaces and ended by a newline. Writers differ in spacing and key order
// ("{'descr':'<f4','fortran_order':False,'shape':(48,64)}" is as valid as NumPy's own
// "{'descr': '<f4', 'fortran_order': False, 'shape': (48, 64), }"), so the header is parsed
// as the literal it is, not matched as text. Version 3.0 differs from 2.0 only in allowing
// UTF-8 in the header, which changes nothing for the keys and values read here.
#include <cctype>
#include <cstring>
#include <limits>

#include "factz/io.hpp"

namespace factz {
namespace {

/// A recursive-descent reader of the dict literal. Every failure sets `error` to what was
/// expected and where (an offset into the header).
class HeaderReader {
 public:
  explicit HeaderReader(const std::string& h) : h_(h) {}

  Status read(NpyHeader& out) {
    bool have_descr = false, have_order = false, have_shape = false;
    space();
    if (!eat('{')) return fail("the header is not a dict (no '{')");
    for (;;) {
      space();
      if (eat('}')) break;
      std::string key;
      if (!string(key)) return fail("expected a quoted key or '}'");
      space();
      if (!eat(':')) return fail("expected ':' after '" + key + "'");
      space();
      if (key == "descr") {
        if (have_descr) return fail("'descr' given twice");
        have_descr = true;
        if (peek() == '[' || peek() == '{')
          return invalid_argument("structured .npy dtype (a record array) is not supported");
        if (!string(out.descr)) return fail("'descr' must be a dtype string such as '<f4'");
      } else if (key == "fortran_order") {
        if (have_order) return fail("'fortran_order' given twice");
        have_order = true;
        if (word("True")) out.fortran_order = true;
        else if (word("False")) out.fortran_order = false;
        else return fail("'fortran_order' must be True or False");
      } else if (key == "shape") {
        if (have_shape) return fail("'shape' given twice");
        have_shape = true;
        FACTZ_RETURN_IF_ERROR(shape(out.shape));
      } else {
        return fail("unexpected key '" + key + "' (a .npy header has exactly 'descr', 'fortran_order', 'shape')");
      }
      space();
      if (eat(',')) continue;
      space();
      if (eat('}')) break;
      return fail("expected ',' or '}'");
    }
    space();
    if (i_ != h_.size()) return fail("unexpected text after the dict");
    if (!have_descr) return fail("no 'descr' key");
    if (!have_order) return fail("no 'fortran_order' key");
    if (!have_shape) return fail("no 'shape' key");
    return Status::Ok();
  }

 private:
  Status fail(const std::string& what) const {
    return invalid_argument("malformed .npy header: " + what + " at header byte " + std::to_string(i_));
  }
  char peek() const { return i_ < h_.size() ? h_[i_] : '\0'; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++i_;
    return true;
  }
  /// White space as Python's tokenizer skips it inside brackets (NumPy pads with spaces and
  /// ends with '\n'; older writers pad with other blanks).
  void space() {
    while (i_ < h_.size() && (h_[i_] == ' ' || h_[i_] == '\t' || h_[i_] == '\n' || h_[i_] == '\r' ||
                              h_[i_] == '\f' || h_[i_] == '\v'))
      ++i_;
  }
  /// An identifier-like keyword not followed by more identifier characters.
  bool word(const char* w) {
    const size_t n = std::strlen(w);
    if (h_.compare(i_, n, w) != 0) return false;
    const size_t end = i_ + n;
    if (end < h_.size() && (std::isalnum(static_cast<unsigned char>(h_[end])) || h_[end] == '_')) return false;
    i_ = end;
    return true;
  }
  /// A single- or double-quoted string literal (a backslash escapes the next character;
  /// dtype strings and key names never need more).
  bool string(std::string& out) {
    const char q = peek();
    if (q != '\'' && q != '"') return false;
    size_t k = i_ + 1;
    out.clear();
    for (; k < h_.size() && h_[k] != q; ++k) {
      if (h_[k] == '\n') return false;
      if (h_[k] == '\\' && k + 1 < h_.size()) ++k;
      out += h_[k];
    }
    if (k >= h_.size()) return false;
    i_ = k + 1;
    return true;
  }
  /// A tuple of non-negative ints: "()", "(n,)", "(a, b)", "(a, b,)"; Python 2 writers
  /// appended 'L' to longs ("(3L, 4L)"), which NumPy still reads.
  Status shape(std::vector<int64_t>& out) {
    out.clear();
    if (!eat('(')) return fail("'shape' must be a tuple such as (ny, nx) or (n,)");
    bool comma_after_last = false;
    for (;;) {
      space();
      if (eat(')')) break;
      if (!out.empty() && !comma_after_last) return fail("expected ',' or ')' in 'shape'");
      if (!std::isdigit(static_cast<unsigned char>(peek()))) return fail("'shape' must hold non-negative integers");
      int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        const int d = h_[i_++] - '0';
        if (v > (std::numeric_limits<int64_t>::max() - d) / 10) return fail("a 'shape' entry is too large");
        v = v * 10 + d;
      }
      if (peek() == 'L' || peek() == 'l') ++i_;
      out.push_back(v);
      space();
      comma_after_last = eat(',');
    }
    // Python needs the comma of a 1-tuple: "(n)" is the int n, not a shape.
    if (out.size() == 1 && !comma_after_last) return fail("'shape' (n) is not a tuple: a 1-tuple is written (n,)");
    return Status::Ok();
  }

  const std::string& h_;
  size_t i_ = 0;
};

}  // namespace

Result<NpyHeader> parse_npy_header(std::span<const uint8_t> b) {
  static const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (b.size() < 8 || std::memcmp(b.data(), kMagic, 6) != 0)
    return invalid_argument("not a .npy file (no \\x93NUMPY magic)");
  NpyHeader out;
  out.major = b[6];
  out.minor = b[7];
  size_t length_bytes = 0;
  if (out.major == 1) length_bytes = 2;
  else if (out.major == 2 || out.major == 3) length_bytes = 4;
  else
    return Status(Code::unsupported_version, ".npy format version " + std::to_string(out.major) + "." +
                                                 std::to_string(out.minor) + " (FaCTz reads 1.0, 2.0 and 3.0)");
  if (b.size() < 8 + length_bytes) return invalid_argument("truncated .npy file (ends before the header length)");
  uint64_t hlen = 0;
  for (size_t k = 0; k < length_bytes; ++k) hlen |= uint64_t(b[8 + k]) << (8 * k);
  const uint64_t start = 8 + length_bytes;
  if (hlen > b.size() - start)
    return invalid_argument("truncated .npy header (" + std::to_string(hlen) + " bytes announced, " +
                            std::to_string(b.size() - start) + " present)");
  const std::string h(reinterpret_cast<const char*>(b.data() + start), size_t(hlen));
  FACTZ_RETURN_IF_ERROR(HeaderReader(h).read(out));
  out.data_offset = start + hlen;
  return out;
}

Status check_npy_float(const NpyHeader& h, int width, const std::string& path) {
  const std::string w = std::to_string(width);
  const std::string type = width == 8 ? "float64" : "float32";
  const std::string want = "little-endian " + type + " ('<f" + w + "'): save a.astype('<f" + w + "')";
  if (h.descr == ">f" + w) return invalid_argument(path + ": big-endian " + type + " .npy ('>f" + w + "'); FaCTz reads " + want);
  if (h.descr != "<f" + w && h.descr != "=f" + w && h.descr != "|f" + w)
    return invalid_argument(path + ": .npy dtype '" + h.descr + "' is not " + type + "; FaCTz reads " + want);
  if (h.fortran_order)
    return invalid_argument(path + ": Fortran-order .npy array (fortran_order: True); FaCTz reads C order: save "
                                   "np.ascontiguousarray(a)");
  return Status::Ok();
}

std::string npy_header(const std::string& descr, std::span<const int64_t> shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t k = 0; k < shape.size(); ++k) dict += (k ? ", " : "") + std::to_string(shape[k]);
  dict += shape.size() == 1 ? ",), }" : "), }";
  // Version 1.0 holds headers up to 65535 bytes; longer ones (never written here for 1-3
  // dimensions) would need 2.0 and its 4-byte length.
  const bool v2 = dict.size() + 1 + 10 + 64 > 65535;
  const size_t preamble = v2 ? 12 : 10;
  while ((preamble + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string out("\x93NUMPY", 6);
  out += char(v2 ? 2 : 1);
  out += char(0);
  for (size_t k = 0; k < (v2 ? 4u : 2u); ++k) out += char((dict.size() >> (8 * k)) & 0xFF);
  return out + dict;
}

}  // namespace factz
