// Package kernels holds zonal's kernel functions, kernel matrices, Gegenbauer
// polynomials and the feature maps that approximate kernels: random
// Gegenbauer features (Han, Zandieh, Avron, ICML 2022), random Fourier
// features (Rahimi-Recht; orthogonal random features) and Nystrom (uniform
// and recursive ridge-leverage-score landmarks, Musco-Musco 2017), plus the
// measures that compare an approximation Z Z^T with the exact kernel matrix.
//
// # Kernels
//
//	Gaussian     exp(-|x-y|^2 / (2 sigma^2))       (gamma = 1/(2 sigma^2))
//	Laplacian    exp(-|x-y|_1 / sigma)
//	Polynomial   (gamma <x,y> + coef0)^p
//	ExpDot       exp(<x,y> / sigma^2)
//	ArcCosine    order 0: 1 - theta/pi; order 1: |x||y| (sin theta + (pi-theta) cos theta)/pi
//	NTK          |x||y| kappa_L(cos theta), the depth-L ReLU neural tangent kernel
//	DotProduct   sum_n c_n <x,y>^n with user coefficients c_n >= 0
//	GZK          sum_l <h_l(|x|), h_l(|y|)> P_d^l(<x,y>/(|x||y|))
//
// MatrixInto computes K(X, Y) in row blocks, in parallel, with the inner
// products from the backend's Gemm; Matrix allocates it first; Centers
// prepares Y once (its check and row norms) for many blocks against it,
// with the same entries. MatrixInto32
// (and Centers32, which prepares Y once for many blocks: rounded, and
// packed by the backend for its float32 GEMM kernel,
// backend.PrepareGaussian32) stores K(X, Y) in float32: the Gaussian
// computed by float32 products and exponential with float64 row norms, the
// other kernels evaluated in float64 and rounded. Centers32.NewRows32
// prepares X too (checked, norms rounded once) for many blocks of its rows,
// each computed on the caller's goroutine (float32 FALKON's passes).
// Transform32 writes a feature map's features in float32: FourierMap and
// Nystrom compute their products in float32 (FeatureMap32), any other map
// is its float64 Transform rounded, a block of rows at a time.
//
// # Gegenbauer polynomials
//
// P_d^l is normalised so that P_d^l(1) = 1 and computed by the recurrence
// P^l = ((2l+d-4) t P^{l-1} - (l-1) P^{l-2})/(l+d-3). alpha_{l,d}, the
// dimension of the degree-l spherical harmonics on S^{d-1}, is
// (2l+d-2)/l C(l+d-3, l-1). For w uniform on the sphere
//
//	E_w[P^l(<s,w>) P^m(<t,w>)] = delta_lm P^l(<s,t>) / alpha_{l,d},
//
// which makes phi_w(x) = sum_l sqrt(alpha_l) h_l(|x|) P^l(<x/|x|, w>) an
// unbiased one-direction feature of a GZK. The Gaussian kernel is a GZK with
// h_{l,j}(r) = sqrt(alpha_l Gamma(d/2)/(j! Gamma(j+l+d/2))) (r/(sigma sqrt 2))^(2j+l) exp(-r^2/(2 sigma^2)),
// and a dot-product kernel with h_{l,j}(r) = sqrt(c_{l+2j} b_{l+2j,l}) r^(l+2j),
// where t^n = sum_l b_{n,l} P^l(t). Truncating to l <= q, j < s leaves an
// error bounded by TruncationBound; ChooseTruncation picks (q, s) from the
// data radius and a tolerance, SelectTruncation from a feature budget (bias
// plus variance on a pilot sample).
//
// # Feature maps
//
// Every map implements FeatureMap (InputDim, Dim, Transform into a caller's
// buffer); maps are immutable after construction, safe for concurrent use and
// deterministic from their seed. The constructors are named after the type
// they return: NewGegenbauerMap, NewFourierMap, NewNystrom (landmarks sampled
// uniformly or by recursive ridge leverage scores, NystromOptions.Sampling)
// and NewNystromFromLandmarks, and NewNystromBasis (the same map in K_CC's
// eigenbasis: Rank() features instead of m, the same kernel, cheaper to
// apply when the rank is low; tune scores Nystrom groups on it). GegenbauerMap, FourierMap and Nystrom also
// implement PersistentMap; every kernel and map kind of this package is
// registered in registry.go (RegisterKernel, RegisterMap) and rebuilt by
// UnmarshalKernel and UnmarshalMap, so models can save them.
//
// FourierMap holds its m = D/2 frequencies by input coordinate, as W^T
// (d x m, row i the i-th coordinate of every omega_k); its encoding keeps
// them m x d (omega_1, ..., omega_m) as every earlier version wrote them,
// so old model files load unchanged. The phases W x of up to 32 dense rows
// are sums of x_i W^T[i,:] over the nonzero inputs (backend.AxpySlice),
// in increasing i: one row reads nnz(x) m frequencies, not d m, and gives
// the same bits alone as in such a block. More rows take one backend Gemm
// X W^T per block of 256 rows (another summation order: agreement to
// rounding, see FourierMap.Transform). Zero inputs are skipped only when
// they reach the map as zeros: a scaler that centres the columns makes
// every row dense.
//
// # Measures
//
// For a kernel matrix K and features Z, E = Z Z^T - K: the relative Frobenius
// error |E|_F/|K|_F, the relative spectral error |E|_2/|K|_2, and
// eps_lambda = |(K+lambda I)^{-1/2} E (K+lambda I)^{-1/2}|_2, the smallest eps
// for which Z Z^T + lambda I is within a factor 1 +- eps of K + lambda I.
//
// # Sparse input
//
// Every function that reads data rows through a mat.Matrix (MatrixInto,
// Matrix, CheckScale, NewNystrom, NewNystromFromLandmarks, RecursiveRLS,
// SelectTruncation, NewGegenbauerMap and the Transform of the Nystrom,
// Fourier and Gegenbauer maps) accepts a *dataset.CSR and never forms its
// n x d dense matrix: kernel blocks come from row norms and sparse products
// (backend.SparseGemm; sparse-sparse through a column index of the
// right-hand side), feature projections from backend.SparseGemm (the
// Fourier map's: an axpy of a row of W^T per stored entry), and
// Nystrom landmarks taken from a CSR stay sparse. Kernels without such a
// form (user kernels) are evaluated on rows densified one at a time.
//
// # Options, contexts and errors
//
// Operations that do bulk linear algebra take an Options (or a specific
// option struct embedding it) as their last argument: Backend (nil means
// backend.Default()), Progress (nil means no reports) and MemoryBudget
// (bytes; 0 means zonal.DefaultMemoryBudget), checked before any array whose
// size comes from the input is allocated. Operations that loop over the rows
// of data or over landmarks (kernel matrices, Nystrom and leverage-score
// builds, Gegenbauer maps built from data, the truncation pilot, the
// measures) take a context.Context first and check it between blocks.
// Cheap closed-form helpers (Gegenbauer, LogAlpha, Alpha, MonomialCoeffs)
// take neither.
//
// Errors wrap the module's sentinels (zonal.ErrParam, zonal.ErrShape,
// zonal.ErrEmpty, zonal.ErrNonFinite, zonal.ErrTooLarge, zonal.ErrFormat,
// zonal.ErrUnknown, zonal.ErrNoConvergence, zonal.ErrNotPositiveDefinite)
// with a message saying what was wrong; each function's documentation lists
// the ones it returns. A cancelled context gives ctx.Err().
package kernels
