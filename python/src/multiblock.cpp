// Multi-block files in the `factz._factz` extension (include/factz/multiblock.hpp;
// docs/multiblock.md): one process compresses all px x py blocks of a field into an FZMB
// file held in memory, decodes a whole file, or reads a window of a file on disk through
// only the blocks that intersect it.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "factz/multiblock.hpp"

namespace factz_py {

namespace {

py::tuple compress_multiblock(const py::handle& u, const py::handle& v, int px, int py_blocks, const std::string& mode,
                              double eb, const std::string& bound, const std::string& coder, int threads, bool zstd,
                              int64_t anchor_stride, const std::string& policy, int device, const py::handle& mask,
                              std::optional<double> fill_u, std::optional<double> fill_v) {
  const factz::Options o = vector_options(mode, eb, bound, coder, threads, zstd, anchor_stride, policy, device);
  factz::VectorField2D f = field_of(u, v, "u", "v", mask, "mask", fill_values(fill_u, fill_v));
  factz::CompressStats st;
  factz::Result<std::vector<uint8_t>> r = factz::Status();
  {
    py::gil_scoped_release nogil;
    r = factz::compress_multiblock(f, o, px, py_blocks, &st);
  }
  return py::make_tuple(bytes_of(take(std::move(r))), stats_dict(st));
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
  factz::Result<factz::VectorField2D> r = factz::Status();
  {
    py::gil_scoped_release nogil;
    r = factz::decompress_multiblock(view.span(), d);
  }
  return planes_of(take(std::move(r)), with_mask);
}

/// (u, v[, mask], stats): the window [x0, x1) x [y0, y1) of the file at `path`.
py::tuple decompress_region(const std::string& path, int64_t x0, int64_t y0, int64_t x1, int64_t y1, int threads,
                            const std::string& policy, int device, bool with_mask) {
  const factz::DecompressOptions d = decompress_options(threads, policy, device);
  const factz::Region region{x0, y0, x1, y1};
  factz::RegionStats st;
  factz::Result<factz::VectorField2D> r = factz::Status();
  {
    py::gil_scoped_release nogil;
    r = factz::decompress_region(path, region, d, &st);
  }
  py::tuple planes = planes_of(take(std::move(r)), with_mask);
  py::dict stats;
  stats["blocks_decoded"] = st.blocks_decoded;
  stats["bytes_read"] = st.bytes_read;
  py::list out(planes);
  out.append(stats);
  return py::tuple(out);
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
  d["header_bytes"] = idx.header_bytes;
  d["file_bytes"] = idx.file_bytes;
  d["block_index"] = blocks;
  return d;
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
}

}  // namespace factz_py
