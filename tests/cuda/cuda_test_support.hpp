// Inputs shared by the CUDA backend's tests (device tests and the CPU model's tests).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "codec/ans.hpp"
#include "factz/factz.hpp"
#include "format/container.hpp"

namespace factz::test {

/// Every mode with every coder, absolute bound `bound` (zstd as Options' default).
inline std::vector<Options> every_mode_and_coder(double bound) {
  std::vector<Options> out;
  for (auto mode : {Mode::none, Mode::block, Mode::speculative})
    for (auto coder : {Coder::huffman, Coder::ans}) {
      Options o;
      o.mode = mode;
      o.coder = coder;
      o.bound_mode = BoundMode::abs;
      o.bound = bound;
      out.push_back(o);
    }
  return out;
}

/// Symbol streams that reach every form of the ANS encoder: sizes around chunk and lane
/// boundaries, constant, sparse and rANS planes, order-1 structure, ids with a small
/// center, a sparse high plane.
inline std::vector<std::vector<uint16_t>> ans_test_streams(uint64_t seed) {
  uint64_t state = seed;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(state >> 33);
  };
  constexpr uint64_t kChunk = uint64_t{1} << detail::kAnsChunkLog2;
  std::vector<std::vector<uint16_t>> streams;
  for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{2}, uint64_t{7}, uint64_t{8}, uint64_t{9}, uint64_t{31},
                     uint64_t{33}, kChunk - 1, kChunk, kChunk + 1, kChunk + 5, 2 * kChunk + 17}) {
    std::vector<uint16_t> smooth(n);
    for (auto& x : smooth) x = uint16_t(32768 + int(next() % 9) - 4);
    streams.push_back(std::move(smooth));
  }
  streams.push_back(std::vector<uint16_t>(kChunk + 3, 32768));  // constant planes
  std::vector<uint16_t> sparse(90000, 32770), runs(140001), wide(70000), ids(66000), few(3 * kChunk);
  for (int i = 0; i < 40; ++i) sparse[next() % sparse.size()] = uint16_t(32768 + 500 + next() % 100);
  for (size_t i = 0; i < runs.size(); ++i) runs[i] = uint16_t(32768 + int((i / 37) % 5) - 2);  // order-1 structure
  for (auto& x : wide) x = uint16_t(next());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = uint16_t(i % 1000 < 900 ? 30 : next() % 32);
  for (size_t i = 0; i < few.size(); ++i) few[i] = uint16_t(32768 + (next() % 64 == 0 ? 300 + int(next() % 3) : 0));
  for (auto* s : {&sparse, &runs, &wide, &ids, &few}) streams.push_back(std::move(*s));
  return streams;
}

/// Copies of `stream` (written without zstd) with one byte of one section changed, the
/// container rewritten around them so that every CRC is valid: the decoders' own checks are
/// what gets tested. Odd trials damage one of a section's first 24 bytes (heads, tables);
/// with `shorten`, every fifth trial also drops the section's last byte. Returns
/// {trial, stream} pairs (trials that drew an empty section are skipped), or nothing when
/// `stream` does not parse.
inline std::vector<std::pair<int, std::vector<uint8_t>>> damaged_sections(std::span<const uint8_t> stream,
                                                                          uint64_t seed, int trials, bool shorten) {
  std::vector<std::pair<int, std::vector<uint8_t>>> out;
  auto pc = detail::parse_container(stream);
  if (!pc.ok()) return out;
  std::vector<detail::Section> sections;
  for (const auto& e : pc->entries) {
    auto raw = detail::read_section(stream, pc.value(), e.id, nullptr);
    if (!raw.ok()) return {};
    sections.push_back({e.id, raw.value(), false});
  }
  uint64_t state = seed;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(state >> 33);
  };
  for (int trial = 0; trial < trials; ++trial) {
    auto damaged = sections;
    auto& sec = damaged[next() % damaged.size()].raw;
    if (sec.empty()) continue;
    const size_t at = trial % 2 ? next() % std::min<size_t>(sec.size(), 24) : next() % sec.size();
    sec[at] ^= uint8_t(1 + next() % 255);
    if (shorten && trial % 5 == 0) sec.resize(sec.size() - 1);
    auto written = detail::write_container(pc->header, damaged, nullptr);
    if (!written.ok()) return {};
    out.emplace_back(trial, std::move(written).value());
  }
  return out;
}

}  // namespace factz::test
