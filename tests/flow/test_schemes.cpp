// Every fitting scheme: divergence-free and periodic reconstructions at every tolerance,
// and observed nodal errors within the theorem's bound.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "factz/flow.hpp"
#include "flow_support.hpp"

using namespace factz::flow;
using flowtest::kTwoPi;

namespace {

Basis make_basis(Method m, int dim, int n, int64_t landmarks = 12, double length = 1.5) {
  BasisOptions o;
  o.method = m;
  o.landmarks = landmarks;
  o.periods.assign(size_t(dim), kTwoPi);
  o.matern_lengths = {length};
  o.wendland_beta = 4;
  auto b = build_basis(dim, flowtest::grid_nodes(dim, n), o);
  EXPECT_TRUE(b.ok()) << b.status().to_string();
  return std::move(b).value();
}

/// max |div| / max ||grad u||_F at random points.
double relative_divergence(const Basis& b, const std::vector<double>& c, int dim) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> U(-1.0, 8.0);
  std::vector<double> pts(200 * size_t(dim));
  for (double& v : pts) v = U(rng);
  std::vector<double> vel, grad;
  EXPECT_TRUE(evaluate(b, c, pts, vel, &grad).ok());
  double gmax = 0, dmax = 0;
  for (size_t p = 0; p < pts.size() / size_t(dim); ++p) {
    double g2 = 0, div = 0;
    for (int i = 0; i < dim; ++i)
      for (int k = 0; k < dim; ++k) {
        const double g = grad[(p * size_t(dim) + size_t(i)) * size_t(dim) + size_t(k)];
        g2 += g * g;
        if (i == k) div += g;
      }
    gmax = std::max(gmax, std::sqrt(g2));
    dmax = std::max(dmax, std::fabs(div));
  }
  return dmax / gmax;
}

/// max |u(x) - u(x + 2pi e_k)| / max |u| over points on the boundary x_k = 0.
double periodic_mismatch(const Basis& b, const std::vector<double>& c, int dim) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> U(0.0, kTwoPi);
  double worst = 0, umax = 0;
  for (int k = 0; k < dim; ++k) {
    std::vector<double> p(100 * size_t(dim)), q;
    for (double& v : p) v = U(rng);
    for (size_t i = 0; i < 100; ++i) p[i * size_t(dim) + size_t(k)] = 0.0;
    q = p;
    for (size_t i = 0; i < 100; ++i) q[i * size_t(dim) + size_t(k)] = kTwoPi;
    std::vector<double> up, uq;
    EXPECT_TRUE(evaluate(b, c, p, up).ok());
    EXPECT_TRUE(evaluate(b, c, q, uq).ok());
    for (size_t i = 0; i < up.size(); ++i) {
      worst = std::max(worst, std::fabs(up[i] - uq[i]));
      umax = std::max(umax, std::fabs(up[i]));
    }
  }
  return worst / umax;
}

void check_method(Method m, int dim, int n) {
  const Basis b = make_basis(m, dim, n);
  const auto u = flowtest::taylor_green(dim, b.nodes);
  auto f = fit(b, u);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  for (auto coder : {CoefficientCoder::factz, CoefficientCoder::zfp})
    for (auto rule : {ToleranceRule::apriori, ToleranceRule::measured})
    for (double e : {1e-1, 1e-2, 1e-3}) {
      if (f->rep_error >= e * f->norm_u) continue;  // a reduced space may not reach e
      EncodeStats s;
      auto z = encode(b, f.value(), u, e, coder, &s, rule);
      ASSERT_TRUE(z.ok()) << z.status().to_string();
      SCOPED_TRACE(std::string(method_name(m)) + " e=" + std::to_string(e) + " rule " + std::to_string(int(rule)));
      if (rule == ToleranceRule::measured) {
        EncodeStats a;
        ASSERT_TRUE(encode(b, f.value(), u, e, coder, &a, ToleranceRule::apriori).ok());
        EXPECT_GE(s.tolerance, a.tolerance);
        EXPECT_LE(s.stream_bytes, a.stream_bytes);
      }
      // The a-priori bound from the stored tolerance holds for either rule.
      EXPECT_LE(s.rel_l2_error * f->norm_u, theorem_bound(b, f->rep_error, s.tolerance) * (1 + 1e-12));
      EXPECT_LE(s.rel_l2_error, s.rel_bound);
      EXPECT_LE(s.rel_bound, e * (1 + 1e-12));
      EXPECT_LE(s.coef_max_error, s.tolerance);
      auto c = decode_coefficients(b, z.value());
      ASSERT_TRUE(c.ok());
      EXPECT_LT(relative_divergence(b, c.value(), dim), 1e-10);
      EXPECT_LT(periodic_mismatch(b, c.value(), dim), 1e-12);
      auto back = decompress(b, z.value());
      ASSERT_TRUE(back.ok());
      double e2 = 0;
      for (size_t i = 0; i < u.size(); ++i) e2 += std::pow(back.value()[i] - u[i], 2);
      EXPECT_NEAR(std::sqrt(e2) / f->norm_u, s.rel_l2_error, 1e-12);
    }
}

}  // namespace

