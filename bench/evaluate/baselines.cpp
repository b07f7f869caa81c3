#include "baselines.hpp"

#include <zfp.h>
#include <zstd.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace factz::eval {
namespace {

Status bad(const std::string& what) { return Status(Code::internal, what); }

class ZstdCompressor final : public Compressor {
 public:
  ZstdCompressor(int level, int threads) : level_(level), threads_(threads) {}
  std::string name() const override { return "zstd-" + std::to_string(level_); }
  bool lossless() const override { return true; }
  bool slow() const override { return level_ >= 19; }

  Result<std::vector<uint8_t>> compress(const VectorField2D& f, double) const override {
    const size_t plane = f.u.size() * sizeof(float);
    std::vector<uint8_t> raw(2 * plane);
    if (plane > 0) {
      std::memcpy(raw.data(), f.u.data(), plane);
      std::memcpy(raw.data() + plane, f.v.data(), plane);
    }
    std::vector<uint8_t> out(ZSTD_compressBound(raw.size()));
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    if (cctx == nullptr) return bad("zstd: cannot create a context");
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level_);
    // Workers only where libzstd was built with them; the call fails harmlessly otherwise.
    if (threads_ > 1) ZSTD_CCtx_setParameter(cctx, ZSTD_c_nbWorkers, threads_);
    const size_t n = ZSTD_compress2(cctx, out.data(), out.size(), raw.data(), raw.size());
    ZSTD_freeCCtx(cctx);
    if (ZSTD_isError(n)) return bad(std::string("zstd: ") + ZSTD_getErrorName(n));
    out.resize(n);
    return out;
  }

  Result<VectorField2D> decompress(std::span<const uint8_t> s, int64_t nx, int64_t ny) const override {
    VectorField2D f{nx, ny, std::vector<float>(size_t(nx * ny)), std::vector<float>(size_t(nx * ny))};
    const size_t plane = f.u.size() * sizeof(float);
    std::vector<uint8_t> raw(2 * plane);
    const size_t n = ZSTD_decompress(raw.data(), raw.size(), s.data(), s.size());
    if (ZSTD_isError(n) || n != raw.size()) return corrupt_stream("zstd: bad frame");
    if (plane > 0) {
      std::memcpy(f.u.data(), raw.data(), plane);
      std::memcpy(f.v.data(), raw.data() + plane, plane);
    }
    return f;
  }

 private:
  int level_;
  int threads_;
};

// Stream layout of the ZFP baseline: 8-byte little-endian size of the u stream, the u
// stream, then the v stream; each is a zfp stream with its full header (mode, grid), so
// the baseline pays for the same self-description a FaCTz stream carries.
class ZfpCompressor final : public Compressor {
 public:
  explicit ZfpCompressor(int threads) : threads_(threads) {}
  std::string name() const override { return "zfp"; }

  Result<std::vector<uint8_t>> compress(const VectorField2D& f, double eb_abs) const override {
    std::vector<uint8_t> out(8);
    uint64_t first = 0;
    for (int c = 0; c < 2; ++c) {
      const std::vector<float>& plane = c == 0 ? f.u : f.v;
      auto part = one(plane, f.nx, f.ny, eb_abs);
      if (!part.ok()) return part.status();
      if (c == 0) first = part->size();
      out.insert(out.end(), part->begin(), part->end());
    }
    for (int b = 0; b < 8; ++b) out[size_t(b)] = uint8_t(first >> (8 * b));
    return out;
  }

  Result<VectorField2D> decompress(std::span<const uint8_t> s, int64_t nx, int64_t ny) const override {
    if (s.size() < 8) return corrupt_stream("zfp: truncated");
    uint64_t first = 0;
    for (int b = 0; b < 8; ++b) first |= uint64_t(s[size_t(b)]) << (8 * b);
    if (first > s.size() - 8) return corrupt_stream("zfp: bad size");
    VectorField2D f{nx, ny, std::vector<float>(size_t(nx * ny)), std::vector<float>(size_t(nx * ny))};
    FACTZ_RETURN_IF_ERROR(unpack(s.subspan(8, first), f.u, nx, ny));
    FACTZ_RETURN_IF_ERROR(unpack(s.subspan(8 + first), f.v, nx, ny));
    return f;
  }

