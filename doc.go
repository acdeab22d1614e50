// Package zonal is the root of the zonal module: scalable kernel methods in Go.
//
// The work is done in its packages, each with one job:
//
//   - backend: the small linear-algebra interface (Gemm, X^T X, Cholesky,
//     eigen, the secular rank-one eigen-update) and the fused operations a
//     backend may offer (Gaussian kernel block, vector exp, Gegenbauer
//     recurrence, slice axpy and sum of squares: optional interfaces with one
//     shared implementation), with a pure-Go/SIMD implementation
//     (backend/purego) and OpenBLAS (backend/netlib, build tag netlib). The
//     SIMD kernels themselves (GEMM micro-kernels, exp, Gaussian kernel
//     blocks, Gegenbauer recurrence; avo generators in _gen) live in
//     backend/internal/asm: only packages under backend/ can import them, and
//     every algorithm reaches them through a backend.Backend;
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
