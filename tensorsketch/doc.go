// Package tensorsketch approximates polynomial and Gaussian kernels by
// feature maps whose cost scales with the number of nonzeros of the input:
// CountSketch, TensorSketch (Pham and Pagh 2013), PolySketch (Ahle et al.
// 2020) and the adaptive leverage-score row sampler of Woodruff and Zandieh
// (ICML 2020, "Near input sparsity time kernel embeddings via adaptive
// sampling").
//
// # Kernels as inner products of tensor powers
//
// The polynomial kernel (gamma <x,y> + c)^p equals <x',y'>^p = <x'^{(x)p}, y'^{(x)p}>
// for the augmented point x' = (sqrt(gamma) x, sqrt(c)) in R^{d+1}; every
// map here works on x' (so a sparse row gains one stored entry). The
// Gaussian kernel with bandwidth sigma is, after x <- x/sigma,
//
//	exp(-|x-y|^2/2) = exp(-|x|^2/2) exp(-|y|^2/2) sum_l <x,y>^l / l!,
//
// truncated at degree q; the error for |x|^2, |y|^2 <= r^2 is at most the
// Poisson(r^2) upper tail beyond q (TaylorDegree chooses q from it). So the
// kernel matrix is K = Phi^T Phi with Phi the stacked blocks
// sqrt(coef_l) X'^{(x)l} diag(omega) (columns are points): polynomial, one
// block l = p with omega = 1; Gaussian, l = 0..q, coef_l = 1/l!,
// omega(x) = exp(-|x|^2/2).
//
// # Oblivious sketches
//
// CountSketch C: R^d -> R^m hashes coordinate i to bucket h(i) with sign
// s(i); E[<Cx, Cy>] = <x,y>. TensorSketch of degree p convolves p
// independent CountSketches, computed as IFFT(prod_j FFT(C_j x)) with
// gonum's real FFT; it is the CountSketch of x^{(x)p} under the hash
// sum_j h_j(i_j) mod m, so E[<TS x, TS y>] = <x,y>^p. PolySketch combines q
// CountSketch leaves pairwise with TensorSRHT nodes
// T(u,v)_j = (H D1 u)_{a_j} (H D2 v)_{b_j} / sqrt(m) (H the Hadamard
// transform, D1, D2 random signs, (a_j, b_j) uniform) up a binary tree; degree
// k < q uses the unit vector e_1 in the leaves k+1.. ("degree padding"), so
// one pass gives unbiased sketches of every degree 1..q, and the variance
// grows polynomially in q rather than like 3^q.
//
// # Adaptive sampling (Algorithm 1 and the RowSampler)
//
// A row r of Phi (a tuple (i_1..i_l) of one block) drawn at least once in s
// draws of probability p_r contributes the feature sqrt(coef_l/pi_r)
// omega(x) x'_{i_1}...x'_{i_l} with pi_r = 1 - (1-p_r)^s (Horvitz-Thompson;
// about 1/(s p_r) for rare rows, 1 for rows drawn surely); E[Z^T Z] = K
// whatever the p_r. Ridge leverage
// scores tau_r = Phi_r (K + lambda I)^{-1} Phi_r^T make Z^T Z an
// (eps, lambda)-spectral approximation of K,
// (1-eps)(K + lambda I) <= Z^T Z + lambda I <= (1+eps)(K + lambda I),
// with s = O(s_lambda log n / eps^2) draws, s_lambda = tr(K (K+lambda I)^{-1}).
//
// FitAdaptive never forms Phi (d^p rows). Level 0 uses lambda_0 = tr(K)/s,
// where the ridge leverage scores sum to at most s, and B = 0; each further
// level halves lambda and uses the previous level's sampled rows B
// (B^T B approximates K + lambda I within a constant factor) until lambda
// is reached (Algorithm 1). At each level the RowSampler draws rows of
// Phi W with W = (B^T B + lambda I)^{-1} [B^T, sqrt(lambda) I] G
// (G Gaussian with t columns: a Johnson-Lindenstrauss sketch of the
// leverage, |Phi_r W|^2 ~ t tau_r), coordinate by coordinate: the
// conditional distribution of i_j given i_1..i_{j-1} is proportional to
// |X'^{(x)(l-j)} diag(u) X'^T e_i|^2 with u = W_k x'_{k,i_1}...x'_{k,i_{j-1}}
// per point, estimated with the degree-(l-j) PolySketch of the points
// (computed once for all levels, from a tree of at least two leaves so that
// even the degree-1 sketch is Hadamard-mixed: a bare CountSketch, whose
// entries are paired with the JL columns, let a heavy coordinate such as
// the constant sqrt(coef0) reach the estimate through a single column) and
// exact for the last coordinate. The
// exact probability of each drawn row is the product of the conditionals
// used, so the weights are exact. Draws that share a prefix share its
// conditional, and a prefix touches only the points whose coordinates in
// the prefix are nonzero, so the work per level is about nnz(X) m for the
// first coordinate plus, for each distinct prefix, m times the nonzeros of
// the points that contain it (sum_k nnz(x_k)^2 m over all first
// coordinates). A prefix held by more than SupportSample points instead
// estimates its conditional from that many points sampled by their
// diagonal mass, with a uniform floor so that every coordinate keeps a
// positive probability; the points are found through a column index, so
// with a small SupportSample the work is linear in nnz(X) (see
// BenchmarkRowSamplerDensity: with SupportSample 256 the time per nonzero
// varies by 1.14x (degree 2) and 1.64x (degree 3) from 1% to 100% density,
// with the default 2048 by 7x and 11x; measured with 16 projections). The
// sampled conditionals cost accuracy: on 400 digits rows with s = 1024,
// SupportSample 256 gave eps_lambda 0.63 and 1.69 where the default gave
// 0.43 and 0.82 (lambda 1 and 0.1, before the changes below), hence the
// default.
//
// At tight budgets (s = 2 s_lambda) three things made the sampler far worse
// than sampling by the exact ridge leverage scores (mean eps_lambda 1.5-2.1x
// on digits, debian_text and MNIST rows): the first-coordinate marginals of
// degree-2 rows came from a bare CountSketch (above), t = 16 JL columns
// under-sampled rows by their chi-square noise, and the intermediate levels
// drew at most s rows, so B^T B was a poor stand-in for K. Now the sketches
// are mixed, t = 64, and an intermediate level draws between s and 4 s rows
// (they only build B); the ratio is 1.07-1.21 (tightbudget_test.go). A fraction RowNormMix of the sampling mass
// follows the row norms |Phi_r|^2/tr(K), which bounds the weight of any
// drawn row, and the recursion stops early when a level after the first
// estimates a statistical dimension above half the draws (ExactLambda
// disables this). Every probability used is exact, so E[Z^T Z] = K holds
// in all modes (tested end to end). Repeated draws
// and permutations of the same multiset of indices have identical features
// and are merged (squared weights add), so Dim() is usually well below s.
//
// # API
//
// Every map takes its kernel as a kernels.Kernel: kernels.Polynomial for
// (gamma <x,y> + coef0)^p, kernels.Gaussian through its Taylor expansion
// (truncation degree q in the options; TaylorDegree chooses it from the
// data radius); any other kind is an error wrapping zonal.ErrParam. The
// oblivious sketches are built by NewCountSketch (degree-1 polynomial
// kernels), NewTensorSketch and NewPolySketch from the kernel, the input
// dimension d and SketchOptions (Features D, TaylorDegree, Seed,
// MemoryBudget). The adaptive map is fitted by
// FitAdaptive(ctx, x, k, AdaptiveOptions), which embeds the module-wide
// Options (Backend, Progress, MemoryBudget). Allocations whose size follows
// from the input or the options are checked against MemoryBudget before
// they are made (zonal.ErrTooLarge).
//
// # Input
//
// Every map (Transform) and FitAdaptive read any gonum mat.Matrix; a
// *dataset.CSR is recognised and read through its nonzeros, without a
// dense copy, and gives bit-identical features and the same fitted map as
// dense input holding the same numbers (dense input is converted to its
// nonzero entries). Rows without entries are allowed (the zero vector).
// Bad parameters wrap zonal.ErrParam, shape mismatches zonal.ErrShape,
// NaN/Inf zonal.ErrNonFinite, malformed CSR zonal.ErrFormat (with the
// zonal.ErrShape or zonal.ErrRange of dataset's CSR.Validate), malformed
// encodings zonal.ErrFormat. All randomness comes from the
// seed (math/rand/v2 PCG); the maps are immutable after construction and
// safe for concurrent use, and they implement kernels.PersistentMap (kinds
// "countsketch", "tensorsketch", "polysketch", "adaptive").
package tensorsketch
