// decompress() on untrusted bytes (docs/format.md, "Decoding untrusted input"): every
// single-byte flip, every truncation, random garbage and appended bytes must be rejected,
// and corruptions whose checksums were recomputed ("resealed") reach the mode decoders,
// which must then fail with corrupt_stream / unsupported_version or return a field of the
// declared size: never crash, throw, hang or take long.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <time.h>

#include "codec/zstd_stage.hpp"
#include "factz/factz.hpp"
#include "format/container.hpp"
#include "format/crc32.hpp"
#include "streams/stream_common.hpp"
#include "synth.hpp"
#include "support/compact_places.hpp"

namespace factz {
namespace {

using Bytes = std::vector<uint8_t>;
using Clock = std::chrono::steady_clock;

// ---- Layout helpers written from docs/format.md (independent of container.cpp) ----------
constexpr std::size_t kHeader = 64;
constexpr std::size_t kEntry = 40;

uint64_t get_le(const Bytes& s, std::size_t off, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t{s[off + i]} << (8 * i);
  return v;
}
void put_le(Bytes& s, std::size_t off, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) s[off + i] = uint8_t(v >> (8 * i));
}
uint32_t crc_of(const Bytes& s, std::size_t off, std::size_t n) {
  return detail::crc32c(std::span<const uint8_t>(s.data() + off, n));
}
uint32_t section_count(const Bytes& s) { return uint32_t(get_le(s, 56, 4)); }
std::size_t entry_at(std::size_t i) { return kHeader + kEntry * i; }

// The compact container (version 18, what compress writes): support/compact_places.hpp.
using testing::compact_places;
using testing::is_compact;

/// First byte after the section table: where the section payloads start.
std::size_t payload_begin(const Bytes& s) {
  if (is_compact(s)) return compact_places(s).header_crc + 4;
  return entry_at(section_count(s));
}

/// The grid a stream's header declares (0 x 0 when its bytes do not hold one).
std::pair<uint64_t, uint64_t> declared_grid(const Bytes& s) {
  if (is_compact(s)) {
    const testing::CompactPlaces c = compact_places(s);
    return {c.nx, c.ny};
  }
  if (s.size() < kHeader) return {0, 0};
  return {get_le(s, 12, 8), get_le(s, 20, 8)};
}

/// The header's zstd flag (byte 11 of a classic header, 12 of a compact one).
bool zstd_flag(const Bytes& s) { return (s[is_compact(s) ? testing::kCompactFlagsOffset : 11] & 1) != 0; }

/// Recomputes every checksum (sections, table entries, header) wherever the layout still
/// allows it, so that the corruption itself, not a checksum, is what the decoder meets.
void reseal(Bytes& s) {
  if (is_compact(s)) {
    testing::reseal_compact(s);
    return;
  }
  if (s.size() < kHeader) return;
  const uint64_t count = std::min<uint64_t>(section_count(s), (s.size() - kHeader) / kEntry);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t e = entry_at(i);
    const uint64_t off = get_le(s, e + 8, 8), stored = get_le(s, e + 16, 8);
    if (off <= s.size() && stored <= s.size() - off) put_le(s, e + 32, crc_of(s, off, stored), 4);
    put_le(s, e + 36, crc_of(s, e, 36), 4);
  }
  put_le(s, 60, crc_of(s, 0, 60), 4);
}

// ---- The decoder under observation -------------------------------------------------------

/// CPU seconds consumed so far on `clock`: CLOCK_THREAD_CPUTIME_ID (the calling thread, where
/// a serial decoder does all its work) or CLOCK_PROCESS_CPUTIME_ID (every thread of the
/// process, OpenMP workers included). Unlike wall time, neither grows when other processes
/// (a parallel build) take the cores: what a budget on it measures is the decoder's work.
double cpu_seconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

