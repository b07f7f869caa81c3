// `factz.info`: a dict describing any stream or file factz writes, the Python side of
// `factz info`. A FaCTz container (vector or scalar stream) is read with the container
// parser the CLI uses (src/format/container.hpp, as tools/factz does for `info`), so every
// checksum is checked; multi-block files, flow streams and flow bases with their own public
// parsers (multiblock.hpp, flow.hpp).
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "factz/io.hpp"
#include "factz/multiblock.hpp"
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

py::object source_of(std::span<const uint8_t> bytes) {
  const std::optional<factz::SourceRecord> rec = take(factz::stream_source(bytes));
  if (!rec) return py::none();
  py::dict d;
  d["format"] = factz::source_format_name(rec->format);
  d["file"] = rec->file;
  py::list vars;
  for (const factz::SourceVariable& v : rec->components) vars.append(v.name);
  d["variables"] = vars;
  d["description"] = factz::describe_source_record(*rec);
  return d;
}

py::dict container_info(std::span<const uint8_t> bytes) {
  namespace fd = factz::detail;
  const fd::ParsedContainer parsed = take(fd::parse_container(bytes));
  const fd::Header& h = parsed.header;
  py::dict d;
  d["kind"] = h.components == 1 ? "scalar" : "vector";
  d["bytes"] = bytes.size();
  d["version"] = h.version;
  d["dtype"] = h.dtype == fd::kDtypeFloat64 ? "float64" : "float32";  // which values decompress returns
  d["components"] = h.components;
  d["ndims"] = h.ndims;
  d["nx"] = h.nx;
  d["ny"] = h.ny;
  d["nz"] = h.nz;
  d["shape"] = h.ndims == 3 ? py::make_tuple(h.nz, h.ny, h.nx) : py::make_tuple(h.ny, h.nx);
  d["mode"] = mode_name_of(h.mode);
  d["coder"] = h.coder == fd::kCoderAns ? "ans" : "huffman";
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
    sections.append(s);
  }
  d["sections"] = sections;
  d["source"] = source_of(bytes);
  return d;
}

py::dict multiblock_info(std::span<const uint8_t> bytes) {
  const factz::MultiBlockIndex idx = take(factz::parse_multiblock_index(bytes, bytes.size()));
  py::dict d;
  d["kind"] = "multiblock";
  d["bytes"] = bytes.size();
  d["nx"] = idx.layout.nx;
  d["ny"] = idx.layout.ny;
  d["shape"] = py::make_tuple(idx.layout.ny, idx.layout.nx);
  d["blocks"] = py::make_tuple(idx.layout.px, idx.layout.py);
  d["bound"] = idx.bound_mode == 0 ? "abs" : "rel";
  d["eb"] = idx.bound_value;
  d["header_bytes"] = idx.header_bytes;
  py::list blocks;
  for (int b = 0; b < idx.layout.count(); ++b) {
    const factz::BlockExtent& e = idx.layout.blocks[size_t(b)];
    const auto& entry = idx.entries[size_t(b)];
    py::dict block = container_info(bytes.subspan(entry.offset, entry.length));
    block["x0"] = e.x0;
    block["y0"] = e.y0;
    block["offset"] = entry.offset;
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
/// leading dimensions): each stream ends at the end of its last section, which follows the
/// section table without gaps (docs/format.md), and is validated whole by the container parser.
std::vector<uint64_t> stream_lengths(const py::handle& buf) {
  namespace fd = factz::detail;
  ByteView view(buf);
  std::span<const uint8_t> rest = view.span();
  std::vector<uint64_t> lengths;
  auto u32 = [](const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; };
  auto u64 = [&](const uint8_t* p) { return uint64_t(u32(p)) | uint64_t(u32(p + 4)) << 32; };
  while (!rest.empty()) {
    const std::string where = "stream " + std::to_string(lengths.size()) + " of the chunk: ";
    if (rest.size() < fd::kHeaderSize)
      throw py::value_error("corrupt_stream: " + where + "truncated in the header (" + std::to_string(rest.size()) +
                            " bytes)");
    const uint32_t count = u32(rest.data() + 56);
    const uint64_t table_end = fd::kHeaderSize + uint64_t{fd::kSectionEntrySize} * std::min(count, fd::kMaxSections);
    uint64_t end = table_end;
    if (count <= fd::kMaxSections && rest.size() >= table_end)
      for (uint32_t i = 0; i < count; ++i) {
        const uint64_t stored = u64(rest.data() + fd::kHeaderSize + fd::kSectionEntrySize * i + 16);
        end = stored > rest.size() ? rest.size() + 1 : end + stored;
      }
    // Whatever the table claims, the parser checks the stream it delimits (a bad table, a
    // length beyond the bytes: corrupt_stream with the parser's message).
    const std::span<const uint8_t> one = rest.first(std::min<uint64_t>(end, rest.size()));
    const factz::Result<fd::ParsedContainer> parsed = fd::parse_container(one);
    if (!parsed.ok()) raise(factz::Status(parsed.status().code(), where + parsed.status().message()));
    lengths.push_back(one.size());
    rest = rest.subspan(one.size());
  }
  return lengths;
}

}  // namespace

void bind_info(py::module_& m) {
  m.def("info", &info, py::arg("buf"));
  m.def("stream_lengths", &stream_lengths, py::arg("buf"));
}

}  // namespace factz_py