 private:
  Result<std::vector<uint8_t>> one(const std::vector<float>& plane, int64_t nx, int64_t ny, double eb) const {
    zfp_field* field = zfp_field_2d(const_cast<float*>(plane.data()), zfp_type_float, size_t(nx), size_t(ny));
    zfp_stream* zs = zfp_stream_open(nullptr);
    configure(zs, eb);
    if (threads_ != 1 && zfp_stream_set_execution(zs, zfp_exec_omp)) zfp_stream_set_omp_threads(zs, uint(threads_ > 0 ? threads_ : 0));
    std::vector<uint8_t> buf(zfp_stream_maximum_size(zs, field));
    bitstream* bs = stream_open(buf.data(), buf.size());
    zfp_stream_set_bit_stream(zs, bs);
    zfp_stream_rewind(zs);
    const size_t header = zfp_write_header(zs, field, ZFP_HEADER_FULL);
    const size_t n = header == 0 ? 0 : zfp_compress(zs, field);
    stream_close(bs);
    zfp_stream_close(zs);
    zfp_field_free(field);
    if (n == 0) return bad("zfp: compression failed");
    buf.resize(n);
    return buf;
  }

  static void configure(zfp_stream* zs, double eb) {
    if (eb > 0) zfp_stream_set_accuracy(zs, eb);
    else zfp_stream_set_reversible(zs);
  }

  static Status unpack(std::span<const uint8_t> s, std::vector<float>& plane, int64_t nx, int64_t ny) {
    zfp_field* field = zfp_field_alloc();
    zfp_stream* zs = zfp_stream_open(nullptr);
    bitstream* bs = stream_open(const_cast<uint8_t*>(s.data()), s.size());
    zfp_stream_set_bit_stream(zs, bs);
    zfp_stream_rewind(zs);
    size_t n = zfp_read_header(zs, field, ZFP_HEADER_FULL);
    if (n != 0 && (field->type != zfp_type_float || field->nx != size_t(nx) || field->ny != size_t(ny) || field->nz != 0))
      n = 0;
    if (n != 0) {
      zfp_field_set_pointer(field, plane.data());
      n = zfp_decompress(zs, field);
    }
    stream_close(bs);
    zfp_stream_close(zs);
    zfp_field_free(field);
    return n == 0 ? corrupt_stream("zfp: decompression failed") : Status::Ok();
  }

  int threads_;
};

class Sz3Compressor final : public Compressor {
 public:
  explicit Sz3Compressor(std::string binary) : binary_(std::move(binary)) {}
  std::string name() const override { return "sz3"; }

  Result<std::vector<uint8_t>> compress(const VectorField2D& f, double eb_abs) const override {
    auto dir = TempDir::make();
    if (!dir.ok()) return dir.status();
    std::vector<uint8_t> out(8);
    uint64_t first = 0;
    for (int c = 0; c < 2; ++c) {
      const std::vector<float>& plane = c == 0 ? f.u : f.v;
      const std::string raw = dir->path + "/in.f32", sz = dir->path + "/out.sz";
      FACTZ_RETURN_IF_ERROR(write_file(raw, plane.data(), plane.size() * sizeof(float)));
      char eb[40];
      std::snprintf(eb, sizeof eb, "%.17g", eb_abs);
      FACTZ_RETURN_IF_ERROR(run("-f -i " + quoted(raw) + " -z " + quoted(sz) + " -2 " + std::to_string(f.nx) + " " +
                                std::to_string(f.ny) + " -M ABS " + eb));
      auto bytes = read_file(sz);
      if (!bytes.ok()) return bytes.status();
      if (c == 0) first = bytes->size();
      out.insert(out.end(), bytes->begin(), bytes->end());
    }
    for (int b = 0; b < 8; ++b) out[size_t(b)] = uint8_t(first >> (8 * b));
    return out;
  }