TEST(FlowSchemes, GlobalInterpolation2D) { check_method(Method::global, 2, 12); }
TEST(FlowSchemes, TwoLevelNystrom2D) { check_method(Method::nystrom2, 2, 16); }
TEST(FlowSchemes, Hybrid2D) { check_method(Method::hybrid, 2, 14); }
TEST(FlowSchemes, MultilevelWendland2D) { check_method(Method::multilevel, 2, 14); }
TEST(FlowSchemes, Frame2D) { check_method(Method::frame, 2, 12); }
TEST(FlowSchemes, TwoLevelNystrom3D) { check_method(Method::nystrom2, 3, 6); }
TEST(FlowSchemes, Multilevel3D) { check_method(Method::multilevel, 3, 5); }

TEST(FlowSchemes, InterpolatingMethodsRecoverTheNodesBeforeCompression) {
  for (Method m : {Method::global, Method::hybrid, Method::multilevel, Method::frame}) {
    const Basis b = make_basis(m, 2, 10);
    const auto u = flowtest::taylor_green(2, b.nodes);
    auto f = fit(b, u);
    ASSERT_TRUE(f.ok());
    EXPECT_LT(f->rep_error / f->norm_u, 1e-6) << method_name(m);
  }
}

TEST(FlowSchemes, NystromResolvesTaylorGreenWithFewCoefficients) {
  const Basis b = make_basis(Method::nystrom2, 2, 24, 32, 2.5);
  EXPECT_LE(b.coefficients(), 2 * 2 * 32);
  const auto u = flowtest::taylor_green(2, b.nodes);
  auto f = fit(b, u);
  ASSERT_TRUE(f.ok());
  EXPECT_LT(f->rep_error / f->norm_u, 1e-3);
}

TEST(FlowSchemes, ResidualAdaptiveLandmarksAvoidTheFirstLevel) {
  BasisOptions o;
  o.method = Method::nystrom2;
  o.landmarks = 6;
  o.periods = {kTwoPi, kTwoPi};
  const auto x = flowtest::grid_nodes(2, 12);
  o.training = {flowtest::taylor_green(2, x)};
  auto b = build_basis(2, x, o);
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  const auto& c = b->blocks[0].centers;
  ASSERT_EQ(c.size(), 12u);
  for (size_t i = 6; i < 12; ++i)
    for (size_t j = 0; j < 6; ++j) EXPECT_NE(c[i], c[j]);
}

TEST(FlowSchemes, UnreachableToleranceIsAClearError) {
  const Basis b = make_basis(Method::nystrom2, 2, 16, 1);
  std::vector<double> u(size_t(b.n) * 2);
  std::mt19937_64 rng(1);
  std::normal_distribution<double> N;
  for (double& v : u) v = N(rng);  // white noise: far outside a 2-landmark space
  auto z = compress(b, u, 1e-3, CoefficientCoder::factz);
  ASSERT_FALSE(z.ok());
  EXPECT_EQ(z.status().code(), factz::Code::invalid_argument);
  EXPECT_NE(z.status().message().find("fit error"), std::string::npos);
}

TEST(FlowSchemes, ZeroFieldIsStoredExactly) {
  for (Method m : {Method::nystrom2, Method::hybrid}) {
    const Basis b = make_basis(m, 2, 8, 4);
    std::vector<double> u(size_t(b.n) * 2, 0.0);
    EncodeStats s;
    auto z = compress(b, u, 1e-3, CoefficientCoder::factz, &s);
    ASSERT_TRUE(z.ok()) << z.status().to_string();
    auto back = decompress(b, z.value());
    ASSERT_TRUE(back.ok());
    for (double v : back.value()) EXPECT_EQ(v, 0.0);
  }
}

TEST(FlowSchemes, BadInputsAreClearErrors) {
  BasisOptions o;
  EXPECT_FALSE(build_basis(4, std::vector<double>(8, 0.0), o).ok());
  EXPECT_FALSE(build_basis(2, std::vector<double>{}, o).ok());
  EXPECT_FALSE(build_basis(2, std::vector<double>{0, 0, 1, 1, 0, 0}, o).ok());  // coincident nodes
  EXPECT_FALSE(build_basis(2, std::vector<double>{0, NAN, 1, 1}, o).ok());
  o.landmarks = 0;
  EXPECT_FALSE(build_basis(2, std::vector<double>{0, 0, 1, 1}, o).ok());
  const Basis b = make_basis(Method::nystrom2, 2, 6, 3);
  EXPECT_FALSE(fit(b, std::vector<double>(5, 1.0)).ok());
  std::vector<double> u(size_t(b.n) * 2, 1.0);
  u[3] = INFINITY;
  EXPECT_FALSE(fit(b, u).ok());
  u[3] = 0;
  EXPECT_FALSE(compress(b, u, -1.0, CoefficientCoder::factz).ok());
  EXPECT_FALSE(compress(b, u, NAN, CoefficientCoder::factz).ok());
}

