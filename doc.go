// Package zonal is the root of the zonal module: scalable kernel methods in Go.
//
// The work is done in its packages, each with one job:
//
//   - backend: the small linear-algebra interface (Gemm, X^T X, Cholesky,
//     eigen, the secular rank-one eigen-update) with a pure-Go/SIMD
//     implementation (backend/purego) and OpenBLAS (backend/netlib, build tag
//     netlib);
//   - asm: the SIMD kernels (GEMM micro-kernels, exp, Gaussian kernel blocks,
//     Gegenbauer recurrence) behind purego;
//   - kernels: kernel functions, kernel matrices, Gegenbauer polynomials and
//     the feature maps (random Gegenbauer, random Fourier, Nystrom);
//   - tensorsketch: CountSketch, TensorSketch, PolySketch and the adaptive
//     leverage-score row sampler;
//   - solvers: CG, ridge on features, exact KRR, FALKON, ParK, tasks and the
//     model file;
//   - kpca: batch and incremental kernel PCA and incremental Nystrom;
//   - dataset: LIBSVM and CSV readers, scaling, splits and the embedded
//     digits set.
//
// This package itself holds no code; its example shows a model fitted and
// served end to end.
package zonal
