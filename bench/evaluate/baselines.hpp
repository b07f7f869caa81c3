// The compressors the evaluation compares, behind one interface: FaCTz in each mode and
// coder, and the baselines linked from Debian packages (zstd on the raw bytes, ZFP in
// fixed-accuracy mode on each component). Benchmark support, not the library.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "factz/factz.hpp"
#include "factz/field.hpp"
#include "factz/status.hpp"

namespace factz::eval {

/// One compressor under test. compress() takes the absolute bound every compressor of a
/// sweep shares (REL fraction x value range of both components); lossless compressors
/// ignore it. Implementations are stateless apart from their settings.
class Compressor {
 public:
  virtual ~Compressor() = default;
  /// Stable name used in the CSV/JSON ("zstd-3", "zfp", "sz3", "factz-none", "factz-B", "factz-S").
  virtual std::string name() const = 0;
  /// Entropy coder ("huffman", "ans") for FaCTz, "-" for the baselines.
  virtual std::string coder() const { return "-"; }
  /// True when the output is exact whatever the bound (run once per field, at bound 0).
  virtual bool lossless() const { return false; }
  /// True for a compressor too slow for the largest fields (zstd -19: under 1 MB/s).
  virtual bool slow() const { return false; }
  virtual Result<std::vector<uint8_t>> compress(const VectorField2D& field, double eb_abs) const = 0;
  virtual Result<VectorField2D> decompress(std::span<const uint8_t> stream, int64_t nx, int64_t ny) const = 0;
};

/// zstd at `level` on the raw float32 bytes of u then v; `threads` > 1 uses zstd workers.
std::unique_ptr<Compressor> make_zstd(int level, int threads);
/// ZFP fixed-accuracy (tolerance = eb_abs) on u and v separately as 2D arrays; at eb_abs
/// == 0 ZFP's reversible (lossless) mode. Compression uses OpenMP with `threads` (0: default).
std::unique_ptr<Compressor> make_zfp(int threads);
/// SZ3 (issue 20: the compressor users compare against) through its command-line tool
/// `binary`, built from its public source outside this repository (docs/benchmarks.md):
/// ABS mode with eb_abs on u and v separately, as `bench/sz3_compare.sh` runs it (eb_abs 0
/// is its lossless case). The planes go through files in a private temporary folder, so the
/// timings include two process starts and the file I/O; the stream is an 8-byte
/// little-endian size of the u stream, the u stream, then the v stream.
std::unique_ptr<Compressor> make_sz3(const std::string& binary);
/// FaCTz with `mode` and `coder`, ABS bound, zstd stage on, OpenMP with `threads`.
std::unique_ptr<Compressor> make_factz(Mode mode, Coder coder, int threads);

/// "factz-none", "factz-B", "factz-S" for the modes.
std::string factz_name(Mode mode);

}  // namespace factz::eval
