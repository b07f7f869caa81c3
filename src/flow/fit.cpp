// Fitting nodal velocities with each scheme (paper section 2.2, table 1).
#include <Eigen/Dense>
#include <Eigen/SparseCholesky>
#include <cmath>

#include "flow/assembly.hpp"

namespace factz::flow {

namespace {

using detail::SparseMatrix;
using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

Eigen::MatrixXd block_eval_dense(const Basis& basis, const Block& b) {
  const Eigen::MatrixXd k = detail::dense_kernel(basis, b.kernel, basis.nodes, b.centers);
  if (b.weight_map.empty()) return k / b.scale;
  return k * Eigen::Map<const RowMajor>(b.weight_map.data(), k.cols(), b.rank) / b.scale;
}

/// Solves the SPD system m x = rhs with two steps of iterative refinement.
template <class Solver, class Matrix>
Eigen::VectorXd refined_solve(const Solver& s, const Matrix& m, const Eigen::VectorXd& rhs) {
  Eigen::VectorXd x = s.solve(rhs);
  for (int it = 0; it < 2; ++it) x += s.solve(rhs - m * x);
  return x;
}

Status check_sparse(const Eigen::SimplicialLDLT<SparseMatrix>& s) {
  if (s.info() != Eigen::Success) return Status(Code::internal, "sparse factorization failed (kernel matrix singular)");
  return Status::Ok();
}

/// Kernel weights interpolating rhs on the block's centers (Wendland, sparse).
Result<Eigen::VectorXd> interpolate_sparse(const Basis& basis, const Block& b, const Eigen::VectorXd& rhs) {
  const auto z = detail::gather_nodes(basis, b.centers);
  const SparseMatrix a = detail::sparse_kernel(basis, b.kernel, z, b.centers);
  Eigen::SimplicialLDLT<SparseMatrix> s(a);
  FACTZ_RETURN_IF_ERROR(check_sparse(s));
  return refined_solve(s, a, rhs);
}

Eigen::VectorXd restrict_rows(const Basis& basis, const Block& b, const Eigen::VectorXd& r) {
  Eigen::VectorXd out(int64_t(b.centers.size()) * basis.dim);
  for (size_t j = 0; j < b.centers.size(); ++j)
    for (int a = 0; a < basis.dim; ++a) out(int64_t(j) * basis.dim + a) = r(int64_t(b.centers[j]) * basis.dim + a);
  return out;
}

}  // namespace

Result<Fit> fit(const Basis& basis, std::span<const double> u) {
  if (int64_t(u.size()) != basis.n * basis.dim) return invalid_argument("velocity array must be n x dim for this basis");
  for (double v : u)
    if (!std::isfinite(v)) return invalid_argument("velocities must be finite");
  const Eigen::Map<const Eigen::VectorXd> ux(u.data(), int64_t(u.size()));
  Fit f;
  f.norm_u = ux.norm();
  std::vector<Eigen::VectorXd> parts;
  switch (basis.method) {
    case Method::global: {
      const Block& b = basis.blocks[0];
      const Eigen::MatrixXd k = detail::dense_kernel(basis, b.kernel, basis.nodes, b.centers);
      Eigen::LLT<Eigen::MatrixXd> llt(k);
      if (llt.info() != Eigen::Success) {
        Eigen::LDLT<Eigen::MatrixXd> ldlt(k);
        parts.push_back(refined_solve(ldlt, k, ux) * b.scale);
      } else {
        parts.push_back(refined_solve(llt, k, ux) * b.scale);
      }
      break;
    }
    case Method::nystrom2: {
      parts.push_back(block_eval_dense(basis, basis.blocks[0]).transpose() * ux);
      break;
    }
    case Method::hybrid: {
      const Eigen::MatrixXd um = block_eval_dense(basis, basis.blocks[0]);
      const Eigen::VectorXd cm = um.transpose() * ux;
      parts.push_back(cm);
      const Eigen::VectorXd r = ux - um * cm;
      auto a = interpolate_sparse(basis, basis.blocks[1], r);
      if (!a.ok()) return a.status();
      parts.push_back(a.value() * basis.blocks[1].scale);
      break;
    }
    case Method::multilevel: {
      Eigen::VectorXd r = ux;
      for (const Block& b : basis.blocks) {
        auto a = interpolate_sparse(basis, b, restrict_rows(basis, b, r));
        if (!a.ok()) return a.status();
        const SparseMatrix dl = detail::sparse_kernel(basis, b.kernel, basis.nodes, b.centers);
        r -= dl * a.value();
        parts.push_back(a.value() * b.scale);
      }
      break;
    }
    case Method::frame: {
      // Minimum-norm c = A^T (A A^T)^-1 u over the scaled blocks A = [D_l / s_l].
      std::vector<SparseMatrix> ds;
      int64_t cols = 0;
      for (const Block& b : basis.blocks) {
        ds.push_back(detail::sparse_kernel(basis, b.kernel, basis.nodes, b.centers) / b.scale);
        cols += ds.back().cols();
      }
      SparseMatrix a(basis.n * basis.dim, cols);
      {
        std::vector<Eigen::Triplet<double, int64_t>> t;
        int64_t off = 0;
        for (const auto& dl : ds) {
          for (int64_t c = 0; c < dl.outerSize(); ++c)
            for (SparseMatrix::InnerIterator it(dl, c); it; ++it) t.emplace_back(it.row(), off + c, it.value());
          off += dl.cols();
        }
        a.setFromTriplets(t.begin(), t.end());
      }
      // The coarse levels couple most node pairs: up to a few thousand rows the Gram
      // matrix is formed and factored densely (a symmetric rank update), beyond that
      // sparsely.
      Eigen::VectorXd c;
      if (a.rows() <= 8192) {
        const Eigen::MatrixXd ad(a);
        Eigen::MatrixXd gd = Eigen::MatrixXd::Zero(a.rows(), a.rows());
        gd.selfadjointView<Eigen::Lower>().rankUpdate(ad);
        gd = gd.selfadjointView<Eigen::Lower>();
        Eigen::LLT<Eigen::MatrixXd> llt(gd);
        if (llt.info() != Eigen::Success) return Status(Code::internal, "frame Gram matrix is not positive definite");
        c = ad.transpose() * refined_solve(llt, gd, ux);
      } else {
        const SparseMatrix at = a.transpose();
        const SparseMatrix g = a * at;
        Eigen::SimplicialLDLT<SparseMatrix> s(g);
        FACTZ_RETURN_IF_ERROR(check_sparse(s));
        c = at * refined_solve(s, g, ux);
      }
      int64_t off = 0;
      for (const auto& dl : ds) {
        parts.push_back(c.segment(off, dl.cols()));
        off += dl.cols();
      }
      break;
    }
  }
  for (const auto& p : parts) f.coefficients.insert(f.coefficients.end(), p.data(), p.data() + p.size());
  if (int64_t(f.coefficients.size()) != basis.coefficients()) return Status(Code::internal, "coefficient count mismatch");
  for (double v : f.coefficients)
    if (!std::isfinite(v)) return Status(Code::internal, "fit produced non-finite coefficients (ill-conditioned kernel)");
  std::vector<double> rec;
  FACTZ_RETURN_IF_ERROR(evaluate(basis, f.coefficients, basis.nodes, rec));
  double e = 0;
  for (size_t i = 0; i < rec.size(); ++i) e += (rec[i] - u[i]) * (rec[i] - u[i]);
  f.rep_error = std::sqrt(e);
  return f;
}

}  // namespace factz::flow
