// Evaluation of a coefficient vector anywhere: sum over blocks and centers of Phi(x, z) a,
// with the analytic gradient on request. Each point is independent (bytes never depend on
// the thread count).
#include <cmath>

#include "flow/assembly.hpp"
#include "flow/kernel.hpp"

namespace factz::flow {

Status evaluate(const Basis& basis, std::span<const double> c, std::span<const double> points,
                std::vector<double>& velocity, std::vector<double>* gradient) {
  const int d = basis.dim;
  if (int64_t(c.size()) != basis.coefficients()) return invalid_argument("coefficient count does not match the basis");
  if (points.size() % size_t(d) != 0) return invalid_argument("points must be p x dim");
  for (double v : points)
    if (!std::isfinite(v)) return invalid_argument("points must be finite");
  const int64_t p = int64_t(points.size()) / d;
  std::vector<Eigen::VectorXd> weights;
  std::vector<double> supports;
  size_t off = 0;
  for (const Block& b : basis.blocks) {
    weights.push_back(detail::block_weights(basis, b, c.subspan(off, size_t(b.rank))));
    supports.push_back(detail::support_rho(b.kernel));
    off += size_t(b.rank);
  }
  velocity.assign(size_t(p * d), 0.0);
  if (gradient) gradient->assign(size_t(p * d * d), 0.0);
#pragma omp parallel for schedule(dynamic, 32)
  for (int64_t i = 0; i < p; ++i) {
    const double* x = &points[size_t(i * d)];
    double u[3] = {0, 0, 0}, g[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    double phi[9], dphi[27];
    for (size_t bi = 0; bi < basis.blocks.size(); ++bi) {
      const Block& b = basis.blocks[bi];
      const Eigen::VectorXd& a = weights[bi];
      for (size_t j = 0; j < b.centers.size(); ++j) {
        const double* y = &basis.nodes[size_t(b.centers[j]) * size_t(d)];
        const double* aj = a.data() + j * size_t(d);
        if (gradient) {
          if (!detail::kernel_block_grad(d, b.kernel, basis.periods.data(), supports[bi], x, y, phi, dphi)) continue;
          for (int r = 0; r < d; ++r)
            for (int k = 0; k < d; ++k)
              for (int s = 0; s < d; ++s) g[r][k] += dphi[(r * 3 + s) * 3 + k] * aj[s];
        } else if (!detail::kernel_block(d, b.kernel, basis.periods.data(), supports[bi], x, y, phi)) {
          continue;
        }
        for (int r = 0; r < d; ++r)
          for (int s = 0; s < d; ++s) u[r] += phi[r * 3 + s] * aj[s];
      }
    }
    for (int r = 0; r < d; ++r) velocity[size_t(i * d + r)] = u[r];
    if (gradient)
      for (int r = 0; r < d; ++r)
        for (int k = 0; k < d; ++k) (*gradient)[size_t((i * d + r) * d + k)] = g[r][k];
  }
  return Status::Ok();
}

Result<std::vector<double>> divergence(const Basis& basis, std::span<const double> c,
                                       std::span<const double> points) {
  std::vector<double> v, g;
  FACTZ_RETURN_IF_ERROR(evaluate(basis, c, points, v, &g));
  const int d = basis.dim;
  const size_t p = points.size() / size_t(d);
  std::vector<double> div(p, 0.0);
  for (size_t i = 0; i < p; ++i)
    for (int k = 0; k < d; ++k) div[i] += g[(i * size_t(d) + size_t(k)) * size_t(d) + size_t(k)];
  return div;
}

}  // namespace factz::flow