/// Aborts with the case description when one decompress call runs far too long, so a
/// hang is reported with its reproducer instead of as a bare ctest timeout. Wall time on
/// purpose: a decoder blocked without using the CPU (a deadlock) must trip it too.
class Watchdog {
 public:
  static constexpr auto kHangLimit = std::chrono::seconds(60);
  Watchdog() : thread_([this] { watch(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void begin(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    what_ = what;
    started_ = Clock::now();
    busy_ = true;
  }
  void end() {
    std::lock_guard<std::mutex> lock(mu_);
    busy_ = false;
  }

 private:
  void watch() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::seconds(1));
      if (busy_ && Clock::now() - started_ > kHangLimit) {
        std::fprintf(stderr, "decompress hung (> %llds) on: %s\n",
                     static_cast<long long>(kHangLimit.count()), what_.c_str());
        std::abort();
      }
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::string what_;
  Clock::time_point started_;
  bool busy_ = false;
  bool stop_ = false;
  std::thread thread_;
};

/// Runs decompress on many inputs and checks each outcome; gtest failures are capped so
/// one systematic bug does not print thousands of lines. The time budgets (kMaxCallSeconds
/// per call, expect_timely's total) are on the CPU time the decompress calls consumed: the
/// calling thread's for the serial policy, the whole process's for OpenMP (its workers'
/// time counts; the watchdog thread, asleep but once a second, adds nothing measurable). A
/// decoder that loops or does far too much work on a corrupt stream exceeds them however
/// idle the machine; a loaded machine does not.
class Prober {
 public:
  static constexpr double kMaxCallSeconds = 2.0;
  static constexpr int kMaxReported = 8;

  explicit Prober(DecompressOptions options = {Policy::serial, 1})
      : options_(options),
        cpu_clock_(options.policy == Policy::serial ? CLOCK_THREAD_CPUTIME_ID : CLOCK_PROCESS_CPUTIME_ID) {}

  /// Decompresses `s`; returns true if a field came back. `must_fail`: the input is one
  /// the container must reject (unresealed corruption, truncation, garbage).
  bool probe(const Bytes& s, const std::string& what, bool must_fail = false) {
    ++calls_;
    dog_.begin(what);
    const auto t0 = Clock::now();
    const double cpu0 = cpu_seconds(cpu_clock_);
    bool threw = false;
    std::string exception_text;
    Result<VectorField2D> r = Status(Code::internal, "not run");
    try {
      r = decompress(s, options_);
    } catch (const std::exception& e) {
      threw = true;
      exception_text = e.what();
    } catch (...) {
      threw = true;
      exception_text = "(not a std::exception)";
    }
    const double secs = cpu_seconds(cpu_clock_) - cpu0;
    dog_.end();
    wall_seconds_ += std::chrono::duration<double>(Clock::now() - t0).count();
    total_seconds_ += secs;
    if (secs > max_seconds_) {
      max_seconds_ = secs;
      slowest_ = what;
    }
    if (threw) return report(what + ": decompress threw " + exception_text);
    if (!r.ok()) {
      ++rejected_;
      const Code c = r.status().code();
      if (c != Code::corrupt_stream && c != Code::unsupported_version)
        return report(what + ": unexpected error code " + r.status().to_string());
      if (r.status().message().empty()) return report(what + ": error without a message");
      return false;
    }
    ++decoded_;
    if (must_fail) {
      report(what + ": corrupted stream was accepted");
      return true;
    }
    const VectorField2D& f = r.value();
    const auto [declared_nx, declared_ny] = declared_grid(s);
    const bool dims_ok = f.nx == int64_t(declared_nx) && f.ny == int64_t(declared_ny);
    if (!dims_ok || f.nx <= 0 || f.ny <= 0 || f.u.size() != size_t(f.nx * f.ny) ||
        f.v.size() != size_t(f.nx * f.ny))
      report(what + ": decoded field does not have the declared size");
    // Not a failure (the format does not forbid it yet), but worth seeing in the summary.
    for (const auto* plane : {&f.u, &f.v})
      if (std::any_of(plane->begin(), plane->end(), [](float x) { return !std::isfinite(x); })) {
        ++non_finite_;
        break;
      }
    return true;
  }

  /// Asserts the time budget, `max_total_seconds` of CPU time in all the calls (and
  /// kMaxCallSeconds in each); call once at the end of a test.
  void expect_timely(double max_total_seconds) const {
    EXPECT_LE(max_seconds_, kMaxCallSeconds) << "CPU seconds of the slowest call: " << slowest_;
    EXPECT_LE(total_seconds_, max_total_seconds) << "CPU seconds in " << calls_ << " calls";
    if (failures_ > kMaxReported) ADD_FAILURE() << failures_ << " bad outcomes in all";
    std::printf("[ prober ] %lld calls, %lld rejected, %lld decoded (%lld with NaN/Inf), %.2f s CPU in decompress "
                "(%.2f s wall), slowest %.4f s CPU\n",
                static_cast<long long>(calls_), static_cast<long long>(rejected_),
                static_cast<long long>(decoded_), static_cast<long long>(non_finite_), total_seconds_,
                wall_seconds_, max_seconds_);
  }
  int64_t rejected() const { return rejected_; }

 private:
  bool report(const std::string& message) {
    if (++failures_ <= kMaxReported) ADD_FAILURE() << message;
    return false;
  }

  DecompressOptions options_;
  clockid_t cpu_clock_;  ///< what the budgets measure (see the class comment)
  Watchdog dog_;
  int64_t calls_ = 0, rejected_ = 0, decoded_ = 0, non_finite_ = 0, failures_ = 0;
  double total_seconds_ = 0, max_seconds_ = 0;  ///< CPU seconds
  double wall_seconds_ = 0;                     ///< for the summary line only
  std::string slowest_;
};

// ---- Test streams --------------------------------------------------------------------------
struct NamedStream {
  std::string name;
  Bytes bytes;
};

Bytes compressed(const VectorField2D& f, Mode mode, double rel, bool zstd, Coder coder = Coder::huffman) {
  Options o;
  o.mode = mode;
  o.coder = coder;
  o.bound_mode = BoundMode::rel;
  o.bound = rel;
  o.zstd = zstd;
  o.policy = Policy::serial;
  auto r = compress(f, o);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? r.value() : Bytes{};
}

/// Small streams (40 x 30): cheap enough to corrupt at every byte. Small-scale turbulence
/// makes block mode store many vertices exactly; vortices give short smooth streams.
const std::vector<NamedStream>& small_streams() {
  static const std::vector<NamedStream> kStreams = [] {
    const VectorField2D turbulent = synth::turbulence(40, 30, 71, 3.0);
    const VectorField2D smooth = synth::vortices(40, 30, 71, 8);
    return std::vector<NamedStream>{
        {"block_zstd_40x30", compressed(turbulent, Mode::block, 1e-2, true)},
        {"block_raw_40x30", compressed(smooth, Mode::block, 1e-2, false)},
        {"none_zstd_40x30", compressed(smooth, Mode::none, 1e-1, true)},
        {"none_raw_40x30", compressed(turbulent, Mode::none, 1e-1, false)},
        {"speculative_zstd_40x30", compressed(turbulent, Mode::speculative, 1e-2, true)},
        {"speculative_raw_40x30", compressed(smooth, Mode::speculative, 1e-3, false)},
        {"speculative_ans_40x30", compressed(turbulent, Mode::speculative, 1e-2, false, Coder::ans)},
        {"block_ans_40x30", compressed(turbulent, Mode::block, 1e-2, true, Coder::ans)},
    };
  }();
  return kStreams;
}

/// A larger field with land-like zero regions: several tiles, exact tiles, outliers.
const std::vector<NamedStream>& land_streams() {
  static const std::vector<NamedStream> kStreams = [] {
    VectorField2D f = synth::turbulence(100, 70, 72);
    synth::add_zero_region(f, 73, 0.3);
    return std::vector<NamedStream>{
        {"block_zstd_land_100x70", compressed(f, Mode::block, 1e-3, true)},
        {"none_raw_land_100x70", compressed(f, Mode::none, 1e-2, false)},
        {"speculative_zstd_land_100x70", compressed(f, Mode::speculative, 1e-3, true)},
    };
  }();
  return kStreams;
}

std::string where(const std::string& stream, const std::string& what) { return stream + ": " + what; }

TEST(StreamRobustness, TestStreamsDecode) {
  for (const auto* set : {&small_streams(), &land_streams()})
    for (const auto& s : *set) {
      std::printf("[ stream ] %s: %zu bytes, zstd flag %d\n", s.name.c_str(), s.bytes.size(), int(zstd_flag(s.bytes)));
      ASSERT_TRUE(is_compact(s.bytes)) << s.name << ": compress writes the compact container";
      ASSERT_GT(s.bytes.size(), payload_begin(s.bytes)) << s.name;
      auto r = decompress(s.bytes);
      ASSERT_TRUE(r.ok()) << s.name << ": " << r.status().to_string();
    }
}

// ---- Corruptions the container must catch ----------------------------------------------------
TEST(StreamRobustness, EverySingleByteFlipIsRejected) {
  Prober p;
  for (const auto& s : small_streams()) {
    for (std::size_t i = 0; i < s.bytes.size(); ++i)
      for (uint8_t mask : {0x01, 0x80, 0xFF}) {
        Bytes b = s.bytes;
        b[i] ^= mask;
        p.probe(b, where(s.name, "byte " + std::to_string(i) + " ^ " + std::to_string(mask)), true);
      }
  }
  p.expect_timely(20.0);
}

TEST(StreamRobustness, EveryTruncationIsRejected) {
  Prober p;
  for (const auto& s : small_streams())
    for (std::size_t n = 0; n < s.bytes.size(); ++n)
      p.probe(Bytes(s.bytes.begin(), s.bytes.begin() + n), where(s.name, "first " + std::to_string(n) + " bytes"),
              true);
  for (const auto& s : land_streams())
    for (std::size_t n = 0; n < s.bytes.size(); n += 1 + n / 16)
      p.probe(Bytes(s.bytes.begin(), s.bytes.begin() + n), where(s.name, "first " + std::to_string(n) + " bytes"),
              true);
  p.expect_timely(10.0);
}

TEST(StreamRobustness, RandomGarbageOfManySizesIsRejected) {
  Prober p;
  std::mt19937_64 rng(2024);
  std::vector<std::size_t> sizes;
  for (std::size_t n = 0; n <= 300; ++n) sizes.push_back(n);
  for (std::size_t n : {511, 512, 1000, 4096, 65536, 1 << 20}) sizes.push_back(n);
  for (std::size_t n : sizes) {
    for (int variant = 0; variant < 3; ++variant) {
      Bytes b(n);
      for (auto& x : b) x = uint8_t(rng());
      // Variants 1 and 2 get past the magic (and the version) check, variant 2 also past
      // the header checksum.
      if (variant >= 1 && n >= 6) std::memcpy(b.data(), "FCTZ\x01\x00", 6);
      if (variant == 2) reseal(b);
      p.probe(b, "garbage of " + std::to_string(n) + " bytes, variant " + std::to_string(variant), true);
    }
  }
  p.probe(Bytes(1000, 0), "zeros", true);
  p.probe(Bytes(1000, 0xFF), "ones", true);
  p.expect_timely(10.0);
}

TEST(StreamRobustness, AppendedBytesAreRejected) {
  Prober p;
  for (const auto* set : {&small_streams(), &land_streams()})
    for (const auto& s : *set) {
      for (std::size_t extra : {1, 2, 7, 64, 4096}) {
        for (uint8_t fill : {0x00, 0xA5}) {
          Bytes b = s.bytes;
          b.insert(b.end(), extra, fill);
          p.probe(b, where(s.name, std::to_string(extra) + " bytes appended"), true);
        }
      }
      Bytes twice = s.bytes;
      twice.insert(twice.end(), s.bytes.begin(), s.bytes.end());
      p.probe(twice, where(s.name, "stream twice"), true);
    }
  p.expect_timely(5.0);
}

// ---- Resealed corruptions: the mode decoders see them ---------------------------------------
TEST(StreamRobustness, ResealedByteFlipsInSectionsFailCleanlyOrDecodeToTheRightSize) {
  Prober p;
  const uint8_t masks[] = {0x01, 0x80, 0xFF};
  for (const auto& s : small_streams()) {
    // Every mask at every byte of the short streams; one mask per byte, in turn, in the
    // longest one (each call costs about as much as decoding a real stream).
    const bool every_mask = s.bytes.size() < 2500;
    for (std::size_t i = payload_begin(s.bytes); i < s.bytes.size(); ++i)
      for (uint8_t mask : masks) {
        if (!every_mask && mask != masks[i % 3]) continue;
        Bytes b = s.bytes;
        b[i] ^= mask;
        reseal(b);
        p.probe(b, where(s.name, "resealed byte " + std::to_string(i) + " ^ " + std::to_string(mask)));
      }
  }
  p.expect_timely(20.0);
  EXPECT_GT(p.rejected(), 0);
}

TEST(StreamRobustness, ResealedRandomMutationsFailCleanlyOrDecodeToTheRightSize) {
  std::mt19937_64 rng(7);
  Prober serial;
  Prober parallel(DecompressOptions{Policy::omp, 2});
  auto run = [&](const NamedStream& s, int trials, Prober& p) {
    const std::size_t lo = payload_begin(s.bytes);
    for (int t = 0; t < trials; ++t) {
      Bytes b = s.bytes;
      const int edits = 1 + int(rng() % 8);
      for (int k = 0; k < edits; ++k) b[lo + rng() % (b.size() - lo)] = uint8_t(rng());
      reseal(b);
      p.probe(b, where(s.name, "random mutation trial " + std::to_string(t) + " (seed 7)"));
    }
  };
  for (const auto& s : small_streams()) run(s, 500, serial);
  for (const auto& s : land_streams()) run(s, 150, parallel);
  // CPU-time budgets: the OpenMP prober's counts both threads' work, hence the larger one.
  serial.expect_timely(10.0);
  parallel.expect_timely(15.0);
}

// decompress_into is the same decoder writing into caller planes: on corrupted streams it
// must reach the same verdict and, when it succeeds, the same values.
TEST(StreamRobustness, DecompressIntoAgreesWithDecompressOnCorruptedStreams) {
  std::mt19937_64 rng(13);
  const DecompressOptions serial{Policy::serial, 1};
  int disagreements = 0;
  for (const auto& s : small_streams()) {
    const std::size_t lo = payload_begin(s.bytes);
    for (int t = 0; t < 150; ++t) {
      Bytes b = s.bytes;
      for (int k = 0, edits = 1 + int(rng() % 4); k < edits; ++k) b[lo + rng() % (b.size() - lo)] ^= uint8_t(1 + rng() % 255);
      reseal(b);
      auto dims = stream_dims(b);
      if (!dims.ok()) {
        // stream_dims also checks the per-vertex stream's own symbol count (so a caller
        // never allocates for a grid the payload cannot fill); decompress must agree.
        auto whole = decompress(b, serial);
        EXPECT_FALSE(whole.ok()) << s.name << ": stream_dims rejected what decompress accepted";
        if (!whole.ok()) {
          EXPECT_EQ(whole.status().to_string(), dims.status().to_string()) << s.name;
        }
        continue;
      }
      const auto [nx, ny] = dims.value();
      const auto [declared_nx, declared_ny] = declared_grid(b);
      ASSERT_EQ(nx * ny, int64_t(declared_nx * declared_ny));
      std::vector<float> u(size_t(nx * ny)), v(size_t(nx * ny));
      const Status into = decompress_into(b, u, v, serial);
      auto whole = decompress(b, serial);
      const bool same = into.ok() == whole.ok() &&
                        (!into.ok() || (std::memcmp(u.data(), whole->u.data(), u.size() * 4) == 0 &&
                                        std::memcmp(v.data(), whole->v.data(), v.size() * 4) == 0));
      if (!same && ++disagreements <= 5)
        ADD_FAILURE() << s.name << " trial " << t << ": decompress_into " << into.to_string() << ", decompress "
                      << whole.status().to_string();
    }
    // Planes of the wrong size are the caller's error, checked before any decoding.
    std::vector<float> small(10), right(size_t(40 * 30));
    EXPECT_EQ(decompress_into(s.bytes, small, right).code(), Code::invalid_argument) << s.name;
    EXPECT_EQ(decompress_into(s.bytes, right, small).code(), Code::invalid_argument) << s.name;
    EXPECT_FALSE(stream_dims(Bytes(s.bytes.begin(), s.bytes.end() - 1)).ok()) << s.name;
  }
  EXPECT_EQ(disagreements, 0);
}

// Streams rebuilt (with the library's own writer) from mutated raw section contents: the
// zstd stage is removed so the mutation lands in the bytes the mode decoders parse.
struct RawSections {
  detail::Header header;
  std::vector<detail::Section> sections;
};

RawSections explode(const Bytes& stream) {
  RawSections out;
  auto parsed = detail::parse_container(stream);
  EXPECT_TRUE(parsed.ok()) << parsed.status().to_string();
  if (!parsed.ok()) return out;
  out.header = parsed->header;
  const detail::Decompressor unzstd = [](std::span<const uint8_t> in, uint64_t raw, Bytes& o) {
    return detail::zstd_decompress(in, raw, o);
  };
  for (const auto& e : parsed->entries) {
    auto raw = detail::read_section(stream, parsed.value(), e.id, &unzstd);
    EXPECT_TRUE(raw.ok()) << raw.status().to_string();
    out.sections.push_back({e.id, raw.ok() ? raw.value() : Bytes{}, false});
  }
  return out;
}

Bytes assemble(const RawSections& r) {
  auto s = detail::write_container(r.header, r.sections, nullptr);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? s.value() : Bytes{};
}

TEST(StreamRobustness, MutatedSectionContentsFailCleanlyOrDecodeToTheRightSize) {
  Prober p;
  std::mt19937_64 rng(11);
  for (const auto* set : {&small_streams(), &land_streams()}) {
    for (const auto& s : *set) {
      const RawSections base = explode(s.bytes);
      ASSERT_FALSE(base.sections.empty());
      ASSERT_TRUE(decompress(assemble(base)).ok()) << s.name << ": rebuilding a valid stream must keep it valid";
      const bool small = set == &small_streams();
      for (std::size_t k = 0; k < base.sections.size(); ++k) {
        const std::string sec = detail::section_name(base.sections[k].id);
        const std::size_t n = base.sections[k].raw.size();
        // Byte flips (the masks 0x01, 0x80, 0xFF in turn): every byte of the small streams,
        // a sample of the larger ones.
        const std::size_t step = small ? 1 : 1 + n / 64;
        for (std::size_t i = 0; i < n; i += step) {
          const uint8_t mask = uint8_t(i % 3 == 0 ? 0x01 : i % 3 == 1 ? 0x80 : 0xFF);
          RawSections m = base;
          m.sections[k].raw[i] ^= mask;
          p.probe(assemble(m), where(s.name, sec + " byte " + std::to_string(i) + " ^ " + std::to_string(mask)));
        }
        // Truncated (every length up to 64, then a sample), extended and emptied sections.
        for (std::size_t len = 0; len < n; len += len < 64 ? 1 : 1 + n / (small ? 64 : 16)) {
          RawSections m = base;
          m.sections[k].raw.resize(len);
          p.probe(assemble(m), where(s.name, sec + " cut to " + std::to_string(len) + " bytes"));
        }
        for (std::size_t extra : {1, 3, 100}) {
          RawSections m = base;
          for (std::size_t e = 0; e < extra; ++e) m.sections[k].raw.push_back(uint8_t(rng()));
          p.probe(assemble(m), where(s.name, sec + " + " + std::to_string(extra) + " random bytes"));
        }
        RawSections removed = base;
        removed.sections.erase(removed.sections.begin() + std::ptrdiff_t(k));
        p.probe(assemble(removed), where(s.name, sec + " removed"));
        // Random contents of the same size.
        for (int t = 0; t < 10; ++t) {
          RawSections m = base;
          for (auto& x : m.sections[k].raw) x = uint8_t(rng());
          p.probe(assemble(m), where(s.name, sec + " random contents, trial " + std::to_string(t)));
        }
      }
      // One plane's sections in place of the other's.
      RawSections swapped = base;
      for (auto& sec : swapped.sections) {
        if (sec.id == detail::kSectionCodesU) sec.id = detail::kSectionCodesV;
        else if (sec.id == detail::kSectionCodesV) sec.id = detail::kSectionCodesU;
      }
      p.probe(assemble(swapped), where(s.name, "codes_u and codes_v swapped"));
    }
  }
  p.expect_timely(20.0);
}

TEST(StreamRobustness, ResealedHeaderFieldsFailCleanlyOrDecodeToTheRightSize) {
  Prober p;
  for (const auto& s : small_streams()) {
    const RawSections base = explode(s.bytes);
    auto with = [&](const std::string& what, auto&& change) {
      RawSections m = base;
      change(m.header);
      auto b = detail::write_container(m.header, m.sections, nullptr);
      if (!b.ok()) return;  // a header the writer refuses is the container test's business
      p.probe(b.value(), where(s.name, what));
    };
    for (uint8_t mode : {0, 1, 2}) with("mode " + std::to_string(mode), [&](auto& h) { h.mode = mode; });
    for (uint8_t coder : {0, 1}) with("coder " + std::to_string(coder), [&](auto& h) { h.coder = coder; });
    for (uint8_t c : {1, 2}) with("components " + std::to_string(c), [&](auto& h) { h.components = c; });
    for (uint16_t tile : {1, 16, 31, 33, 64, 65535})
      with("tile " + std::to_string(tile), [&](auto& h) { h.tile = tile; });
    for (float eb : {0.0f, 1e-30f, 1e-3f, 1.0f, 1e30f, 0x1p126f, 0x1p127f, 3.4e38f})
      with("eb " + std::to_string(eb), [&](auto& h) { h.eb = eb; });
    for (uint16_t stride : {1, 16}) with("anchor stride", [&](auto& h) { h.anchor_stride = stride; });
    // Grids near the real one (same tile count or not) and transposed.
    const uint64_t nx = base.header.nx, ny = base.header.ny;
    const uint64_t dims[][2] = {{nx - 1, ny},  {nx + 1, ny},  {nx, ny - 1}, {nx, ny + 1}, {ny, nx},
                                {1, nx * ny},  {nx * ny, 1},  {1, 1},       {nx + 33, ny}, {nx * 2, ny * 2},
                                {nx / 2, ny * 2}};
    for (const auto& d : dims)
      with("grid " + std::to_string(d[0]) + " x " + std::to_string(d[1]), [&](auto& h) {
        h.nx = d[0];
        h.ny = d[1];
      });
  }
  p.expect_timely(10.0);
}

// docs/format.md: a reader must never "allocate memory in proportion to a size field
// alone". A header claiming a huge grid over tiny sections must be refused with
// corrupt_stream before the grid-sized buffers exist (not with std::bad_alloc, and not
// after zero-filling gigabytes).
TEST(StreamRobustness, HugeDeclaredGridIsRejectedWithoutAllocatingIt) {
  Prober p;
  for (const auto& s : small_streams()) {
    RawSections m = explode(s.bytes);
    // 2^37 vertices (within the format's 2^40): grid-sized buffers of hundreds of GiB, more
    // than any test machine has, so the bug shows as std::bad_alloc rather than as an
    // exhausted machine. The sections still describe 40 x 30 values.
    m.header.nx = uint64_t{1} << 19;
    m.header.ny = uint64_t{1} << 18;
    auto b = detail::write_container(m.header, m.sections, nullptr);
    ASSERT_TRUE(b.ok()) << b.status().to_string();
    EXPECT_FALSE(p.probe(b.value(), where(s.name, "header claims 2^19 x 2^18")));
    // The same claim with no code sections at all to contradict it.
    std::erase_if(m.sections, [](const detail::Section& sec) {
      return sec.id == detail::kSectionCodesU || sec.id == detail::kSectionCodesV;
    });
    b = detail::write_container(m.header, m.sections, nullptr);
    ASSERT_TRUE(b.ok()) << b.status().to_string();
    EXPECT_FALSE(p.probe(b.value(), where(s.name, "header claims 2^19 x 2^18, no code sections")));
  }
  p.expect_timely(2.0);
}

// A zstd section may declare any raw size up to the container's cap (32 bytes per value);
// a size the zstd stage refuses is still a corrupt stream, not an invalid argument.
TEST(StreamRobustness, ImplausibleZstdRawSizeIsACorruptStream) {
  Prober p;
  RawSections m = explode(small_streams()[0].bytes);
  m.header.nx = uint64_t{1} << 18;
  m.header.ny = uint64_t{1} << 18;  // cap: 32 * 2^36 * 2 bytes, above zstd's 2^40
  for (auto& sec : m.sections) {
    sec.zstd = sec.id == detail::kSectionTileBounds;
    if (sec.zstd) sec.raw.assign(1000, 0);  // compressible, so it is stored as a zstd frame
  }
  const detail::Compressor zstd = [](std::span<const uint8_t> in, Bytes& out) {
    return detail::zstd_compress(in, 3, out);
  };
  // In the classic container, whose raw size is a fixed 8-byte field (the compact one's is
  // a varint: test_container_compact.cpp).
  auto b = detail::write_container(m.header, m.sections, &zstd, detail::ContainerLayout::classic);
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  Bytes s = b.value();
  bool edited = false;
  for (std::size_t i = 0; i < section_count(s); ++i)
    if (get_le(s, entry_at(i), 4) == detail::kSectionTileBounds && (get_le(s, entry_at(i) + 4, 4) & 1)) {
      put_le(s, entry_at(i) + 24, uint64_t{1} << 41, 8);
      edited = true;
    }
  ASSERT_TRUE(edited) << "tile_bounds was not stored compressed";
  reseal(s);
  EXPECT_FALSE(p.probe(s, "tile_bounds declares 2^41 raw bytes"));
  p.expect_timely(1.0);
}

// A decoder that runs out of memory says what the stream holds and what its output needs,
// so that a field too large for the machine is told from a damaged stream (`factz
// decompress` under `ulimit -v` on a 3000 x 3000 field: "out of memory decompressing a 3000 x
// 3000 float32 2D vector field: its output planes alone need 72 MB").
TEST(StreamRobustness, OutOfMemoryNamesTheGridAndWhatItsOutputNeeds) {
  auto s = compress(synth::turbulence(300, 200, 3), Options{});
  ASSERT_TRUE(s.ok());
  const Status st = detail::out_of_memory_decoding(s.value());
  EXPECT_EQ(st.code(), Code::internal);
  EXPECT_EQ(st.message(), "out of memory decompressing a 300 x 200 float32 2D vector field: its output planes "
                          "alone need 0.48 MB");
  EXPECT_NE(detail::out_of_memory_decoding(s.value(), " on the GPU").message().find("vector field on the GPU: its"),
            std::string::npos);
  std::vector<uint8_t> bad = s.value();
  bad[70] ^= 1;  // a damaged table: nothing to tell but the failure
  EXPECT_EQ(detail::out_of_memory_decoding(bad).message(), "out of memory decompressing");
}

}  // namespace
}  // namespace factz
