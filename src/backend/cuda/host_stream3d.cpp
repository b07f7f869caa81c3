#include "backend/cuda/host_stream3d.hpp"

#include <algorithm>
#include <string>

#include "backend/cuda/host_stream.hpp"  // host_threads
#include "factz/topology3d.hpp"
#include "kernels/interpolation3d.hpp"
#include "kernels/speculation3d.hpp"  // kMissingStandIn3D
#include "kernels/speculative_decode.hpp"  // kMissingVertex
#include "streams/mask_sections.hpp"
#include "streams/stream_common.hpp"

namespace factz::cuda_detail {
namespace {

/// A masked speculative stream's input spread to every position (Decoders3D): the stream
/// holds no id for a missing target and no exact values for a missing anchor.
Status spread_missing3d(const detail::Header& h, const uint8_t* missing, detail::Speculative3DInput& in) {
  const int64_t nx = int64_t(h.nx), ny = int64_t(h.ny), nz = int64_t(h.nz);
  const detail::PhaseLattice3D A = detail::anchor_lattice3d(nx, ny, nz, int64_t(h.anchor_stride));
  std::vector<float> exact;
  exact.reserve(in.exact.size() + size_t(3 * A.count()));
  size_t e = 0;
  for (int64_t a = 0; a < A.count(); ++a) {
    if (missing[detail::lattice_vertex3d(A, nx, ny, a)]) {
      exact.insert(exact.end(), 3, detail::kMissingStandIn3D);
      continue;
    }
    if (e + 3 > in.exact.size()) return corrupt_stream("exact values are missing for the anchors");
    exact.insert(exact.end(), in.exact.begin() + ptrdiff_t(e), in.exact.begin() + ptrdiff_t(e + 3));
    e += 3;
  }
  exact.insert(exact.end(), in.exact.begin() + ptrdiff_t(e), in.exact.end());
  std::vector<uint16_t> ids;
  ids.reserve(size_t(nx * ny * nz - A.count()));
  size_t d = 0;
  detail::PhaseSchedule3D schedule(nx, ny, nz, int64_t(h.anchor_stride));
  for (detail::ScheduledPhase3D ph; schedule.next(ph);)
    for (int64_t t = 0; t < ph.lattice.count(); ++t) {
      if (missing[detail::lattice_vertex3d(ph.lattice, nx, ny, t)]) {
        ids.push_back(detail::kMissingVertex);
        continue;
      }
      if (d >= in.ids.size()) return corrupt_stream("the bound ids run short of the grid");
      ids.push_back(in.ids[d++]);
    }
  if (d != in.ids.size()) return corrupt_stream("the bound ids run past the grid");
  in.exact = std::move(exact);
  in.ids = std::move(ids);
  return Status::Ok();
}

}  // namespace

Result<std::vector<uint8_t>> compress3d_with(const VectorField3D& f, const Options& o, const Frontends3D& fe) {
  // The stream layer's set-up, as compress3d.cpp's: checks, the mask section, the filled
  // working copy the frontend sees, the plan and its bound.
  detail::Prepared3D<VectorField3D> prep;
  FACTZ_RETURN_IF_ERROR(detail::prepare3d(f, o, host_threads(), prep));
  if (o.exact_edges)
    return Status(Code::backend_unavailable,
                  "exact faces (Options::exact_edges, the shared faces of a 3D block) are not on the CUDA backend's 3D "
                  "path yet: use policy serial or omp");
  const VectorField3D& work = prep.work();
  const uint8_t* missing = prep.missing;
  const detail::Stream3DPlan& p = prep.plan;
  if (o.mode != Mode::speculative) {
    detail::Tiled3DResult r;
    FACTZ_RETURN_IF_ERROR(fe.tiled(work, p, missing, r));
    detail::Tiled3DPayload payload;
    detail::tiled3d_payload(r, o.mode == Mode::block, p.threads, payload, missing);
    return detail::assemble_tiled3d(p, payload, std::move(prep.mask_section));
  }
  detail::Speculative3DResult r;
  FACTZ_RETURN_IF_ERROR(fe.speculative(work, p, missing, r));
  detail::Speculative3DPayload payload;
  detail::speculative3d_payload(work, o.anchor_stride, r, payload, true, p.threads);
  return detail::assemble_speculative3d(p, payload, std::move(prep.mask_section));
}

Status decompress3d_with(std::span<const uint8_t> stream, std::span<float> u, std::span<float> v,
                         std::span<float> w, std::vector<uint8_t>* mask_out, const Decoders3D& de) {
  auto parsed = detail::parse_vector3d_stream(stream);
  if (!parsed.ok()) return parsed.status();
  const auto& h = parsed->header;
  const int64_t n = int64_t(h.nx * h.ny * h.nz);
  if (int64_t(u.size()) != n || int64_t(v.size()) != n || int64_t(w.size()) != n)
    return invalid_argument("output planes must hold nx*ny*nz = " + std::to_string(n) + " values");
  const int threads = host_threads();
  std::vector<uint8_t> mask;
  FACTZ_RETURN_IF_ERROR(detail::read_mask3d(stream, parsed.value(), mask));
  const uint8_t* missing = mask.empty() ? nullptr : mask.data();
  if (h.mode == detail::kModeSpeculative) {
    detail::Speculative3DInput in;
    FACTZ_RETURN_IF_ERROR(detail::parse_speculative3d(stream, parsed.value(), threads, in, missing));
    if (missing) FACTZ_RETURN_IF_ERROR(spread_missing3d(h, missing, in));
    FACTZ_RETURN_IF_ERROR(de.speculative(h, in, u, v, w));
  } else {  // the codes of a masked stream are spread back to every vertex by the parser
    detail::Tiled3DInput in;
    FACTZ_RETURN_IF_ERROR(detail::parse_tiled3d(stream, parsed.value(), threads, in, missing));
    FACTZ_RETURN_IF_ERROR(de.tiled(h, in, u, v, w));
  }
  if (missing) {  // the missing vertices' bits go over the reconstruction last
    FACTZ_RETURN_IF_ERROR(detail::apply_mask3d(stream, parsed.value(), u, v, w, mask));
    if (mask_out) *mask_out = std::move(mask);
  }
  return Status::Ok();
}

}  // namespace factz::cuda_detail
