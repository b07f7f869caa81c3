// The CPU model of the CUDA pipeline: the kernels' bodies (block_bodies.hpp,
// backbone_bodies.hpp, speculative_bodies.hpp) driven by host loops in the kernels' launch
// order, with the scans and stable compactions the device does with CUB written as plain
// loops, and the same host-side stream assembly (host_stream.hpp). Nothing here runs on
// a GPU: it is the evidence, testable on any machine, that what the kernels compute is
// what the CPU pipeline computes (tests/cuda/test_gpu_model.cpp compares the bytes).
// Float32 and float64 fields and streams: every entry point has an overload for each (the
// bodies are templates on the value type, as the device's kernels are).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/cuda/host_stream.hpp"
#include "codec/ans.hpp"
#include "factz/factz.hpp"

namespace factz::cuda_detail {

/// Per-vertex intermediates of the tiled frontend (for the tests).
template <class T>
struct TiledIntermediatesOf {
  std::vector<uint8_t> id_u, id_v;        ///< block mode: per-vertex bound ids
  std::vector<uint8_t> tile_ids[2];
  std::vector<T> recon[2];
  /// 0 coded, kExactListFull, or kExactListRounded (float64 block mode; kernels/exact_rounding.hpp)
  std::vector<uint8_t> exact[2];
  int64_t repair_rounds = 0, repaired_vertices = 0;
};
using TiledIntermediates = TiledIntermediatesOf<float>;
using TiledIntermediates64 = TiledIntermediatesOf<double>;

/// Compresses like the CUDA backend would (the same bytes), missing vertices included (the
/// host's mask and working copy, host_stream.hpp). `mid`, when given, receives the
/// frontend's decisions of modes none and block (on the working copy). A float64 field
/// gives a float64 stream (format version 6), as factz::compress.
Result<std::vector<uint8_t>> model_compress(const VectorField2D& f, const Options& o, TiledIntermediates* mid = nullptr);
Result<std::vector<uint8_t>> model_compress(const VectorField2D64& f, const Options& o,
                                            TiledIntermediates64* mid = nullptr);

/// The payloads before assembly (what the device hands to the host), for a stage-by-stage
/// comparison with the device on a GPU: modes none/block into *tiled, speculative into
/// *speculative (p.options.mode must match). With `missing` (the mask, nx * ny bytes), f
/// is the working copy (MissingVertices::work).
void model_payload(const VectorField2D& f, const Plan& p, TiledPayload* tiled, SpeculativePayload* speculative,
                   const uint8_t* missing = nullptr);
void model_payload(const VectorField2D64& f, const Plan& p, TiledPayload* tiled, SpeculativePayload* speculative,
                   const uint8_t* missing = nullptr);

/// The exact check with repair as the device runs it (flag sweeps per round) on planes
/// recon/exact (u, v); cp_free may be null (every original signature derived); triangles
/// touching a vertex marked in `missing` (null = none) are never checked.
void model_repair(const VectorField2D& f, const uint8_t* cp_free, std::vector<float> recon[2],
                  std::vector<uint8_t> exact[2], int64_t& rounds, int64_t& repaired,
                  const uint8_t* missing = nullptr);
void model_repair(const VectorField2D64& f, const uint8_t* cp_free, std::vector<double> recon[2],
                  std::vector<uint8_t> exact[2], int64_t& rounds, int64_t& repaired,
                  const uint8_t* missing = nullptr);

/// The Huffman blob as the device encoder writes it (huffman_bodies.hpp).
std::vector<uint8_t> model_huffman_encode(std::span<const uint16_t> symbols);

/// The ANS blob as the device encoder writes it (ans_encode_bodies.hpp: device splits,
/// pair counts, gathers and compactions, the host plan and layout, and the rANS chunks coded
/// by lane groups in lockstep); max_lanes and allow_escapes as ans_encode's (the escaped
/// bytes: device flags, a compaction and a gather).
Status model_ans_encode(std::span<const uint16_t> symbols, uint16_t center, std::vector<uint8_t>& blob,
                        uint32_t max_lanes = detail::kAnsEncoderMaxLanes, bool allow_escapes = false);

/// CRC-32C as the device computes it (crc_bodies.hpp): per-block CRCs, then the tree.
uint32_t model_crc32c(std::span<const uint8_t> data);

/// Decodes a Huffman blob of out.size() symbols as the device decoder does.
Status model_huffman_decode(std::span<const uint8_t> blob, std::span<uint16_t> out);

/// Decodes an ANS blob of out.size() symbols as the device decoder does.
Status model_ans_decode(std::span<const uint8_t> blob, uint16_t center, std::span<uint16_t> out);

/// Either decoder by the header's coder byte (Huffman ignores center).
Status model_entropy_decode(uint8_t coder, std::span<const uint8_t> blob, uint16_t center, std::span<uint16_t> out);

/// Decompresses like the CUDA backend would; a masked stream's missing vertices get their
/// stored bits and the result its mask (as factz::decompress). A float64 stream is
/// invalid_argument (as factz::decompress: detail::require_dtype).
Result<VectorField2D> model_decompress(std::span<const uint8_t> stream);
/// The same for a float64 stream (as factz::decompress64; a float32 stream is invalid_argument).
Result<VectorField2D64> model_decompress64(std::span<const uint8_t> stream);

}  // namespace factz::cuda_detail
