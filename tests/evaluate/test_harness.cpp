// The evaluation harness: rows and their columns, CSV/JSON output, the Table 2 logic,
// the baselines, the turbulence generator and the `evaluate` program.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "baselines.hpp"
#include "factz/io.hpp"
#include "factz/topology.hpp"
#include "harness.hpp"
#include "report.hpp"
#include "support.hpp"
#include "synth.hpp"
#include "turbulence.hpp"

namespace {

using namespace factz;
using namespace factz::eval;
using namespace factz::eval_test;

const std::vector<std::string> kColumns = {
    "sweep", "field", "nx", "ny", "compressor", "coder", "bound", "eb_abs", "raw_bytes", "compressed_bytes",
    "ratio", "bit_rate", "psnr", "max_error", "nrmse", "cp_original", "cp_decompressed", "lost", "spurious",
    "type_changed", "violations", "compress_mbps", "decompress_mbps", "repeats", "bound_respected"};

struct Compressors {
  std::vector<std::unique_ptr<Compressor>> owned;
  std::vector<const Compressor*> sweep, throughput;
  Compressors() {
    owned.push_back(make_zstd(3, 1));
    owned.push_back(make_zstd(19, 1));
    owned.push_back(make_zfp(1));
    for (Mode m : {Mode::none, Mode::block, Mode::speculative}) owned.push_back(make_factz(m, Coder::huffman, 2));
    for (auto& c : owned) sweep.push_back(c.get());
    for (Mode m : {Mode::block, Mode::speculative}) {
      owned.push_back(make_factz(m, Coder::ans, 2));
      throughput.push_back(owned.back().get());
    }
  }
};

Settings tiny_settings() {
  Settings s;
  s.bounds = {1e-1, 1e-2, 0.0};
  s.repeats = 1;
  s.threads = 2;
  return s;
}

TEST(Harness, DefaultBoundsAreHalfDecadesFromTenthToOneHundredThousandthThenZero) {
  const auto b = default_bounds();
  ASSERT_EQ(b.size(), 10u);
  EXPECT_DOUBLE_EQ(b.front(), 1e-1);
  EXPECT_NEAR(b[1], 0.0316227766, 1e-10);
  EXPECT_NEAR(b[8], 1e-5, 1e-18);
  EXPECT_EQ(b.back(), 0.0);
  for (size_t k = 1; k + 1 < b.size(); ++k) EXPECT_NEAR(b[k - 1] / b[k], std::sqrt(10.0), 1e-9);
}

TEST(Harness, EveryCompressorOnATinyTurbulenceFieldGivesConsistentRows) {
  const VectorField2D f = synth::turbulence(48, 40, 3);
  Compressors c;
  std::vector<std::string> progress;
  auto rows = evaluate_field("tiny", f, c.sweep, c.throughput, tiny_settings(),
                             [&](const std::string& s) { progress.push_back(s); });
  ASSERT_TRUE(rows.ok()) << rows.status().to_string();
  // zstd-3 and zstd-19 once (lossless), four lossy compressors at three bounds, two throughput rows.
  ASSERT_EQ(rows->size(), 2u + 4u * 3u + 2u);
  EXPECT_EQ(progress.size(), rows->size());
  const double range = value_range(f);
  for (const Row& r : rows.value()) {
    SCOPED_TRACE(r.compressor + " " + r.coder + " " + std::to_string(r.bound));
    EXPECT_EQ(r.field, "tiny");
    EXPECT_EQ(r.raw_bytes, 8 * 48 * 40);
    EXPECT_GT(r.compressed_bytes, 0);
    EXPECT_NEAR(r.ratio, double(r.raw_bytes) / double(r.compressed_bytes), 1e-12);
    EXPECT_NEAR(r.bit_rate, 32.0 / r.ratio, 1e-9);
    EXPECT_DOUBLE_EQ(r.eb_abs, r.bound * range);
    EXPECT_GT(r.cp_original, 0);
    EXPECT_TRUE(r.bound_respected);
    EXPECT_LE(r.max_error, r.eb_abs);
    EXPECT_GT(r.compress_mbps, 0);
    EXPECT_GT(r.decompress_mbps, 0);
    EXPECT_EQ(r.repeats, 1);
    if (r.bound == 0) {  // the limiting case is lossless for every compressor here
      EXPECT_EQ(r.max_error, 0);
      EXPECT_TRUE(std::isinf(r.psnr));
      EXPECT_EQ(r.violations(), 0);
    }
    if (r.compressor == "factz-B" || r.compressor == "factz-S") {
      EXPECT_EQ(r.violations(), 0);
    }
  }
  // The topology-agnostic baselines do break topology on this field at REL 1e-1.
  int64_t agnostic_violations = 0;
  for (const Row& r : rows.value())
    if ((r.compressor == "zfp" || r.compressor == "factz-none") && r.bound == 1e-1) agnostic_violations += r.violations();
  EXPECT_GT(agnostic_violations, 0);
}

TEST(Harness, LargeFieldsSweepTheirOwnBoundsSkipSlowCompressorsAndReuseSweepRows) {
  const VectorField2D f = synth::turbulence(20, 20, 6);
  Compressors c;
  auto block_huffman = make_factz(Mode::block, Coder::huffman, 2);
  Settings s = tiny_settings();
  s.large_vertices = 100;  // 400 vertices count as large here
  s.large_bounds = {1e-2, 0.0};
  s.slow_max_vertices = 100;
  int lines = 0;
  auto rows = evaluate_field("big", f, c.sweep, {block_huffman.get()}, s, [&](const std::string&) { ++lines; });
  ASSERT_TRUE(rows.ok()) << rows.status().to_string();
  // zstd-3 once, zstd-19 skipped, four lossy compressors at two bounds, one reused row.
  ASSERT_EQ(rows->size(), 1u + 4u * 2u + 1u);
  std::set<double> bounds;
  for (const Row& r : rows.value()) {
    EXPECT_NE(r.compressor, "zstd-19");
    bounds.insert(r.bound);
  }
  EXPECT_EQ(bounds, (std::set<double>{0.0, 1e-2}));
  const Row& last = rows->back();
  EXPECT_EQ(last.sweep, "throughput");
  const Row& swept = *std::find_if(rows->begin(), rows->end(), [](const Row& r) {
    return r.sweep == "bounds" && r.compressor == "factz-B" && r.bound == 1e-2;
  });
  EXPECT_EQ(last.compressed_bytes, swept.compressed_bytes);
  EXPECT_EQ(last.compress_mbps, swept.compress_mbps);
  EXPECT_EQ(lines, 1 + 9);  // the skip line and one per measured row, none for the reused one
}

TEST(Harness, MeasureAgreesWithTheLibraryComparison) {
  const VectorField2D f = synth::turbulence(40, 36, 11);
  Options o;
  o.mode = Mode::none;
  o.bound = 5e-2;
  auto s = compress(f, o);
  ASSERT_TRUE(s.ok());
  auto d = decompress(s.value());
  ASSERT_TRUE(d.ok());
  auto sig = signatures(f);
  ASSERT_TRUE(sig.ok());
  auto m = measure(f, sig.value(), d.value());
  auto c = compare(f, d.value());
  ASSERT_TRUE(m.ok() && c.ok());
  EXPECT_GT(c->violations(), 0);
  EXPECT_EQ(m->lost, c->lost);
  EXPECT_EQ(m->spurious, c->spurious);
  EXPECT_EQ(m->type_changed, c->type_changed);
  EXPECT_EQ(m->cp_original, c->cp_original);
  EXPECT_EQ(m->cp_decompressed, c->cp_decompressed);
  EXPECT_DOUBLE_EQ(m->max_error, std::max(c->max_abs_error[0], c->max_abs_error[1]));
  EXPECT_NEAR(m->psnr, c->psnr, 1e-9);
  VectorField2D small{2, 2, {0, 0, 0, 0}, {0, 0, 0, 0}};
  EXPECT_FALSE(measure(f, sig.value(), small).ok());
}

TEST(Harness, ConstantAndZeroFieldsAreHandledWithoutDivisionTroubles) {
  Compressors c;
  for (float value : {0.0f, 2.5f}) {
    VectorField2D f{5, 4, std::vector<float>(20, value), std::vector<float>(20, value)};
    auto rows = evaluate_field("flat", f, c.sweep, {}, tiny_settings());
    ASSERT_TRUE(rows.ok()) << rows.status().to_string();
    for (const Row& r : rows.value()) {
      EXPECT_EQ(r.eb_abs, 0.0);  // zero range: every REL bound is 0
      EXPECT_EQ(r.max_error, 0.0);
      EXPECT_EQ(r.violations(), 0);
      EXPECT_TRUE(std::isinf(r.psnr));
      EXPECT_TRUE(std::isfinite(r.ratio));
    }
  }
}

TEST(Harness, CsvAndJsonAreWellFormedWithTheDocumentedColumns) {
  const VectorField2D f = synth::turbulence(32, 24, 5);
  Compressors c;
  auto rows = evaluate_field("f32x24", f, c.sweep, c.throughput, tiny_settings());
  ASSERT_TRUE(rows.ok());
  TempDir dir;
  ASSERT_TRUE(write_csv(dir / "r.csv", rows.value()).ok());
  const auto ls = lines(read_text(dir / "r.csv"));
  ASSERT_EQ(ls.size(), rows->size() + 1);
  EXPECT_EQ(split(ls[0], ','), kColumns);
  for (size_t k = 1; k < ls.size(); ++k) {
    const auto cells = split(ls[k], ',');
    ASSERT_EQ(cells.size(), kColumns.size()) << ls[k];
    EXPECT_EQ(cells[1], "f32x24");
    EXPECT_EQ(cells[4], rows.value()[k - 1].compressor);
    EXPECT_EQ(std::stoll(cells[20]), rows.value()[k - 1].violations());
  }
  ASSERT_TRUE(write_json(dir / "r.json", rows.value(), {{"note", "a \"quoted\" value"}}).ok());
  const std::string json = read_text(dir / "r.json");
  EXPECT_NE(json.find("\"note\": \"a \\\"quoted\\\" value\""), std::string::npos);
  size_t objects = 0;
  for (size_t p = json.find("{\"sweep\""); p != std::string::npos; p = json.find("{\"sweep\"", p + 1)) ++objects;
  EXPECT_EQ(objects, rows->size());
  // inf (lossless PSNR) must not leak into JSON as a bare word.
  EXPECT_EQ(json.find(": inf"), std::string::npos);
  // A real JSON parser agrees, where the system Python is there.
  if (fs::exists("/usr/bin/python3")) {
    std::string out;
    const std::string cmd = "/usr/bin/python3 -c \"import json,sys; d=json.load(open('" + (dir / "r.json") +
                            "')); cols=" + "[" + [] {
                              std::string s;
                              for (const auto& c : kColumns) s += (s.empty() ? "'" : ",'") + c + "'";
                              return s;
                            }() + "]; assert all(list(r)==cols for r in d['rows']); print(len(d['rows']))\"";
    ASSERT_EQ(run(cmd, out, dir), 0) << out;
    EXPECT_EQ(std::stoul(out), rows->size());
  }
}

Row make_row(const std::string& comp, double bound, int64_t lost, double ratio) {
  Row r;
  r.sweep = "bounds";
  r.field = "f";
  r.compressor = comp;
  r.coder = comp.rfind("factz", 0) == 0 ? "huffman" : "-";
  r.bound = bound;
  r.lost = lost;
  r.ratio = ratio;
  return r;
}

TEST(Table2, TheLoosestPreservingBoundIsTheFirstZeroViolationRowFromTheLoosestDown) {
  // Given out of order, with a non-monotone baseline: preserved at 3.16e-2, broken at 1e-2.
  std::vector<Row> rows = {
      make_row("zfp", 1e-2, 2, 6.0),        make_row("zfp", 1e-1, 5, 20.0),  make_row("zfp", 0, 0, 1.3),
      make_row("zfp", 3.16e-2, 0, 9.0),     make_row("zfp", 1e-3, 0, 4.0),   make_row("factz-none", 1e-1, 3, 30.0),
      make_row("factz-none", 1e-2, 1, 12.0), make_row("factz-B", 1e-2, 0, 7.0), make_row("factz-B", 1e-1, 0, 9.0),
      make_row("factz-B", 0, 0, 1.1),       make_row("factz-S", 1e-1, 0, 40.0), make_row("factz-S", 1e-2, 0, 20.0),
  };
  Row tput = make_row("factz-B", 1e-2, 9, 99.0);  // throughput rows never enter Table 2
  tput.sweep = "throughput";
  rows.push_back(tput);
  const auto t = table2(rows, 1e-2);
  std::map<std::string, const Table2Entry*> by;
  for (const auto& e : t) by[e.compressor + "/" + e.kind] = &e;
  ASSERT_EQ(t.size(), 1u + 1u + 3u + 3u);

  const auto& zfp = *by.at("zfp/loosest");
  ASSERT_TRUE(zfp.found);
  EXPECT_DOUBLE_EQ(zfp.row.bound, 3.16e-2);
  EXPECT_DOUBLE_EQ(zfp.row.ratio, 9.0);
  EXPECT_FALSE(zfp.every_bound_preserves);
  EXPECT_EQ(zfp.bounds_swept, 5);

  EXPECT_FALSE(by.at("factz-none/loosest")->found);  // never preserves in this sweep

  const auto& b = *by.at("factz-B/loosest");
  ASSERT_TRUE(b.found);
  EXPECT_DOUBLE_EQ(b.row.bound, 1e-1);
  EXPECT_TRUE(b.every_bound_preserves);
  EXPECT_DOUBLE_EQ(by.at("factz-B/at")->row.ratio, 7.0);
  EXPECT_DOUBLE_EQ(by.at("factz-B/best")->row.ratio, 9.0);
  EXPECT_DOUBLE_EQ(by.at("factz-S/best")->row.bound, 1e-1);

  TempDir dir;
  ASSERT_TRUE(write_table2_csv(dir / "t.csv", t).ok());
  ASSERT_TRUE(write_table2_markdown(dir / "t.md", t).ok());
  const auto csv = lines(read_text(dir / "t.csv"));
  ASSERT_EQ(csv.size(), t.size() + 1);
  for (const auto& l : csv) EXPECT_EQ(split(l, ',').size(), split(csv[0], ',').size()) << l;
  const std::string md = read_text(dir / "t.md");
  EXPECT_NE(md.find("| f | zfp | loosest preserving | 0.0316 | 9.00x"), std::string::npos) << md;
  EXPECT_NE(md.find("| f | factz-none (huffman) | loosest preserving | never"), std::string::npos) << md;
}

TEST(Baselines, ZfpHonoursTheToleranceAndIsLosslessAtZero) {
  const VectorField2D f = synth::turbulence(37, 29, 8);
  auto z = make_zfp(1);
  for (double eb : {0.1, 1e-3, 0.0}) {
    auto s = z->compress(f, eb);
    ASSERT_TRUE(s.ok());
    auto d = z->decompress(s.value(), f.nx, f.ny);
    ASSERT_TRUE(d.ok()) << d.status().to_string();
    double e = 0;
    for (size_t k = 0; k < f.u.size(); ++k)
      e = std::max({e, std::fabs(double(f.u[k]) - d->u[k]), std::fabs(double(f.v[k]) - d->v[k])});
    EXPECT_LE(e, eb);
  }
}

TEST(Baselines, CorruptOrTruncatedStreamsGiveErrorsNotCrashes) {
  const VectorField2D f = synth::turbulence(20, 20, 2);
  std::vector<std::unique_ptr<Compressor>> all;
  all.push_back(make_zfp(1));
  all.push_back(make_zstd(3, 1));
  for (const auto& c : all) {
    auto s = c->compress(f, 0.01);
    ASSERT_TRUE(s.ok());
    std::vector<uint8_t> bytes = s.value();
    EXPECT_FALSE(c->decompress(std::span<const uint8_t>(bytes.data(), 3), f.nx, f.ny).ok()) << c->name();
    EXPECT_FALSE(c->decompress(bytes, f.nx + 1, f.ny).ok()) << c->name();  // wrong grid
  }
}

TEST(Harness, ParsesTheSharedDataNamingConvention) {
  std::string name, v;
  int64_t nx = 0, ny = 0;
  ASSERT_TRUE(parse_vector_name("/d/foam_shearlayer_t0.75_u_512x512.f32", name, nx, ny, v));
  EXPECT_EQ(name, "foam_shearlayer_t0.75");
  EXPECT_EQ(nx, 512);
  EXPECT_EQ(ny, 512);
  EXPECT_EQ(v, "/d/foam_shearlayer_t0.75_v_512x512.f32");
  ASSERT_TRUE(parse_vector_name("ncl_uv300_u_128x64.f32", name, nx, ny, v));
  EXPECT_EQ(v, "ncl_uv300_v_128x64.f32");
  for (const char* bad : {"x_u_12.f32", "x_u_0x4.f32", "u_3x4.f32", "x_u_3x4.raw", "x_u_3x4x5.f32",
                          "x_u_99999999999999999999x2.f32", "x_u_x4.f32", "pop_ocean_temp_320x384.f32"})
    EXPECT_FALSE(parse_vector_name(bad, name, nx, ny, v)) << bad;
}

TEST(Turbulence, IsSeededFiniteDivergentFreeishAndFullOfCriticalPoints) {
  TurbulenceSpec s;
  s.nx = 96;
  s.ny = 80;
  s.grid = 64;
  s.turnovers = 0.3;
  s.seed = 4;
  TurbulenceInfo info;
  auto a = decaying_turbulence(s, &info);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_EQ(info.grid, 64);
  EXPECT_GT(info.steps, 0);
  auto b = decaying_turbulence(s);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a->u, b->u);  // same seed, same bytes
  EXPECT_EQ(a->v, b->v);
  s.seed = 5;
  auto c = decaying_turbulence(s);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(a->u, c->u);
  double sq = 0;
  for (size_t k = 0; k < a->u.size(); ++k) sq += double(a->u[k]) * a->u[k] + double(a->v[k]) * a->v[k];
  const double rms = std::sqrt(sq / double(a->u.size()));
  EXPECT_GT(rms, 0.3);  // starts at 1 and decays slowly over a fraction of a turnover
  EXPECT_LT(rms, 1.2);
  auto cps = critical_points(a.value());
  ASSERT_TRUE(cps.ok());
  EXPECT_GT(cps->size(), 10u);
}