TEST(FlowSchemes, TinyNodeSetsWork) {
  for (Method m : {Method::global, Method::nystrom2, Method::hybrid, Method::multilevel, Method::frame}) {
    BasisOptions o;
    o.method = m;
    o.landmarks = 8;
    auto b = build_basis(2, std::vector<double>{0.0, 0.0, 1.0, 0.5}, o);
    ASSERT_TRUE(b.ok()) << method_name(m) << " " << b.status().to_string();
    std::vector<double> u = {1.0, -1.0, 0.5, 0.25};
    auto f = fit(b.value(), u);
    ASSERT_TRUE(f.ok()) << method_name(m) << " " << f.status().to_string();
    if (f->rep_error < 1e-2 * f->norm_u) {
      EncodeStats s;
      ASSERT_TRUE(encode(b.value(), f.value(), u, 1e-2, CoefficientCoder::factz, &s).ok());
      EXPECT_LE(s.rel_l2_error, s.rel_bound);
    }
  }
}

TEST(FlowSchemes, MultiscaleMixtureStaysDivergenceFreeAndPeriodic) {
  BasisOptions o;
  o.method = Method::global;
  o.periods = {kTwoPi, kTwoPi};
  o.matern_lengths = {0.6, 2.0};  // two physical scales, weights l^(8/3)
  auto b = build_basis(2, flowtest::grid_nodes(2, 10), o);
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  ASSERT_EQ(b->blocks[0].kernel.size(), 2u);
  const auto u = flowtest::taylor_green(2, b->nodes);
  EncodeStats s;
  auto z = compress(b.value(), u, 1e-3, CoefficientCoder::factz, &s);
  ASSERT_TRUE(z.ok()) << z.status().to_string();
  EXPECT_LE(s.rel_l2_error, s.rel_bound);
  const auto c = decode_coefficients(b.value(), z.value()).value();
  EXPECT_LT(relative_divergence(b.value(), c, 2), 1e-10);
  EXPECT_LT(periodic_mismatch(b.value(), c, 2), 1e-12);
}

TEST(FlowSchemes, OpenDomainsWorkToo) {
  // Non-periodic nodes (a jittered patch), divergence-free data: the kernel field stays
  // divergence-free; no periodicity is imposed.
  std::vector<double> x;
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> J(-0.2, 0.2);
  for (int j = 0; j < 9; ++j)
    for (int i = 0; i < 9; ++i) x.push_back(0.5 * (i + J(rng))), x.push_back(0.5 * (j + J(rng)));
  for (Method m : {Method::hybrid, Method::multilevel}) {
    BasisOptions o;
    o.method = m;
    o.landmarks = 10;
    o.wendland_beta = 4;
    auto b = build_basis(2, x, o);
    ASSERT_TRUE(b.ok()) << b.status().to_string();
    std::vector<double> u;
    for (size_t i = 0; i < x.size(); i += 2) u.push_back(std::cos(x[i + 1])), u.push_back(std::sin(x[i]));
    EncodeStats s;
    auto z = compress(b.value(), u, 1e-2, CoefficientCoder::zfp, &s);
    ASSERT_TRUE(z.ok()) << z.status().to_string();
    EXPECT_LE(s.rel_l2_error, s.rel_bound);
    EXPECT_LT(relative_divergence(b.value(), decode_coefficients(b.value(), z.value()).value(), 2), 1e-10);
  }
}

TEST(FlowSchemes, ScatteredPeriodicTaylorGreen) {
  std::mt19937_64 rng(21);
  std::uniform_real_distribution<double> U(0.0, kTwoPi);
  std::vector<double> x(2 * 300);
  for (double& v : x) v = U(rng);
  const auto u = flowtest::taylor_green(2, x);
  for (Method m : {Method::nystrom2, Method::hybrid}) {
    BasisOptions o;
    o.method = m;
    o.landmarks = 32;
    o.periods = {kTwoPi, kTwoPi};
    o.matern_lengths = {2.5};
    o.wendland_beta = 4;
    auto b = build_basis(2, x, o);
    ASSERT_TRUE(b.ok()) << b.status().to_string();
    EncodeStats s;
    auto z = compress(b.value(), u, 1e-2, CoefficientCoder::factz, &s, ToleranceRule::measured);
    ASSERT_TRUE(z.ok()) << method_name(m) << " " << z.status().to_string();
    EXPECT_LE(s.rel_l2_error, s.rel_bound);
    EXPECT_LE(s.rel_bound, 1e-2);
    const auto c = decode_coefficients(b.value(), z.value()).value();
    EXPECT_LT(relative_divergence(b.value(), c, 2), 1e-10);
    EXPECT_LT(periodic_mismatch(b.value(), c, 2), 1e-12);
  }
}
