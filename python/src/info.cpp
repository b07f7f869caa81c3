// `factz.info`: a dict describing any stream or file factz writes, the Python side of
// `factz info`. A FaCTz container (vector or scalar stream) is read with the container
// parser the CLI uses (src/format/container.hpp, as tools/factz does for `info`), so every
// checksum is checked; multi-block files (2D, and 3D versions 3 and 4), flow streams and flow
// bases with their own public parsers (multiblock.hpp, multiblock3d.hpp, flow.hpp).
#include <pybind11/stl.h>

#include <array>

#include "bindings.hpp"
#include "factz/io.hpp"
#include "factz/multiblock.hpp"
#include "factz/multiblock3d.hpp"
#include "format/container.hpp"
#ifdef FACTZ_PY_FLOW
#include "factz/flow.hpp"
#endif

namespace factz_py {

namespace {

const char* mode_name_of(uint8_t mode) {
  switch (mode) {
    case factz::detail::kModeNone: return "none";
    case factz::detail::kModeBlock: return "block";
    case factz::detail::kModeSpeculative: return "speculative";
    case factz::detail::kModeContourTree: return "contour_tree";
    default: return "unknown";
  }
}

/// A source record as a dict (format, file, variables, auxiliaries, description), or None.
py::object source_dict(const std::optional<factz::SourceRecord>& rec) {
  if (!rec) return py::none();
  py::dict d;
  d["format"] = factz::source_format_name(rec->format);
  d["file"] = rec->file;
  py::list vars;
  for (const factz::SourceVariable& v : rec->components) vars.append(v.name);
  d["variables"] = vars;
  py::list auxiliaries;  // record version 3: the variables their attributes name
  for (const factz::SourceAuxiliary& a : rec->auxiliaries) auxiliaries.append(a.name);
  d["auxiliaries"] = auxiliaries;
  d["description"] = factz::describe_source_record(*rec);
  return d;
}

/// A stream's record (section 12).
py::object source_of(std::span<const uint8_t> bytes) { return source_dict(take(factz::stream_source(bytes))); }

py::dict container_info(std::span<const uint8_t> bytes, const factz::detail::ParsedContainer& parsed) {
  namespace fd = factz::detail;
  const fd::Header& h = parsed.header;
  py::dict d;
  d["kind"] = h.components == 1 ? "scalar" : "vector";
  d["bytes"] = bytes.size();
  d["version"] = parsed.format_version();  // 18 for the compact container (19: a stream with a source record; 20: one with auxiliary variables)
  d["layout_version"] = h.version;          // the version of its sections' layout (2 to 17)
  d["container"] = parsed.layout == fd::ContainerLayout::compact ? "compact" : "classic";
  d["dtype"] = h.dtype == fd::kDtypeFloat64 ? "float64" : "float32";  // which values decompress returns
  d["components"] = h.components;
  d["ndims"] = h.ndims;
  d["nx"] = h.nx;
  d["ny"] = h.ny;
  d["nz"] = h.nz;
  d["shape"] = h.ndims == 3 ? py::make_tuple(h.nz, h.ny, h.nx) : py::make_tuple(h.ny, h.nx);
  d["mode"] = mode_name_of(h.mode);
  d["coder"] = factz::coder_name(factz::Coder(h.coder));
  d["zstd"] = (h.flags & fd::kHeaderFlagZstd) != 0;
  d["bound"] = h.bound_mode == fd::kBoundRel ? "rel" : "abs";
  d["eb"] = h.bound_value;
  d["eb_abs"] = h.eb;
  d["tile"] = h.tile;
  d["anchor_stride"] = h.anchor_stride;
  d["masked"] = fd::has_section(parsed, fd::kSectionMask) || fd::has_section(parsed, fd::kSectionMaskAndValues);
  py::list sections;
  for (const fd::ParsedContainer::Entry& e : parsed.entries) {
    py::dict s;
    s["id"] = e.id;
    s["name"] = fd::section_name(e.id);
    s["stored_bytes"] = e.stored_size;
    s["raw_bytes"] = e.raw_size;
    s["zstd"] = (e.flags & fd::kSectionFlagZstd) != 0;
    s["shuffle"] = fd::shuffle_width(e.flags);  // byte-shuffle width of the zstd stage, 0: none
    sections.append(s);
  }
  d["sections"] = sections;
  d["source"] = source_of(bytes);
  return d;
}

py::dict container_info(std::span<const uint8_t> bytes) {
  return container_info(bytes, take(factz::detail::parse_container(bytes)));
}

/// The dict of block b's stream (container_info plus its place in the file), after checking
/// it is what the file's index says: a vector stream of the index's extent (nz 1 for a 2D
/// file), dimension and data type, as the multi-block decoders require. Any problem is a
/// ValueError naming the block.
py::dict block_info(std::span<const uint8_t> file, const factz::MultiBlockIndex::Entry& entry, int b,
                    std::array<int64_t, 3> extent, int ndims, factz::DType dtype) {
  namespace fd = factz::detail;
  const std::span<const uint8_t> stream = file.subspan(entry.offset, entry.length);
  const std::string where = "block " + std::to_string(b) + " of the multi-block file: ";
  const factz::Result<fd::ParsedContainer> parsed = fd::parse_container(stream);
  if (!parsed.ok()) raise(factz::Status(parsed.status().code(), where + parsed.status().message()));
  const fd::Header& h = parsed->header;
  const bool f64 = h.dtype == fd::kDtypeFloat64;
  const int64_t nz = h.ndims == 3 ? int64_t(h.nz) : 1;
  if (h.components != ndims || h.ndims != ndims)
    raise(factz::corrupt_stream(where + "not a " + std::to_string(ndims) + "D vector stream"));
  if (int64_t(h.nx) != extent[0] || int64_t(h.ny) != extent[1] || nz != extent[2])
    raise(factz::corrupt_stream(where + "it does not hold the extent its index says"));
  if (f64 != (dtype == factz::DType::float64))
    raise(factz::corrupt_stream(where + "it holds " + (f64 ? "float64" : "float32") +
                                " values, the file's header says " + factz::dtype_name(dtype)));
  py::dict d = container_info(stream, parsed.value());
  d["offset"] = entry.offset;
  return d;
}

/// What 2D (versions 1, 2, 5, 6) and 3D (versions 3, 4, 7, 8) multi-block files report alike.
template <class Index>
py::dict multiblock_common(std::span<const uint8_t> bytes, const Index& idx, int ndims) {
  py::dict d;
  d["kind"] = "multiblock";
  d["bytes"] = bytes.size();
  d["ndims"] = ndims;
  d["dtype"] = factz::dtype_name(idx.dtype);
  d["nx"] = idx.layout.nx;
  d["ny"] = idx.layout.ny;
  if constexpr (requires { idx.layout.nz; }) d["nz"] = idx.layout.nz;
  d["bound"] = idx.bound_mode == 0 ? "abs" : "rel";
  d["eb"] = idx.bound_value;
  d["header_bytes"] = idx.header_bytes;
  d["version"] = int(bytes[4]) | int(bytes[5]) << 8;  // 5 to 8: with the source record
  d["source"] = source_dict(take(factz::multiblock_source(bytes)));  // after the last block
  return d;
}

/// A multi-block file, parsed by the library's own index parsers (parse_multiblock_index for
/// 2D files, parse_multiblock3d_index for 3D ones), which check every checksum, the layout
/// and that the byte ranges end where the file does; then every block's stream.
py::dict multiblock_info(std::span<const uint8_t> bytes) {
  py::list blocks;
  if (factz::is_multiblock3d(bytes)) {
    const factz::MultiBlockIndex3D idx = take(factz::parse_multiblock3d_index(bytes, bytes.size()));
    const factz::BlockLayout3D& L = idx.layout;
    py::dict d = multiblock_common(bytes, idx, 3);
    d["shape"] = py::make_tuple(L.nz, L.ny, L.nx);
    d["blocks"] = py::make_tuple(L.px, L.py, L.pz);
    for (int b = 0; b < L.count(); ++b) {
      const factz::BlockExtent3D& e = L.blocks[size_t(b)];
      py::dict block = block_info(bytes, idx.entries[size_t(b)], b, {e.nx, e.ny, e.nz}, 3, idx.dtype);
      block["x0"] = e.x0;
      block["y0"] = e.y0;
      block["z0"] = e.z0;
      blocks.append(block);
    }
    d["block_streams"] = blocks;
    return d;
  }
  const factz::MultiBlockIndex idx = take(factz::parse_multiblock_index(bytes, bytes.size()));
  const factz::BlockLayout& L = idx.layout;
  py::dict d = multiblock_common(bytes, idx, 2);
  d["shape"] = py::make_tuple(L.ny, L.nx);
  d["blocks"] = py::make_tuple(L.px, L.py);
  for (int b = 0; b < L.count(); ++b) {
    const factz::BlockExtent& e = L.blocks[size_t(b)];
    py::dict block = block_info(bytes, idx.entries[size_t(b)], b, {e.nx, e.ny, 1}, 2, idx.dtype);
    block["x0"] = e.x0;
    block["y0"] = e.y0;
    blocks.append(block);
  }
  d["block_streams"] = blocks;
  return d;
}

#ifdef FACTZ_PY_FLOW
py::dict flow_info(std::span<const uint8_t> bytes, const std::string& kind) {
  py::dict d;
  d["kind"] = kind;
  d["bytes"] = bytes.size();
  if (kind == "flow") {
    d["tolerance"] = take(factz::flow::stream_tolerance(bytes));
    return d;
  }
  const factz::flow::Basis b = take(factz::flow::parse_basis(bytes));
  d["dim"] = b.dim;
  d["n"] = b.n;
  d["method"] = factz::flow::method_name(b.method);
  d["coefficients"] = b.coefficients();
  d["blocks"] = b.blocks.size();
  d["periods"] = b.periods;
  d["fingerprint"] = b.fingerprint();
  return d;
}
#endif

py::dict info(const py::handle& buf) {
  ByteView view(buf);
  const std::span<const uint8_t> bytes = view.span();
  const std::string kind = stream_kind(bytes);
  if (kind == "multiblock") return multiblock_info(bytes);
  if (kind == "flow" || kind == "flow_basis") {
#ifdef FACTZ_PY_FLOW
    return flow_info(bytes, kind);
#else
    throw py::value_error("info: a divergence-free flow " + kind + "; this build has no flow module");
#endif
  }
  if (kind.empty())
    throw py::value_error("corrupt_stream: not a file factz writes (its first bytes are none of the magics FCTZ, "
                          "FZMB, FZFS, FZFB)");
  return container_info(bytes);
}

/// The lengths of the FaCTz streams stored back to back in `buf` (FactzCodec's chunks with
/// leading dimensions): each stream's length comes from its header and table (either
/// container), and the stream it delimits is validated whole by the container parser.
std::vector<uint64_t> stream_lengths(const py::handle& buf) {
  ByteView view(buf);
  std::span<const uint8_t> rest = view.span();
  std::vector<uint64_t> lengths;
  while (!rest.empty()) {
    const std::string where = "stream " + std::to_string(lengths.size()) + " of the chunk: ";
    const factz::Result<uint64_t> n = factz::detail::leading_stream_size(rest);
    if (!n.ok()) raise(factz::Status(n.status().code(), where + n.status().message()));
    lengths.push_back(n.value());
    rest = rest.subspan(n.value());
  }
  return lengths;
}

}  // namespace

void bind_info(py::module_& m) {
  m.def("info", &info, py::arg("buf"));
  m.def("stream_lengths", &stream_lengths, py::arg("buf"));
}

}  // namespace factz_py
