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
// This package holds what every other package shares: the sentinel errors
// (ErrParam, ErrShape, ErrNonFinite, ...), the progress report type
// (Progress, ProgressFunc) and DefaultMemoryBudget. Its example shows a model
// fitted and served end to end.
//
// # Conventions
//
// Every package follows the same rules, so one package's documentation
// teaches the others:
//
//   - Long operations (anything that loops over the rows of the data) take a
//     context.Context first, check it in their loops, and return ctx.Err()
//     (wrapped) when it is cancelled.
//   - Settings come last, in an options struct whose zero value is usable.
//     Each package with long operations has a type Options with the same three
//     fields: Backend (nil means backend.Default()), Progress (a ProgressFunc;
//     nil means no reports) and MemoryBudget (bytes; 0 means
//     DefaultMemoryBudget). The options of a particular operation embed it
//     (solvers.FalkonOptions{Options: solvers.Options{...}, Centers: 500}).
//   - Data goes in and out as gonum mat values: rows are points. Sparse input
//     is a *dataset.CSR, which implements mat.Matrix; the functions that can
//     use its sparsity detect it.
//   - NewXxx builds an Xxx from parameters, FitXxx learns one from data; both
//     return *Xxx (small immutable kernel values are returned by value).
//   - Errors wrap the sentinels of this package (test with errors.Is) and say
//     what was wrong; each function's documentation names the ones it
//     returns. Nothing panics on user input; a panic means a programming
//     error (such as mismatched blas64 shapes inside a backend).
//   - Every allocation whose size comes from the input is checked against the
//     memory budget before it is made (ErrTooLarge, naming the bytes).
//   - Fitted models and feature maps are immutable, safe for concurrent use,
//     predict on the backend they were built with, and are stored in model
//     files through registries keyed by their Kind.
//
// # Extending zonal
//
// A kernel: define a type with Eval, Kind, String and MarshalBinary
// (kernels.Kernel) in kernels/kernel.go or your own package, and register its
// decoder with kernels.RegisterKernel (kernels/registry.go lists the built-in
// ones). It then works with kernel matrices, Nystrom, KRR, FALKON and ParK.
// To make it fast in kernel matrices, implement the unexported inner-product
// form in kernels (k(x, y) = f(<x, y>, |x|, |y|)); for random Gegenbauer
// features, give its zonal expansion in kernels/gzk.go and truncation.go.
//
// A feature map: implement kernels.FeatureMap (InputDim, Dim, Transform) and,
// to be saved in model files, kernels.PersistentMap (Kind, MarshalBinary);
// register the decoder with kernels.RegisterMap from an init function. Ridge
// (solvers.FitRidge) and `zonal fit -method ridge` accept it; the CLI names
// maps in cmd/zonal/maps.go.
//
// A solver: write FitXxx(ctx, k, x, y, lambda, XxxOptions) in its own file of
// package solvers returning a type that implements solvers.Model and
// solvers.PersistentModel, and call solvers.RegisterModel(kind, decoder) from
// an init function in the same file; model files, Pipeline and `zonal
// predict` then handle it with no other change. Add the method name to
// cmd/zonal/fit.go to offer it on the command line.
//
// A backend operation: an operation every backend must have goes into the
// backend.Backend interface (backend/backend.go), into each implementation
// (backend/purego, backend/netlib) and into the conformance suite
// (backend/backendtest). A fused or optional operation gets a small
// interface and a function of the same name in backend/fused.go that asserts
// the interface and otherwise runs one generic implementation; a backend
// that can do better implements the interface. SIMD kernels go into
// backend/internal/asm as avo generators (backend/internal/asm/_gen) with a
// Go fallback and tests against it. Algorithms never import the assembly;
// the compiler enforces it (internal package) and backend's boundary test
// checks it.
//
// ARCHITECTURE.md in the repository has the package map and the import
// rules.
package zonal
