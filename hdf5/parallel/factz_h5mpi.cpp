// factz_h5mpi: the domain decomposition through parallel HDF5 (docs/multiblock.md,
// "Parallel HDF5"). A 2D vector field becomes the dataset "uv" of shape (2, NY, NX), chunked
// (2, CY, CX) with CY = ceil(NY / PY), CX = ceil(NX / PX): one chunk per block. Every rank
// writes its chunks (contiguous ranges of chunk ids) in one collective H5Dwrite; the FaCTz
// filter, registered in-process from the plugin's own source compiled against this HDF5,
// compresses each chunk with its four outer rows and columns exact (cd_values[5] = 15) and
// the ABS bound resolved over the whole field (MPI_Allreduce of the value range), so every
// triangle lies inside one chunk or has its three vertices exact: no critical point of the
// global field changes.
//
//   mpirun -np N factz_h5mpi write NX NY U.f32 V.f32 OUT.h5 PX PY [MODE [ABS|REL E [CODER]]]
//   mpirun -np N factz_h5mpi read IN.h5 U.f32 V.f32
// MODE: speculative (default) | block | none; bound REL 1e-2 by default; CODER ans | huffman.
// Prints one key=value line on rank 0; exit 1 with one line on errors, 2 on usage errors.
#include <H5PLextern.h>
#include <hdf5.h>
#include <mpi.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "factz/factz.h"
#include "factz/factz.hpp"
#include "factz/multiblock.hpp"
#include "mpi/comm.hpp"
#include "mpi/mpi_module.hpp"

namespace {

using factz::mpi::World;

struct Failure {
  int code;
  std::string message;
};
[[noreturn]] void fail(const std::string& m, int code = 1) { throw Failure{code, m}; }

/// Local work `f` (which fails by throwing Failure) between two agreements
/// (mpi::agreed_phase): the first failure of any rank is thrown on every rank. Failures cross
/// World::agree as Status values: a usage error (exit code 2) as invalid_argument, any other
/// (exit code 1) as internal.
template <class F>
void phase(World& w, F&& f) {
  const factz::Status s = factz::mpi::agreed_phase(w, [&f]() -> factz::Status {
    try {
      f();
    } catch (const Failure& e) {
      return factz::Status(e.code == 2 ? factz::Code::invalid_argument : factz::Code::internal, e.message);
    }
    return factz::Status::Ok();
  });
  if (!s.ok()) throw Failure{s.code() == factz::Code::invalid_argument ? 2 : 1, s.message()};
}

/// A collective's Status (MPI aborts the job on most failures before one is returned).
void check(const factz::Status& s) {
  if (!s.ok()) fail(s.to_string());
}

/// The chunk grid of a (2, ny, nx) dataset chunked (2, cy, cx), and which chunks a rank has.
struct Grid {
  int64_t nx = 0, ny = 0, cx = 0, cy = 0, gx = 0, gy = 0;
  int64_t count() const { return gx * gy; }
  /// Chunk k's vertices [x0, x0 + w) x [y0, y0 + h) inside the dataset.
  void extent(int64_t k, int64_t& x0, int64_t& y0, int64_t& w, int64_t& h) const {
    x0 = (k % gx) * cx;
    y0 = (k / gx) * cy;
    w = std::min(cx, nx - x0);
    h = std::min(cy, ny - y0);
  }
};

Grid make_grid(int64_t nx, int64_t ny, int64_t cx, int64_t cy) {
  return {nx, ny, cx, cy, (nx + cx - 1) / cx, (ny + cy - 1) / cy};
}

std::pair<int64_t, int64_t> chunks_of(const World& w, const Grid& g) {
  return {g.count() * w.rank() / w.size(), g.count() * (w.rank() + 1) / w.size()};
}

/// The selection of chunks [first, last) in the file space (2, ny, nx), and the order HDF5
/// maps a packed memory buffer onto it: component, then row, then column. `each(c, y, x0, w)`
/// is called for every row piece in that order.
template <class Each>
void for_each_piece(const Grid& g, int64_t first, int64_t last, Each&& each) {
  for (int c = 0; c < 2; ++c)
    for (int64_t y = 0; y < g.ny; ++y)
      for (int64_t k = first; k < last; ++k) {
        int64_t x0, y0, w, h;
        g.extent(k, x0, y0, w, h);
        if (y >= y0 && y < y0 + h) each(c, y, x0, w);
      }
}

hid_t select_chunks(hid_t space, const Grid& g, int64_t first, int64_t last) {
  H5Sselect_none(space);
  for (int64_t k = first; k < last; ++k) {
    int64_t x0, y0, w, h;
    g.extent(k, x0, y0, w, h);
    const hsize_t start[3] = {0, hsize_t(y0), hsize_t(x0)}, count[3] = {2, hsize_t(h), hsize_t(w)};
    H5Sselect_hyperslab(space, H5S_SELECT_OR, start, nullptr, count, nullptr);
  }
  return space;
}

/// The filter compiled into this program. Plugin loading is switched off first: a serial
/// libh5zfactz.so found on HDF5_PLUGIN_PATH is linked against the serial HDF5 and must never
/// be loaded into this (parallel) one.
void register_filter() {
  H5PLset_loading_state(0);
  if (H5Zregister(H5PLget_plugin_info()) < 0) fail("cannot register the FaCTz filter");
}

int64_t to_int(const std::string& s, const char* what) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (...) {
    used = 0;
  }
  if (used != s.size() || v < 1) fail(std::string(what) + " must be a positive integer, got '" + s + "'", 2);
  return v;
}

