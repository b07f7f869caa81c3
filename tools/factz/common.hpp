// Helpers shared by the factz subcommands, and the registry through which subcommands that
// live in their own file (tools/factz/cmd_*.cpp) join the program without editing main.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "stats_writer.hpp"
#include "factz/factz.hpp"
#include "factz/status.hpp"
#include "factz/topology.hpp"
#include "factz/topology3d.hpp"

namespace factz::cli {

/// Thrown by `fail`; main prints "factz SUBCOMMAND: message" and exits with `code`
/// (1: error, 2: usage error).
struct Failure {
  int code;
  std::string message;
};

[[noreturn]] void fail(const std::string& message, int code = 1);

template <class T>
T take(factz::Result<T> r) {
  if (!r.ok()) fail(r.status().to_string());
  return std::move(r).value();
}
void check(const factz::Status& s);

/// `-2 NX NY` (usage error when absent or not two positive integers).
void dims(const Args& a, int64_t& nx, int64_t& ny);
/// A flag that must be given exactly twice (u then v).
std::pair<std::string, std::string> two_files(const Args& a, const std::string& flag);
/// A file named on the command line: the flag that named it and the path.
struct PathArg {
  std::string flag;
  std::string path;
};
/// Every value of the given flags in `a`, flag by flag, in command-line order.
std::vector<PathArg> path_args(const Args& a, std::initializer_list<const char*> flags);
/// The one check that no command overwrites what it reads or writes one file twice: a
/// usage error (exit 2) for an output that is one of the inputs ("output -z u.f32 is the
/// input -i u.f32: refusing to overwrite an input") or that two outputs name ("output -o x
/// is named twice: give each output its own file"). Files that exist are compared by device
/// and inode (a symbolic or hard link to an input is that input), outputs that do not exist
/// yet by their normalized absolute path (std::filesystem::weakly_canonical, after following
/// a dangling link). "-" is stdin among inputs and stdout among outputs: one output may use
/// it. Character devices (/dev/null) are neither inputs nor outputs to protect. A netCDF or
/// HDF5 variable (FILE.nc:VAR) is its file: an output into an input's file is refused, while
/// two outputs into one file are fine when they name different variables. A variable output
/// writes a whole new file, so one into an existing non-empty file (the original data, other
/// variables, other time steps) is refused as well, listing what the file holds, unless
/// `replace_files` (decompress --replace, which the Args form reads). Every command that
/// writes files calls it with its inputs and outputs before reading anything.
void refuse_clobbering(const std::vector<PathArg>& inputs, const std::vector<PathArg>& outputs,
                       bool replace_files = false);
void refuse_clobbering(const Args& a, std::initializer_list<const char*> input_flags,
                       std::initializer_list<const char*> output_flags);

/// `-x serial|omp|omp=T`, and `cuda|cuda:N` (Policy::cuda: the library runs it on the GPU,
/// or says backend_unavailable) where `allow_cuda` (2D vector fields); elsewhere `-x cuda`
/// is a usage error.
factz::Exec exec_of(const Args& a, factz::Policy* policy = nullptr, bool allow_cuda = false);
/// The device of `-x cuda:N` (N), or factz::kDeviceAuto for `-x cuda` (the node-local MPI
/// rank modulo the device count); 0 for the CPU policies.
int device_of(const Args& a);
/// `-M ABS|REL E` (unchanged when absent; usage error for anything but a finite E >= 0).
void bound_of(const Args& a, factz::BoundMode& mode, double& bound);
/// --coder (ans, huffman; with `scalar` also context and smallest, its default there) and --zstd / --no-zstd.
void coder_of(const Args& a, factz::Coder& coder, bool& zstd, bool scalar = false);
/// The vector-field compression options of `factz compress`: -x, -M, --mode, --anchor-stride,
/// --coder, --zstd.
factz::Options vector_compress_options(const Args& a, bool allow_cuda = false);
/// The vector-field decompression options of `factz decompress`: -x (cuda allowed).
factz::DecompressOptions vector_decompress_options(const Args& a);
/// A JSON number (inf as +-1e999, NaN as null), 17 significant digits.
std::string json_number(double x);
/// The vector-field comparison's statistics, cp_original through psnr, as verify prints
/// them (max_abs_error: a JSON array, or max_abs_error_u and max_abs_error_v in the line).
void add_comparison(StatsWriter& s, const factz::Comparison& c);

/// The options that declare missing data: --fill V (both components), --fill-u V, --fill-v V
/// (V a number, inf, -inf or nan). Functions, not constants: command tables in other files
/// are built during static initialization.
OptionSpec fill_option();
OptionSpec fill_u_option();
OptionSpec fill_v_option();
/// The declared fill values (usage error, exit 2, for a value that is not a number).
factz::FillValues fill_of(const Args& a);
/// Without any declared fill value, a value of `f`'s valid vertices that looks like one
/// (factz::suspected_fill_value) gets a warning on stderr naming it, its count and --fill: a
/// forgotten fill value must not pass silently as data (field_files.hpp declares and marks).
void warn_suspected_fill(const factz::VectorField2D& f, const std::string& command);
void warn_suspected_fill(const factz::VectorField2D64& f, const std::string& command);
void warn_suspected_fill(const factz::VectorField3D& f, const std::string& command);
void warn_suspected_fill(const factz::VectorField3D64& f, const std::string& command);
double seconds_since(std::chrono::steady_clock::time_point t0);
/// The stages of a vector compression (and the blocks of a multi-block one) on stderr:
/// every one with --progress, else on a terminal once the run has taken a second; empty
/// otherwise. Never on stdout (statistics and --json live there).
factz::ProgressHook compress_progress(const Args& a);

/// A subcommand defined in its own translation unit. Register it with a namespace-scope
///   const bool kRegistered = factz::cli::register_command(&kSpec, &run);
/// `spec` must outlive the program (a namespace-scope constant).
using RunFn = int (*)(const Args&);
struct Registered {
  const Command* spec;
  RunFn run;
};
bool register_command(const Command* spec, RunFn run);
/// All registered subcommands, sorted by name.
std::vector<Registered> registered_commands();

// ---- float64 fields (issue 18) ------------------------------------------------------------
// compress, cp and verify read float64 fields from .npy files of dtype '<f8' (their shape
// from the file, or -2), from raw little-endian float64 files with --dtype f64 (and -2), and
// from float64 netCDF / HDF5 variables (NC_DOUBLE, H5T_NATIVE_DOUBLE; their shape from the
// file); decompress writes a float64 stream's planes back as '<f8' .npy, raw float64 or
// NC_DOUBLE variables. The readers and the writer are field_files.hpp's, templated on the
// value type.

/// The option `--dtype f32|f64`: the value type of raw input files (default f32; .npy
/// files and variables give their own, which --dtype must then match).
OptionSpec dtype_option();
/// Whether the two files of `flag` (u then v) hold float64 values: --dtype f64, .npy files
/// of dtype float64 ('<f8'), or float64 variables (only their metadata is read here). A
/// float32 .npy or variable with --dtype f64 (or the reverse), u and v of different types,
/// or a float64 file beside a raw one without --dtype f64 is an error naming the files.
bool float64_inputs(const Args& a, const char* flag);
/// --fill, --fill-u and --fill-v of a float64 field, parsed as doubles (a value below float32
/// resolution, or beyond its range, is kept as given).
FillValues64 fill_of64(const Args& a);
/// Writes one float64 plane of ny rows and nx columns: .npy ('<f8', shape (ny, nx)) when
/// the name ends in .npy, raw little-endian float64 otherwise ('-': stdout). A netCDF /
/// HDF5 variable is refused: variables are written together, file by file, through
/// write_field_outputs (field_files.hpp), which takes float64 planes too.
void write_plane64(const std::string& path, const std::vector<double>& plane, int64_t nx, int64_t ny,
                   const std::string& command);

/// Multi-block (domain-decomposed) compress, decompress and verify (tools/factz/blocks.cpp,
/// docs/multiblock.md): main.cpp hands over when --blocks or --region is given or the input
/// stream is a multi-block file. Under mpirun (when built with MPI) the blocks are spread
/// over the ranks; otherwise one process does them all.
int run_blocks_compress(const Args& a);
int run_blocks_decompress(const Args& a);
/// Multi-block decompression of a file already read (from a pipe, a FIFO or stdin).
int run_blocks_decompress_bytes(const Args& a, const std::vector<uint8_t>& file);
int run_blocks_verify(const Args& a);

/// compress's report of a vector field, text or --json: mode, coder, the dtype line for a
/// float64 field, the extents (nz > 0: a 3D field, whose report has no repair lines), sizes, ratio, bit rate, bound, exact vertices, time. `bytes_per_vertex`: the
/// raw size of one vertex's components (8 float32 2D, 16 float64 2D, 12 float32 3D).
void print_vector_compression(const Args& a, const factz::Options& o, const factz::CompressStats& st,
                              int64_t nx, int64_t ny, int64_t nz, int bytes_per_vertex, bool float64,
                              size_t stream_bytes, double secs);

/// decompress's report, text or --json: the extents (nz > 0 adds nz: scalar and 3D fields),
/// the dtype line for a float64 field (JSON only), the sizes (JSON only) and the time.
void print_decompression(const Args& a, int64_t nx, int64_t ny, int64_t nz, bool float64, double raw_bytes,
                         size_t stream_bytes, double secs);

}  // namespace factz::cli