TEST(Turbulence, TinyAndOddGridsWork) {
  for (auto [nx, ny] : {std::pair<int64_t, int64_t>{2, 2}, {3, 5}, {17, 4}}) {
    TurbulenceSpec s;
    s.nx = nx;
    s.ny = ny;
    s.turnovers = 0.1;
    auto f = decaying_turbulence(s);
    ASSERT_TRUE(f.ok()) << nx << "x" << ny << ": " << f.status().to_string();
    EXPECT_EQ(f->u.size(), size_t(nx * ny));
    for (size_t k = 0; k < f->u.size(); ++k) ASSERT_TRUE(std::isfinite(f->u[k]) && std::isfinite(f->v[k]));
  }
}

TEST(Turbulence, RejectsBadSettings) {
  TurbulenceSpec s;
  s.nx = 1;
  EXPECT_EQ(decaying_turbulence(s).status().code(), Code::invalid_argument);
  s = TurbulenceSpec{};
  s.grid = 33;
  EXPECT_EQ(decaying_turbulence(s).status().code(), Code::invalid_argument);
  s = TurbulenceSpec{};
  s.turnovers = -1;
  EXPECT_EQ(decaying_turbulence(s).status().code(), Code::invalid_argument);
  s = TurbulenceSpec{};
  s.peak = std::nan("");
  EXPECT_EQ(decaying_turbulence(s).status().code(), Code::invalid_argument);
}