  Result<VectorField2D> decompress(std::span<const uint8_t> s, int64_t nx, int64_t ny) const override {
    if (s.size() < 8) return corrupt_stream("sz3: truncated");
    uint64_t first = 0;
    for (int b = 0; b < 8; ++b) first |= uint64_t(s[size_t(b)]) << (8 * b);
    if (first > s.size() - 8) return corrupt_stream("sz3: bad size");
    auto dir = TempDir::make();
    if (!dir.ok()) return dir.status();
    VectorField2D f{nx, ny, std::vector<float>(size_t(nx * ny)), std::vector<float>(size_t(nx * ny))};
    for (int c = 0; c < 2; ++c) {
      const auto part = c == 0 ? s.subspan(8, first) : s.subspan(8 + first);
      const std::string sz = dir->path + "/in.sz", raw = dir->path + "/out.f32";
      FACTZ_RETURN_IF_ERROR(write_file(sz, part.data(), part.size()));
      FACTZ_RETURN_IF_ERROR(run("-f -z " + quoted(sz) + " -o " + quoted(raw) + " -2 " + std::to_string(nx) + " " +
                                std::to_string(ny)));
      auto bytes = read_file(raw);
      if (!bytes.ok()) return bytes.status();
      std::vector<float>& plane = c == 0 ? f.u : f.v;
      if (bytes->size() != plane.size() * sizeof(float)) return corrupt_stream("sz3: wrong decompressed size");
      std::memcpy(plane.data(), bytes->data(), bytes->size());
    }
    return f;
  }

 private:
  /// A private folder under $TMPDIR (or /tmp), removed with its files when it goes.
  struct TempDir {
    std::string path;
    static Result<TempDir> make() {
      const char* base = std::getenv("TMPDIR");
      std::string pattern = std::string(base && *base ? base : "/tmp") + "/factz-sz3-XXXXXX";
      if (mkdtemp(pattern.data()) == nullptr) return bad("sz3: cannot create a temporary folder");
      return TempDir{pattern};
    }
    TempDir(std::string p) : path(std::move(p)) {}
    TempDir(TempDir&& o) noexcept : path(std::move(o.path)) { o.path.clear(); }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    TempDir& operator=(TempDir&&) = delete;
    ~TempDir() {
      std::error_code ec;
      if (!path.empty()) std::filesystem::remove_all(path, ec);
    }
  };

  static std::string quoted(const std::string& s) {
    std::string q = "'";
    for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return q + "'";
  }
  static Status write_file(const std::string& path, const void* data, size_t bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(static_cast<const char*>(data), std::streamsize(bytes));
    return out.good() ? Status::Ok() : bad("sz3: cannot write " + path);
  }
  static Result<std::vector<uint8_t>> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return bad("sz3: no output " + path);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  Status run(const std::string& args) const {
    const std::string cmd = quoted(binary_) + " " + args + " >/dev/null 2>&1";
    const int rc = std::system(cmd.c_str());
    return rc == 0 ? Status::Ok() : bad("sz3: '" + cmd + "' failed (status " + std::to_string(rc) + ")");
  }

  std::string binary_;
};

class FactzCompressor final : public Compressor {
 public:
  FactzCompressor(Mode mode, Coder coder, int threads) : mode_(mode), coder_(coder), threads_(threads) {}
  std::string name() const override { return factz_name(mode_); }
  std::string coder() const override { return coder_name(coder_); }

  Result<std::vector<uint8_t>> compress(const VectorField2D& f, double eb_abs) const override {
    Options o;
    o.mode = mode_;
    o.coder = coder_;
    o.bound_mode = BoundMode::abs;
    o.bound = eb_abs;
    o.threads = threads_;
    return factz::compress(f, o);
  }

  Result<VectorField2D> decompress(std::span<const uint8_t> s, int64_t, int64_t) const override {
    DecompressOptions d;
    d.threads = threads_;
    return factz::decompress(s, d);
  }

 private:
  Mode mode_;
  Coder coder_;
  int threads_;
};

}  // namespace

std::string factz_name(Mode mode) {
  switch (mode) {
    case Mode::none: return "factz-none";
    case Mode::block: return "factz-B";
    case Mode::speculative: return "factz-S";
  }
  return "factz-?";
}

std::unique_ptr<Compressor> make_zstd(int level, int threads) { return std::make_unique<ZstdCompressor>(level, threads); }
std::unique_ptr<Compressor> make_zfp(int threads) { return std::make_unique<ZfpCompressor>(threads); }
std::unique_ptr<Compressor> make_sz3(const std::string& binary) { return std::make_unique<Sz3Compressor>(binary); }
std::unique_ptr<Compressor> make_factz(Mode mode, Coder coder, int threads) {
  return std::make_unique<FactzCompressor>(mode, coder, threads);
}

}  // namespace factz::eval
