// Multi-block files in the `factz._factz` extension (include/factz/multiblock.hpp;
// docs/multiblock.md): one process compresses all px x py blocks of a field into an FZMB
// file held in memory, decodes a whole file, or reads a window of a file on disk through
// only the blocks that intersect it. float64 planes make a float64 file (its header and
// every block say so) and a float64 file decodes to float64 planes, never rounded. 3D fields
// (include/factz/multiblock3d.hpp) likewise: three (nz, ny, nx) volumes, float32 (FZMB version
// 3) or float64 (version 4), px x py x pz blocks sharing their boundary planes.
#include <pybind11/stl.h>

#include <cstring>
#include <type_traits>

#include "bindings.hpp"
#include "factz/multiblock.hpp"
#include "factz/multiblock3d.hpp"
#include "factz/topology3d.hpp"

namespace factz_py {

namespace {

/// (u, v) or (u, v, mask) of a decoded field: float32 planes (planes_of) or float64 ones.
template <class Field>
py::tuple planes_out(const Field& f, bool with_mask) {
  if constexpr (std::is_same_v<Field, factz::VectorField2D>) {
    return planes_of(f, with_mask);
  } else {
    const std::vector<py::ssize_t> shape{f.ny, f.nx};
    py::array_t<double> u = array_of(f.u, shape), v = array_of(f.v, shape);
    if (!with_mask) return py::make_tuple(u, v);
    py::array_t<uint8_t> mask(shape);
    if (f.mask.empty()) std::memset(mask.mutable_data(), 0, size_t(f.size()));
    else for (int64_t k = 0; k < f.size(); ++k) mask.mutable_data()[k] = f.mask[size_t(k)] ? 1 : 0;
    return py::make_tuple(u, v, mask);
  }
}

/// The file of a float32 or float64 field and the compressor's counts.
template <class Field>
py::tuple compress_field(const Field& f, const factz::Options& o, int px, int py_blocks) {
  factz::CompressStats st;
  factz::Result<std::vector<uint8_t>> r = factz::Status();
  {
    py::gil_scoped_release nogil;
    r = factz::compress_multiblock(f, o, px, py_blocks, &st);
  }
  return py::make_tuple(bytes_of(take(std::move(r))), stats_dict(st));
}

py::tuple compress_multiblock(const py::handle& u, const py::handle& v, int px, int py_blocks, const std::string& mode,
                              double eb, const std::string& bound, const std::string& coder, int threads, bool zstd,
                              int64_t anchor_stride, const std::string& policy, int device, const py::handle& mask,
                              std::optional<double> fill_u, std::optional<double> fill_v) {
  const factz::Options o = vector_options(mode, eb, bound, coder, threads, zstd, anchor_stride, policy, device);
  if (planes_dtype(u, v, "u", "v") == factz::DType::float64)
    return compress_field(field64_of(u, v, "u", "v", mask, "mask", fill_values64(fill_u, fill_v)), o, px, py_blocks);
  return compress_field(field_of(u, v, "u", "v", mask, "mask", fill_values(fill_u, fill_v)), o, px, py_blocks);
}

/// The decoded file in the value type its header says.
template <class Field>
py::tuple decode_file(std::span<const uint8_t> file, const factz::DecompressOptions& d, bool with_mask) {
  factz::Result<Field> r = factz::Status();
  {
    py::gil_scoped_release nogil;
    if constexpr (std::is_same_v<Field, factz::VectorField2D64>) r = factz::decompress_multiblock64(file, d);
    else r = factz::decompress_multiblock(file, d);
  }
  return planes_out(take(std::move(r)), with_mask);
}

py::tuple decompress_multiblock(const py::handle& buf, int threads, const std::string& policy, int device,
                                bool with_mask) {
  ByteView view(buf);
  if (!factz::is_multiblock(view.span())) {
    const std::string kind = stream_kind(view.span());
    if (kind == "vector")
      throw py::value_error("decompress_multiblock: this is a single vector stream; read it with factz.decompress");
    if (kind == "scalar")
      throw py::value_error("decompress_multiblock: this is a scalar stream; read it with factz.decompress_scalar");
  }
  const factz::DecompressOptions d = decompress_options(threads, policy, device);
  // A file whose index does not parse goes to the float32 decoder, which says what is wrong.
  const auto index = factz::parse_multiblock_index(view.span(), view.span().size());
  if (index.ok() && index->dtype == factz::DType::float64)
    return decode_file<factz::VectorField2D64>(view.span(), d, with_mask);
  return decode_file<factz::VectorField2D>(view.span(), d, with_mask);
}

/// (u, v[, mask], stats) of the window of the file at `path`, in the value type `Field`.
template <class Field>
py::tuple decode_window(const std::string& path, const factz::Region& region, const factz::DecompressOptions& d,
                        bool with_mask) {
  factz::RegionStats st;
  factz::Result<Field> r = factz::Status();
  {
    py::gil_scoped_release nogil;
    if constexpr (std::is_same_v<Field, factz::VectorField2D64>) r = factz::decompress_region64(path, region, d, &st);
    else r = factz::decompress_region(path, region, d, &st);
  }
  py::tuple planes = planes_out(take(std::move(r)), with_mask);
  py::dict stats;
  stats["blocks_decoded"] = st.blocks_decoded;
  stats["bytes_read"] = st.bytes_read;
  py::list out(planes);
  out.append(stats);
  return py::tuple(out);
}

/// (u, v[, mask], stats): the window [x0, x1) x [y0, y1) of the file at `path`.
py::tuple decompress_region(const std::string& path, int64_t x0, int64_t y0, int64_t x1, int64_t y1, int threads,
                            const std::string& policy, int device, bool with_mask) {
  const factz::DecompressOptions d = decompress_options(threads, policy, device);
  const factz::Region region{x0, y0, x1, y1};
  // The header and index only; a file that cannot be read goes to the float32 decoder,
  // which says why.
  factz::Result<factz::MultiBlockIndex> index = factz::Status();
  {
    py::gil_scoped_release nogil;
    index = factz::read_multiblock_index(path);
  }
  if (index.ok() && index->dtype == factz::DType::float64)
    return decode_window<factz::VectorField2D64>(path, region, d, with_mask);
  return decode_window<factz::VectorField2D>(path, region, d, with_mask);
}

/// The index of a multi-block file (header + index, or the whole file) as a dict.
py::dict multiblock_index(const py::handle& buf) {
  ByteView view(buf);
  const factz::MultiBlockIndex idx = take(factz::parse_multiblock_index(view.span(), view.span().size()));
  py::list blocks;
  for (int b = 0; b < idx.layout.count(); ++b) {
    const factz::BlockExtent& e = idx.layout.blocks[size_t(b)];
    py::dict block;
    block["x0"] = e.x0;
    block["y0"] = e.y0;
    block["nx"] = e.nx;
    block["ny"] = e.ny;
    block["offset"] = idx.entries[size_t(b)].offset;
    block["length"] = idx.entries[size_t(b)].length;
    blocks.append(block);
  }
  py::dict d;
  d["nx"] = idx.layout.nx;
  d["ny"] = idx.layout.ny;
  d["blocks"] = py::make_tuple(idx.layout.px, idx.layout.py);
  d["bound"] = idx.bound_mode == 0 ? "abs" : "rel";
  d["eb"] = idx.bound_value;
  d["dtype"] = factz::dtype_name(idx.dtype);
  d["header_bytes"] = idx.header_bytes;
  d["file_bytes"] = idx.file_bytes;
  d["block_index"] = blocks;
  return d;
}


// ---- 3D fields (factz/multiblock3d.hpp) -----------------------------------------------------

/// (u, v, w) or (u, v, w, mask) of a decoded 3D field, each of shape (nz, ny, nx).
template <class Field>
py::tuple volumes_out(const Field& f, bool with_mask) {
  const std::vector<py::ssize_t> shape{f.nz, f.ny, f.nx};
  auto u = array_of(f.u, shape), v = array_of(f.v, shape), w = array_of(f.w, shape);
  if (!with_mask) return py::make_tuple(u, v, w);
  py::array_t<uint8_t> mask(shape);
  if (f.mask.empty()) std::memset(mask.mutable_data(), 0, size_t(f.size()));
  else for (int64_t k = 0; k < f.size(); ++k) mask.mutable_data()[k] = f.mask[size_t(k)] ? 1 : 0;
  return py::make_tuple(u, v, w, mask);
}

template <class Field>
py::tuple compress_field3d(const Field& f, const factz::Options& o, int px, int py_blocks, int pz) {
  factz::CompressStats st;
  factz::Result<std::vector<uint8_t>> r = factz::Status();
  {
    py::gil_scoped_release nogil;
    r = factz::compress_multiblock(f, o, px, py_blocks, pz, &st);
  }
  return py::make_tuple(bytes_of(take(std::move(r))), stats_dict(st));
}

py::tuple compress_multiblock3d(const py::handle& u, const py::handle& v, const py::handle& w, int px, int py_blocks,
                                int pz, const std::string& mode, double eb, const std::string& bound,
                                const std::string& coder, int threads, bool zstd, int64_t anchor_stride,
                                const std::string& policy, int device, const py::handle& mask,
                                std::optional<double> fill_u, std::optional<double> fill_v,
                                std::optional<double> fill_w) {
  const factz::Options o = vector_options(mode, eb, bound, coder, threads, zstd, anchor_stride, policy, device);
  if (planes3d_dtype(u, v, w, "u", "v", "w") == factz::DType::float64)
    return compress_field3d(
        field3d_of<double>(u, v, w, "u", "v", "w", mask, "mask", fill_values3d<double>(fill_u, fill_v, fill_w)), o,
        px, py_blocks, pz);
  return compress_field3d(
      field3d_of<float>(u, v, w, "u", "v", "w", mask, "mask", fill_values3d<float>(fill_u, fill_v, fill_w)), o, px,
      py_blocks, pz);
}

py::tuple decompress_multiblock3d(const py::handle& buf, int threads, const std::string& policy, int device,
                                  bool with_mask) {
  ByteView view(buf);
  if (!factz::is_multiblock3d(view.span())) {
    if (factz::is_multiblock(view.span()))
      throw py::value_error("decompress_multiblock3d: this is a 2D multi-block file; read it with "
                            "factz.decompress_multiblock");
    const std::string kind = stream_kind(view.span());
    if (kind == "vector")
      throw py::value_error("decompress_multiblock3d: this is a single vector stream; read it with "
                            "factz.decompress3d");
  }
  const factz::DecompressOptions d = decompress_options(threads, policy, device);
  // A file whose index does not parse goes to the float32 decoder, which says what is wrong.
  const auto index = factz::parse_multiblock3d_index(view.span(), view.span().size());
  const bool float64 = index.ok() && index->dtype == factz::DType::float64;
  if (float64) {
    factz::Result<factz::VectorField3D64> r = factz::Status();
    {
      py::gil_scoped_release nogil;
      r = factz::decompress_multiblock3d64(view.span(), d);
    }
    return volumes_out(take(std::move(r)), with_mask);
  }
  factz::Result<factz::VectorField3D> r = factz::Status();
  {
    py::gil_scoped_release nogil;
    r = factz::decompress_multiblock3d(view.span(), d);
  }
  return volumes_out(take(std::move(r)), with_mask);
}

template <class Field>
py::tuple decode_window3d(const std::string& path, const factz::Region3D& region, const factz::DecompressOptions& d,
                          bool with_mask) {
  factz::RegionStats st;
  factz::Result<Field> r = factz::Status();
  {
    py::gil_scoped_release nogil;
    if constexpr (std::is_same_v<Field, factz::VectorField3D64>)
      r = factz::decompress_region3d64(path, region, d, &st);
    else r = factz::decompress_region3d(path, region, d, &st);
  }
  py::tuple volumes = volumes_out(take(std::move(r)), with_mask);
  py::dict stats;
  stats["blocks_decoded"] = st.blocks_decoded;
  stats["bytes_read"] = st.bytes_read;
  py::list out(volumes);
  out.append(stats);
  return py::tuple(out);
}

/// (u, v, w[, mask], stats): the window [x0, x1) x [y0, y1) x [z0, z1) of the 3D file at `path`.
py::tuple decompress_region3d(const std::string& path, int64_t x0, int64_t y0, int64_t z0, int64_t x1, int64_t y1,
                              int64_t z1, int threads, const std::string& policy, int device, bool with_mask) {
  const factz::DecompressOptions d = decompress_options(threads, policy, device);
  const factz::Region3D region{x0, y0, z0, x1, y1, z1};
  factz::Result<factz::MultiBlockIndex3D> index = factz::Status();
  {
    py::gil_scoped_release nogil;
    index = factz::read_multiblock3d_index(path);
  }
  if (index.ok() && index->dtype == factz::DType::float64)
    return decode_window3d<factz::VectorField3D64>(path, region, d, with_mask);
  return decode_window3d<factz::VectorField3D>(path, region, d, with_mask);
}

}  // namespace

void bind_multiblock(py::module_& m) {
  m.def("compress_multiblock", &compress_multiblock, py::arg("u"), py::arg("v"), py::arg("px"), py::arg("py"),
        py::arg("mode"), py::arg("eb"), py::arg("bound"), py::arg("coder"), py::arg("threads"), py::arg("zstd"),
        py::arg("anchor_stride"), py::arg("policy"), py::arg("device"), py::arg("mask"), py::arg("fill_u"),
        py::arg("fill_v"));
  m.def("decompress_multiblock", &decompress_multiblock, py::arg("buf"), py::arg("threads"), py::arg("policy"),
        py::arg("device"), py::arg("with_mask"));
  m.def("decompress_region", &decompress_region, py::arg("path"), py::arg("x0"), py::arg("y0"), py::arg("x1"),
        py::arg("y1"), py::arg("threads"), py::arg("policy"), py::arg("device"), py::arg("with_mask"));
  m.def("multiblock_index", &multiblock_index, py::arg("buf"));
  m.def("compress_multiblock3d", &compress_multiblock3d, py::arg("u"), py::arg("v"), py::arg("w"), py::arg("px"),
        py::arg("py"), py::arg("pz"), py::arg("mode"), py::arg("eb"), py::arg("bound"), py::arg("coder"),
        py::arg("threads"), py::arg("zstd"), py::arg("anchor_stride"), py::arg("policy"), py::arg("device"),
        py::arg("mask"), py::arg("fill_u"), py::arg("fill_v"), py::arg("fill_w"));
  m.def("decompress_multiblock3d", &decompress_multiblock3d, py::arg("buf"), py::arg("threads"), py::arg("policy"),
        py::arg("device"), py::arg("with_mask"));
  m.def("decompress_region3d", &decompress_region3d, py::arg("path"), py::arg("x0"), py::arg("y0"), py::arg("z0"),
        py::arg("x1"), py::arg("y1"), py::arg("z1"), py::arg("threads"), py::arg("policy"), py::arg("device"),
        py::arg("with_mask"));
}

}  // namespace factz_py