/// Rows [y, y + 1) x [x0, x0 + w) of a raw float32 plane, appended to `out`.
void read_piece(std::ifstream& in, const std::string& path, int64_t nx, int64_t y, int64_t x0, int64_t w,
                std::vector<float>& out) {
  const size_t at = out.size();
  out.resize(at + size_t(w));
  in.seekg(std::streamoff((y * nx + x0) * 4));
  in.read(reinterpret_cast<char*>(out.data() + at), std::streamsize(w * 4));
  if (!in) fail("io: cannot read " + path);
}

int write_cmd(World& w, const std::vector<std::string>& a) {
  int64_t nx = 0, ny = 0, px = 0, py = 0;
  factz::Options o;
  o.bound_mode = factz::BoundMode::rel;
  std::vector<float> packed;
  Grid g;
  int64_t first = 0, last = 0;
  double range[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  const auto t0 = std::chrono::steady_clock::now();
  phase(w, [&] {
    if (a.size() < 7 || a.size() > 11) fail("usage: factz_h5mpi write NX NY U V OUT.h5 PX PY [MODE [ABS|REL E [CODER]]]", 2);
    nx = to_int(a[0], "NX");
    ny = to_int(a[1], "NY");
    px = to_int(a[5], "PX");
    py = to_int(a[6], "PY");
    if (px > nx || py > ny) fail("more blocks than vertices along an axis", 2);
    const std::string mode = a.size() > 7 ? a[7] : "speculative";
    if (mode == "speculative") o.mode = factz::Mode::speculative;
    else if (mode == "block") o.mode = factz::Mode::block;
    else if (mode == "none") o.mode = factz::Mode::none;
    else fail("MODE must be speculative, block or none, got '" + mode + "'", 2);
    if (a.size() == 9) fail("give the bound as ABS|REL E", 2);
    if (a.size() > 9) {
      if (a[8] != "ABS" && a[8] != "REL") fail("the bound type must be ABS or REL, got '" + a[8] + "'", 2);
      o.bound_mode = a[8] == "ABS" ? factz::BoundMode::abs : factz::BoundMode::rel;
      o.bound = std::strtod(a[9].c_str(), nullptr);
      if (!(o.bound >= 0) || !std::isfinite(o.bound)) fail("the bound must be finite and >= 0", 2);
    }
    if (a.size() > 10) {
      if (a[10] != "ans" && a[10] != "huffman") fail("CODER must be ans or huffman", 2);
      o.coder = a[10] == "ans" ? factz::Coder::ans : factz::Coder::huffman;
    }
    g = make_grid(nx, ny, (nx + px - 1) / px, (ny + py - 1) / py);
    std::tie(first, last) = chunks_of(w, g);
    for (int c = 0; c < 2; ++c) {
      const std::string& path = a[size_t(2 + c)];
      std::error_code ec;
      if (std::filesystem::file_size(path, ec) != uint64_t(nx * ny * 4) || ec)
        fail("invalid_argument: " + path + " must hold " + std::to_string(nx * ny * 4) + " bytes (NX x NY float32)");
    }
    std::ifstream in[2] = {std::ifstream(a[2], std::ios::binary), std::ifstream(a[3], std::ios::binary)};
    for_each_piece(g, first, last, [&](int c, int64_t y, int64_t x0, int64_t wd) {
      read_piece(in[c], a[size_t(2 + c)], nx, y, x0, wd, packed);
    });
    for (float x : packed) {
      if (!std::isfinite(x)) fail("invalid_argument: the field holds NaN or Inf");
      range[0] = std::min(range[0], double(x));
      range[1] = std::min(range[1], -double(x));
    }
  });
  check(w.allreduce_min(range));
  factz::ValueRange global;
  if (range[0] <= -range[1]) global = {float(range[0]), float(-range[1]), false};
  const double eb = factz::absolute_bound(o, global).value();
  const uint64_t bits = std::bit_cast<uint64_t>(eb);
  const unsigned cd[6] = {unsigned(o.mode), 0u, unsigned(bits & 0xFFFFFFFFu), unsigned(bits >> 32), unsigned(o.coder),
                          unsigned(factz::kEdgeAll)};
  register_filter();
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  const hid_t file = H5Fcreate(a[4].c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  H5Pclose(fapl);
  if (file < 0) fail("cannot create " + a[4]);
  const hsize_t dims[3] = {2, hsize_t(ny), hsize_t(nx)}, chunk[3] = {2, hsize_t(g.cy), hsize_t(g.cx)};
  const hid_t space = H5Screate_simple(3, dims, nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 3, chunk);
  H5Pset_filter(dcpl, FACTZ_HDF5_FILTER_ID, H5Z_FLAG_MANDATORY, 6, cd);
  const hid_t dset = H5Dcreate2(file, "uv", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (dset < 0) fail("cannot create the dataset uv (filter refused?)");
  // The absolute bound, for readers (the chunks carry it too).
  const hid_t ascalar = H5Screate(H5S_SCALAR);
  const hid_t attr = H5Acreate2(dset, "factz_eb_abs", H5T_IEEE_F64LE, ascalar, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(attr, H5T_NATIVE_DOUBLE, &eb);
  H5Aclose(attr);
  H5Sclose(ascalar);
  const hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
  const hsize_t n = packed.size();
  const hid_t mspace = H5Screate_simple(1, &n, nullptr);
  if (n == 0) H5Sselect_none(mspace);
  const auto t1 = std::chrono::steady_clock::now();
  const herr_t rc = H5Dwrite(dset, H5T_NATIVE_FLOAT, mspace, select_chunks(space, g, first, last), dxpl,
                             packed.empty() ? nullptr : packed.data());
  for (hid_t h : {mspace, space}) H5Sclose(h);
  H5Pclose(dxpl);
  H5Pclose(dcpl);
  const herr_t dclosed = H5Dclose(dset);
  // The close writes HDF5's metadata: a full disk fails here too.
  const herr_t fclosed = H5Fclose(file);
  const double write_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const factz::Status written = w.agree(
      rc < 0 || dclosed < 0 || fclosed < 0
          ? factz::Status(factz::Code::internal, "cannot write " + a[4] + ": the collective write of the filtered "
                                                 "dataset failed (is the disk full? HDF5's error stack above)")
          : factz::Status::Ok());
  if (!written.ok()) {
    // No partial file is left behind.
    if (w.rank() == 0) std::remove(a[4].c_str());
    if (fclosed < 0) {
      // A file whose close failed stays half open in HDF5 1.10, and the library's own
      // termination at MPI_Finalize then crashes on it: the ranks end here, without it.
      if (w.rank() == 0) std::fprintf(stderr, "factz_h5mpi: %s\n", written.message().c_str());
      std::fflush(nullptr);
      std::_Exit(1);
    }
    fail(written.message());
  }
  double maxima[2] = {write_s, total_s};
  check(w.allreduce_max(maxima));
  if (w.rank() == 0) {
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(a[4], ec);
    std::printf("ranks=%d chunks=%lld chunk=%lldx%lld eb_abs=%.17g file_bytes=%llu ratio=%.6g write_seconds=%.6g "
                "total_seconds=%.6g\n",
                w.size(), (long long)g.count(), (long long)g.cx, (long long)g.cy, eb, (unsigned long long)bytes,
                double(nx * ny * 8) / double(bytes), maxima[0], maxima[1]);
  }
  return 0;
}

int read_cmd(World& w, const std::vector<std::string>& a) {
  if (a.size() != 3) fail("usage: factz_h5mpi read IN.h5 U.f32 V.f32", 2);
  register_filter();
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  const hid_t file = H5Fopen(a[0].c_str(), H5F_ACC_RDONLY, fapl);
  H5Pclose(fapl);
  if (file < 0) fail("cannot open " + a[0] + " as HDF5");
  const hid_t dset = H5Dopen2(file, "uv", H5P_DEFAULT);
  if (dset < 0) {
    H5Fclose(file);
    fail("no dataset uv in " + a[0]);
  }
  const hid_t space = H5Dget_space(dset), dcpl = H5Dget_create_plist(dset);
  hsize_t dims[3] = {}, chunk[3] = {};
  const bool shaped = H5Sget_simple_extent_ndims(space) == 3 && H5Sget_simple_extent_dims(space, dims, nullptr) == 3 &&
                      H5Pget_chunk(dcpl, 3, chunk) == 3 && dims[0] == 2 && chunk[0] == 2;
  H5Pclose(dcpl);
  if (!shaped) {
    H5Sclose(space);
    H5Dclose(dset);
    H5Fclose(file);
    fail("uv must be a (2, NY, NX) dataset chunked (2, CY, CX)");
  }
  const Grid g = make_grid(int64_t(dims[2]), int64_t(dims[1]), int64_t(chunk[2]), int64_t(chunk[1]));
  const auto [first, last] = chunks_of(w, g);
  std::vector<float> packed;
  size_t n = 0;
  for_each_piece(g, first, last, [&](int, int64_t, int64_t, int64_t wd) { n += size_t(wd); });
  packed.resize(n);
  const hsize_t hn = n;
  const hid_t mspace = H5Screate_simple(1, &hn, nullptr);
  if (n == 0) H5Sselect_none(mspace);
  const hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
  const auto t0 = std::chrono::steady_clock::now();
  const herr_t rc = H5Dread(dset, H5T_NATIVE_FLOAT, mspace, select_chunks(space, g, first, last), dxpl,
                            packed.empty() ? nullptr : packed.data());
  const double read_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  H5Pclose(dxpl);
  H5Sclose(mspace);
  H5Sclose(space);
  H5Dclose(dset);
  H5Fclose(file);
  phase(w, [&] {
    if (rc < 0) fail("collective read of " + a[0] + " failed (HDF5 error stack above)");
  });
  // The packed pieces go straight to their places in the raw planes.
  std::vector<factz::mpi::Segment> segs[2];
  size_t at = 0;
  for_each_piece(g, first, last, [&](int c, int64_t y, int64_t x0, int64_t wd) {
    segs[c].push_back({uint64_t((y * g.nx + x0) * 4), packed.data() + at, wd});
    at += size_t(wd);
  });
  for (int c = 0; c < 2; ++c) {
    std::sort(segs[c].begin(), segs[c].end(), [](const auto& p, const auto& q) { return p.offset < q.offset; });
    phase(w, [&] {
      const auto s = w.write_segments_all(a[size_t(1 + c)], uint64_t(g.nx * g.ny * 4), segs[c]);
      if (!s.ok()) fail(s.to_string());
    });
  }
  double maxima[1] = {read_s};
  check(w.allreduce_max(maxima));
  if (w.rank() == 0)
    std::printf("ranks=%d nx=%lld ny=%lld chunks=%lld read_seconds=%.6g\n", w.size(), (long long)g.nx,
                (long long)g.ny, (long long)g.count(), maxima[0]);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // This program links MPI (parallel HDF5 needs it), so it hands World its own MPI table
  // instead of loading the module libfactz-mpi.so.
  auto started = World::start(factz::mpi::linked_mpi());
  if (!started.ok()) {
    std::fprintf(stderr, "factz_h5mpi: %s\n", started.status().to_string().c_str());
    return 1;
  }
  World& w = *started.value();
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (!w.distributed()) fail("run under mpirun (mpirun -np 1 factz_h5mpi ... for one process)", 2);
    if (args.empty() || (args[0] != "write" && args[0] != "read"))
      fail("usage: factz_h5mpi write NX NY U V OUT.h5 PX PY [MODE [ABS|REL E [CODER]]] | read IN.h5 U V", 2);
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    return args[0] == "write" ? write_cmd(w, rest) : read_cmd(w, rest);
  } catch (const Failure& f) {
    if (w.rank() == 0) std::fprintf(stderr, "factz_h5mpi: %s\n", f.message.c_str());
    return f.code;
  }
}
