// The .npy header as the NumPy format defines it (numpy/lib/format.py): the repr of a
// Python dict with the keys 'descr', 'fortran_order' and 'shape', in any order and spacing,
// versions 1.0, 2.0 and 3.0; and the plane reader's refusals of what FaCTz cannot read,
// each naming the file and the reason.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "factz/io.hpp"
#include "support/npy_file.hpp"
#include "support/temp_dir.hpp"

namespace factz {
namespace {

using Bytes = std::vector<uint8_t>;

/// testing::npy_file as bytes.
Bytes npy_file(const std::string& dict, int major = 1, const std::string& data = "") {
  const std::string f = testing::npy_file(dict, major, data);
  return Bytes(f.begin(), f.end());
}

Result<NpyHeader> parse(const std::string& dict, int major = 1) { return parse_npy_header(npy_file(dict, major)); }

TEST(Npy, ReadsTheHeaderNumpyWrites) {
  const auto h = parse("{'descr': '<f4', 'fortran_order': False, 'shape': (48, 64), }");
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  EXPECT_EQ(h->major, 1);
  EXPECT_EQ(h->descr, "<f4");
  EXPECT_FALSE(h->fortran_order);
  EXPECT_EQ(h->shape, (std::vector<int64_t>{48, 64}));
  EXPECT_EQ(h->data_offset % 64, 0u);
  EXPECT_EQ(h->data_offset, npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (48, 64), }").size());
}

TEST(Npy, ReadsEverySpellingOfTheSameDict) {
  const std::vector<std::string> dicts = {
      "{'descr':'<f4','fortran_order':False,'shape':(48,64)}",            // no spaces (the file)
      "{'shape': (48, 64), 'fortran_order': False, 'descr': '<f4'}",      // keys in another order
      "{ 'descr' : '<f4' ,\t'fortran_order' : False , 'shape' : ( 48 , 64 , ) , }",  // spaces, commas
      "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (48, 64)}",  // double quotes
      "{'descr': '<f4', 'fortran_order': False, 'shape': (48L, 64L), }",  // Python 2 longs
  };
  for (const auto& d : dicts)
    for (int major : {1, 2, 3}) {
      const auto h = parse(d, major);
      ASSERT_TRUE(h.ok()) << d << " v" << major << ": " << h.status().to_string();
      EXPECT_EQ(h->major, major);
      EXPECT_EQ(h->descr, "<f4") << d;
      EXPECT_FALSE(h->fortran_order) << d;
      EXPECT_EQ(h->shape, (std::vector<int64_t>{48, 64})) << d;
      EXPECT_EQ(h->data_offset % 64, 0u) << d;
    }
}

TEST(Npy, ReadsOneTuplesEmptyTuplesAndFortranOrder) {
  auto h = parse("{'descr':'<f8','fortran_order':True,'shape':(3072,)}");
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  EXPECT_EQ(h->descr, "<f8");
  EXPECT_TRUE(h->fortran_order);
  EXPECT_EQ(h->shape, std::vector<int64_t>{3072});
  h = parse("{'descr': '<f4', 'fortran_order': False, 'shape': (), }");
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  EXPECT_TRUE(h->shape.empty()) << "a 0-d array";
  h = parse("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), }");
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  EXPECT_EQ(h->shape, (std::vector<int64_t>{2, 3, 4}));
}

TEST(Npy, RefusesWhatIsNotANpyHeaderAndSaysWhy) {
  struct Case {
    std::string dict, needle;
  };
  const std::vector<Case> cases = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3072)}", "1-tuple"},  // (n) is an int
      {"{'descr': '<f4', 'fortran_order': False}", "no 'shape'"},
      {"{'descr': '<f4', 'shape': (2, 3)}", "no 'fortran_order'"},
      {"{'fortran_order': False, 'shape': (2, 3)}", "no 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'extra': 1}", "unexpected key 'extra'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", "twice"},
      {"{'descr': [('x', '<f4'), ('y', '<f4')], 'fortran_order': False, 'shape': (2,)}", "structured"},
      {"{'descr': '<f4', 'fortran_order': false, 'shape': (2, 3)}", "True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}", "non-negative"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", "expected ','"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", "too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} trailing", "after the dict"},
      {"['descr', '<f4']", "not a dict"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)", "expected"},
  };
  for (const auto& c : cases) {
    const auto h = parse(c.dict);
    ASSERT_FALSE(h.ok()) << c.dict;
    EXPECT_EQ(h.status().code(), Code::invalid_argument) << c.dict;
    EXPECT_NE(h.status().message().find(c.needle), std::string::npos)
        << c.dict << ": expected '" << c.needle << "' in " << h.status().message();
  }
}

TEST(Npy, RefusesBadMagicTruncationAndUnknownVersions) {
  const Bytes good = npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }");
  Bytes bad = good;
  bad[1] = 'X';
  EXPECT_NE(parse_npy_header(bad).status().message().find("not a .npy file"), std::string::npos);
  for (size_t n : {size_t(0), size_t(7), size_t(9), size_t(20), good.size() - 1}) {
    const auto h = parse_npy_header(std::span<const uint8_t>(good).first(n));
    EXPECT_FALSE(h.ok()) << n << " bytes";
  }
  Bytes v4 = good;
  v4[6] = 4;
  EXPECT_EQ(parse_npy_header(v4).status().code(), Code::unsupported_version);
  EXPECT_NE(parse_npy_header(v4).status().message().find("version 4.0"), std::string::npos);
}