// The sz3 baseline's plumbing (files, arguments, the stream of two parts) with a stand-in for
// SZ3's command-line tool that stores the plane as it is: a lossless row, every value back.
TEST(EvaluateProgram, TheSz3BaselineRunsItsToolOnEachComponent) {
  TempDir dir;
  const VectorField2D f = synth::turbulence(30, 20, 11);
  ASSERT_TRUE(write_plane(dir / "t_u_30x20.f32", f.u, 30, 20).ok());
  ASSERT_TRUE(write_plane(dir / "t_v_30x20.f32", f.v, 30, 20).ok());
  // -f -i IN -z OUT -2 NX NY -M ABS EB (compress), -f -z IN -o OUT -2 NX NY (decompress);
  // it also records its arguments, to check them.
  const fs::path tool = dir / "fake sz3";
  {
    std::ofstream sh(tool);
    sh << "#!/bin/sh\necho \"$@\" >> '" << (dir / "calls.txt") << "'\n"
       << "cp \"$3\" \"$5\"\n";  // compress: -i IN -z OUT; decompress: -z IN -o OUT
  }
  fs::permissions(tool, fs::perms::owner_all);
  std::string out;
  const std::string exe = FACTZ_EVALUATE_PATH;
  ASSERT_EQ(run(exe + " --out '" + dir.str() + "' --sz3 '" + tool.string() + "' --compressors sz3 --bounds 1e-2 " +
                    "--no-throughput --repeats 1 '" + (dir / "t_u_30x20.f32") + "'",
                out, dir),
            0)
      << out;
  const auto rows = lines(read_text(dir / "results.csv"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NE(rows[1].find(",sz3,"), std::string::npos) << rows[1];
  EXPECT_NE(rows[1].find(",0,0,0,0,"), std::string::npos) << "stored as is: no violation " << rows[1];
  const auto calls = lines(read_text(dir / "calls.txt"));
  ASSERT_EQ(calls.size(), 4u);  // u and v, each compressed and decompressed
  EXPECT_NE(calls[0].find(" -2 30 20 -M ABS "), std::string::npos) << calls[0];
  EXPECT_NE(calls[2].find("-f -z "), std::string::npos) << calls[2];
}

TEST(EvaluateProgram, RunsOnTinyFilesAndWritesEveryOutput) {
  TempDir dir;
  const VectorField2D f = synth::turbulence(30, 20, 9);
  ASSERT_TRUE(write_plane(dir / "t_u_30x20.f32", f.u, 30, 20).ok());
  ASSERT_TRUE(write_plane(dir / "t_v_30x20.f32", f.v, 30, 20).ok());
  std::string out;
  const std::string exe = FACTZ_EVALUATE_PATH;
  ASSERT_EQ(run(exe + " --out '" + dir.str() + "' --bounds 1e-2,0 --repeats 1 --dump zfp@1e-2 '" + (dir / "t_u_30x20.f32") + "'",
                out, dir),
            0)
      << out;
  EXPECT_NE(out.find("[1/1] t 30x20"), std::string::npos) << out;  // progress on stderr
  for (const char* file : {"results.csv", "results.json", "table2.csv", "table2.md", "recon_t_zfp_0.01_u_30x20.f32",
                           "recon_t_zfp_0.01_v_30x20.f32"})
    EXPECT_TRUE(fs::exists(dir / file)) << file;
  // 2 lossless + 4 lossy x 2 bounds + 6 mode x coder rows, plus the header.
  EXPECT_EQ(lines(read_text(dir / "results.csv")).size(), 1u + 2u + 8u + 6u);

  EXPECT_EQ(run(exe + " --out '" + dir.str() + "'", out, dir), 2);  // no field
  EXPECT_NE(out.find("no fields given"), std::string::npos) << out;
  EXPECT_EQ(run(exe + " --out '" + dir.str() + "' --compressors sz2 '" + (dir / "t_u_30x20.f32") + "'", out, dir), 2);
  EXPECT_NE(out.find("unknown compressor"), std::string::npos) << out;
  EXPECT_EQ(run(exe + " --out '" + dir.str() + "' --compressors sz3 '" + (dir / "t_u_30x20.f32") + "'", out, dir), 2);
  EXPECT_NE(out.find("sz3 needs --sz3 PATH"), std::string::npos) << out;
  EXPECT_EQ(run(exe + " --out '" + dir.str() + "' --bounds -1 '" + (dir / "t_u_30x20.f32") + "'", out, dir), 2);
  EXPECT_EQ(run(exe + " --out '" + dir.str() + "' '" + (dir / "missing_u_4x4.f32") + "'", out, dir), 1);
  EXPECT_NE(out.find("missing_u_4x4.f32"), std::string::npos) << out;
}

}  // namespace
