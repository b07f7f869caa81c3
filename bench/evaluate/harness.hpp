// The evaluation harness (issue 7): every compressor on the same field at every bound,
// with ratio, bit rate, fidelity, critical-point violations (the exact extractor) and
// throughput. Benchmark support, not the library; see docs/evaluation.md.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "baselines.hpp"
#include "factz/field.hpp"
#include "factz/status.hpp"
#include "factz/topology.hpp"

namespace factz::eval {

/// REL bounds of the sweep: 1e-1 down to 1e-5 in half-decades (1e-1, 10^-1.5 = 3.16e-2,
/// 1e-2, ...), then 0 (the limiting case: lossless for every compressor here).
std::vector<double> default_bounds();

/// One (field, compressor, bound) measurement. Throughputs are MB/s (1e6 bytes) of raw
/// input (8 bytes per vertex); bit_rate is bits per scalar value (32 / ratio).
struct Row {
  std::string sweep;       ///< "bounds" (the bound sweep) or "throughput" (mode x coder)
  std::string field;
  int64_t nx = 0, ny = 0;
  std::string compressor;  ///< Compressor::name()
  std::string coder;       ///< Compressor::coder()
  double bound = 0;        ///< REL fraction of the value range
  double eb_abs = 0;       ///< bound x range: the absolute bound every compressor got
  int64_t raw_bytes = 0, compressed_bytes = 0;
  double ratio = 0, bit_rate = 0;
  double psnr = 0, max_error = 0, nrmse = 0;
  int64_t cp_original = 0, cp_decompressed = 0;
  int64_t lost = 0, spurious = 0, type_changed = 0;
  double compress_mbps = 0, decompress_mbps = 0;
  int repeats = 0;          ///< timed runs; the throughputs are their medians
  bool bound_respected = true;  ///< max_error <= eb_abs (lossy compressors promise it)
  int64_t violations() const { return lost + spurious + type_changed; }
};

/// P1/P2/P3 counts and pointwise errors of a reconstruction, against the signatures of
/// the original computed once per field (same semantics as factz::compare).
struct Fidelity {
  int64_t cp_original = 0, cp_decompressed = 0, lost = 0, spurious = 0, type_changed = 0;
  double max_error = 0, rmse = 0, nrmse = 0, psnr = 0, value_range = 0;
};
Result<Fidelity> measure(const VectorField2D& original, const std::vector<uint8_t>& original_signatures,
                         const VectorField2D& reconstructed, Exec exec = {});

/// max - min over both components (0 for an empty field).
double value_range(const VectorField2D& f);

struct Settings {
  std::vector<double> bounds = default_bounds();
  /// Timed repeats per measurement; 0 chooses by size: 5 up to 2^18 vertices, 3 up to
  /// 2^22, 1 above (the large fields run once). slow() compressors run once.
  int repeats = 0;
  int threads = 0;  ///< OpenMP threads for FaCTz, the extractor and ZFP (0: default)
  double throughput_bound = 1e-2;  ///< REL bound of the mode x coder sweep
  /// Fields of more than `large_vertices` vertices sweep `large_bounds` instead of
  /// `bounds` (default: whole decades 1e-1 .. 1e-5, then 0), to fit the time budget.
  int64_t large_vertices = int64_t(1) << 24;
  std::vector<double> large_bounds = {1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 0.0};
  /// Compressors that are slow() run only on fields of at most this many vertices.
  int64_t slow_max_vertices = int64_t(1) << 22;
};

/// Progress lines for stderr ("field 2/9 ..."); may be empty.
using Progress = std::function<void(const std::string&)>;

/// Runs `sweep` at every bound of `settings` (lossless ones once, at bound 0; slow ones
/// only up to slow_max_vertices and with one timed run) and `throughput` at
/// settings.throughput_bound, on one field. A throughput configuration the sweep already
/// measured at that bound (same name, coder and bound) is copied, not run again. Fails on the first
/// compressor error, naming the compressor and bound; a reconstruction of the wrong
/// size is an error too.
Result<std::vector<Row>> evaluate_field(const std::string& name, const VectorField2D& field,
                                        const std::vector<const Compressor*>& sweep,
                                        const std::vector<const Compressor*>& throughput,
                                        const Settings& settings, const Progress& progress = {});

/// "NAME_u_NXxNY.f32" -> NAME, NX, NY and the v path (same directory, "_v_"). False when
/// the name does not follow the convention of /work/shared/data/README.md.
bool parse_vector_name(const std::string& u_path, std::string& name, int64_t& nx, int64_t& ny, std::string& v_path);

}  // namespace factz::eval