TEST(Npy, WrittenHeadersParseBackAligned) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {7}, {30, 50}, {2, 3, 4}};
  for (const auto& shape : shapes) {
    const std::string h = npy_header("<f4", shape);
    EXPECT_EQ(h.size() % 64, 0u);
    EXPECT_EQ(h.back(), '\n');
    const auto p = parse_npy_header(Bytes(h.begin(), h.end()));
    ASSERT_TRUE(p.ok()) << h << ": " << p.status().to_string();
    EXPECT_EQ(p->shape, shape);
    EXPECT_EQ(p->descr, "<f4");
    EXPECT_EQ(p->data_offset, h.size());
  }
  EXPECT_NE(npy_header("<f8", std::vector<int64_t>{7}).find("(7,)"), std::string::npos) << "a 1-tuple has its comma";
}

// ---- read_plane: the .npy files FaCTz reads, and those it refuses --------------------------

std::string float_data(int64_t n) {
  std::string s(size_t(n) * 4, '\0');
  for (int64_t i = 0; i < n; ++i) {
    const float f = float(i) * 0.25f - 3.0f;
    std::memcpy(s.data() + 4 * i, &f, 4);
  }
  return s;
}

void write_file(const std::string& path, const Bytes& b) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

TEST(Npy, PlanesReadFromEveryValidHeader) {
  const testing::TempDir dir;
  const std::string data = float_data(48 * 64);
  const std::vector<std::pair<std::string, int>> headers = {
      {"{'descr':'<f4','fortran_order':False,'shape':(48,64)}", 1},
      {"{'shape': (3072,), 'descr': '<f4', 'fortran_order': False}", 1},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (48, 64), }", 2},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (48, 64), }", 3},
  };
  for (const auto& [dict, major] : headers) {
    const std::string path = dir / "p.npy";
    write_file(path, npy_file(dict, major, data));
    const auto plane = read_plane(path, 64, 48);
    ASSERT_TRUE(plane.ok()) << dict << ": " << plane.status().to_string();
    ASSERT_EQ(plane->size(), 48u * 64u);
    EXPECT_EQ(std::memcmp(plane->data(), data.data(), data.size()), 0) << dict;
  }
}

// The one check of every .npy reader: little-endian floats of the width asked for in C
// order (any spelling of the little-endian or native order), else an error that names the
// file, what it holds and how to save it.
TEST(Npy, TheFloatCheckAcceptsLittleEndianCOrderAndSaysWhatElse) {
  for (int width : {4, 8}) {
    const std::string w = std::to_string(width), other = width == 4 ? "8" : "4";
    const std::string type = width == 4 ? "float32" : "float64";
    NpyHeader h;
    h.shape = {3, 2};
    for (const char* order : {"<", "=", "|"}) {
      h.descr = order + ("f" + w);
      EXPECT_TRUE(check_npy_float(h, width, "a.npy").ok()) << h.descr;
    }
    h.descr = ">f" + w;
    Status st = check_npy_float(h, width, "a.npy");
    EXPECT_EQ(st.code(), Code::invalid_argument);
    EXPECT_EQ(st.message(), "a.npy: big-endian " + type + " .npy ('>f" + w + "'); FaCTz reads little-endian " + type +
                                " ('<f" + w + "'): save a.astype('<f" + w + "')");
    for (const std::string& d : std::vector<std::string>{"<f" + other, "<i" + w, "<c8", "|u1", "<f2"}) {
      h.descr = d;
      st = check_npy_float(h, width, "a.npy");
      EXPECT_EQ(st.message(), "a.npy: .npy dtype '" + d + "' is not " + type + "; FaCTz reads little-endian " + type +
                                  " ('<f" + w + "'): save a.astype('<f" + w + "')");
    }
    h.descr = "<f" + w;
    h.fortran_order = true;
    st = check_npy_float(h, width, "a.npy");
    EXPECT_EQ(st.message(), "a.npy: Fortran-order .npy array (fortran_order: True); FaCTz reads C order: save "
                            "np.ascontiguousarray(a)");
  }
}

TEST(Npy, PlanesRefuseWhatFactzCannotReadNamingFileAndReason) {
  const testing::TempDir dir;
  const std::string data = float_data(48 * 64);
  struct Case {
    std::string dict, needle;
  };
  const std::vector<Case> cases = {
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (64, 48), }", "Fortran"},
      {"{'descr': '>f4', 'fortran_order': False, 'shape': (48, 64), }", "big-endian"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (48, 32), }", "'<f8' is not float32"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (48, 64), }", "'<i4' is not float32"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 48, 64), }", "3-dimensional"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (), }", "0-dimensional"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (64, 48), }", "does not match (ny, nx) = (48, 64)"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3071,), }", "does not match"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (48, 64)", "malformed .npy header"},
  };
  for (const auto& c : cases) {
    const std::string path = dir / "bad.npy";
    write_file(path, npy_file(c.dict, 1, data));
    const auto plane = read_plane(path, 64, 48);
    ASSERT_FALSE(plane.ok()) << c.dict;
    EXPECT_EQ(plane.status().message().rfind(path + ": ", 0), 0u) << plane.status().message();
    EXPECT_NE(plane.status().message().find(c.needle), std::string::npos)
        << c.dict << ": expected '" << c.needle << "' in " << plane.status().message();
  }
  // Header fine, data short: the sizes are named.
  write_file(dir / "short.npy", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (48, 64), }", 1,
                                         data.substr(0, 100)));
  const auto shorter = read_plane(dir / "short.npy", 64, 48);
  ASSERT_FALSE(shorter.ok());
  EXPECT_NE(shorter.status().message().find("found 100"), std::string::npos) << shorter.status().message();
}

}  // namespace
}  // namespace factz
