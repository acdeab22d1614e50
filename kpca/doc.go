// Package kpca implements kernel principal component analysis in batch and
// incremental form, and an incremental Nystrom approximation, following
// Hallgren and Northrop, "Incremental kernel PCA and the Nystrom method".
//
// # Kernel PCA
//
// For points x_1..x_n with kernel matrix K_ij = k(x_i, x_j), kernel PCA is the
// eigendecomposition K' = U Lambda U^T of the mean-adjusted (centred) matrix
//
//	K' = H K H = K - 1_n K - K 1_n + 1_n K 1_n,   H = I - (1/n) 1 1^T,
//
// where (1_n)_ij = 1/n, or of K itself when mean adjustment is off. Column j of
// U, scaled by 1/sqrt(lambda_j), holds the coefficients of the j-th principal
// axis v_j = sum_i U_ij phi~(x_i) / sqrt(lambda_j) in feature space; the score of
// a new point x is <phi~(x), v_j> = sum_i U_ij k~(x_i, x) / sqrt(lambda_j) with
// k~ the centred kernel, and the variance it explains is lambda_j / n.
//
// # Incremental kernel PCA
//
// Adding the point x_{m+1} to m points borders the matrix by one row and column:
//
//	M_{m+1} = [ M_m  b ]
//	          [ b^T  kappa ]
//
// (M is K or K'). With M = U diag(d) U^T and U square (orthogonal), this is
// one symmetric arrowhead problem in the basis diag(U, 1):
//
//	M_{m+1} = B A B^T,  B = [ U 0 ],  A = [ diag(d)  z     ],  z = U^T b,
//	                        [ 0 1 ]       [ z^T      kappa ]
//
// and Add solves it with one bordered update (backend.BorderedUpdate): the
// m+1 eigenvalues of A are the roots of the arrowhead secular equation
//
//	x - kappa + sum_i z_i^2/(d_i - x) = 0,
//
// which interlace d (one root below d_1, one in each gap, one above d_m),
// found by a dlaed4-style iteration after deflation of tiny z_i and of
// (near-)equal d_i; z is recomputed from the roots (Gu-Eisenstat) so the
// inner eigenvectors Q_A are orthogonal to working precision, and the new
// eigenvectors are B Q_A = [U 0; 0 1] Q_A: ONE m x m by m x (m+1) product
// (fewer columns when components deflate: their pairs are copied).
//
// The paper instead writes the bordering as the expansion diag(M_m, c)
// followed by two symmetric rank-one updates (two products of that size):
// with any gamma > 0 and c = kappa/4, s = (3 kappa/4 + gamma)/2,
// t = (3 kappa/4 - gamma)/2,
//
//	M_{m+1} = diag(M_m, c) + (1/gamma) [b; s][b; s]^T - (1/gamma) [b; t][b; t]^T,
//
// because the two terms cancel in the leading block, give (s-t)/gamma b = b off
// the diagonal and (s^2-t^2)/gamma = 3 kappa/4 in the corner. The paper's choice
// is gamma = kappa/4 (s = kappa/2, t = kappa/4); this package uses
// gamma = max(|kappa|/4, |b|_2), which equals the paper's choice when
// kappa/4 >= |b| and otherwise keeps |rank-one term| ~ |b| instead of
// 4|b|^2/kappa, so less is lost to cancellation between the two terms.
// The expansion keeps the eigendecomposition: diag(U Lambda U^T, c) has
// eigenvectors [U 0; 0 1] and eigenvalues Lambda and c. Remove runs these
// two terms backwards (see Downdate).
//
// Without mean adjustment b_i = k(x_i, x_{m+1}), kappa = k(x_{m+1}, x_{m+1}).
//
// With mean adjustment the paper adds two more updates for the change of
// the centring (four in all); this package needs one bordered update, by
// working in a basis of 1^perp that grows with the data. The Helmert vectors
//
//	h_k = (1, .., 1, -k, 0, .., 0) / sqrt(k (k+1))   (k ones),  k = 1..n-1,
//
// form an orthonormal basis Q_n of 1^perp in R^n, and Q_{m+1} = [[Q_m; 0] h_m]:
// adding a point only appends h_m. As K' = H K H = Q Q^T K Q Q^T, K'_n is
// Q_n C_n Q_n^T with C_n = Q_n^T K_n Q_n, and C_{m+1} borders C_m:
//
//	C_{m+1} = [ C_m    b_C   ],  b_C = Q_m^T (K_m 1 - m a) / sqrt(m(m+1)),
//	          [ b_C^T  kappa ]   kappa = (1^T K_m 1 - 2m 1^T a + m^2 k) / (m(m+1)),
//
// (a_i = k(x_i, x_{m+1}), k = k(x_{m+1}, x_{m+1})). The state holds
// U = Q_m V with C_m = V diag(d) V^T (V square: the m-1 eigenpairs of K'_m
// orthogonal to 1). Then C_{m+1} = diag(V, 1) A diag(V, 1)^T with the
// arrowhead A = [diag(d) z; z^T kappa], z = V^T b_C, and, multiplying by
// Q_{m+1},
//
//	K'_{m+1} = B A B^T,  B = Q_{m+1} diag(V, 1) = [[U; 0] h_m],
//	z = V^T b_C = V^T Q_m^T Q_m b_C = U^T g,  g = Q_m b_C = H_m (K_m 1 - m a) / sqrt(m(m+1)),
//
// (Q_m^T Q_m = I; g is a centred vector, O(m) to form). So the mean-adjusted
// point is the same single arrowhead problem with the border vector g, the
// corner kappa and the border direction h_m in place of e_{m+1}; the new
// eigenvectors are [[U; 0] h_m] Q_A, again one n x (m-1) by (m-1) x m
// product (plus the rank-one term h_m q_last^T, O(nm)), and they stay in
// 1^perp (TestHelmertBorderIdentity checks the identity). In the two-update
// form the same bordering reads
//
//	K'_{m+1} = [K'_m 0; 0 0] + c h_m h_m^T + (1/gamma)(v_s v_s^T - v_t v_t^T),
//	v_s = [g; 0] + s h_m,  v_t = [g; 0] + t h_m,
//
// with |b_C| = |g|. With mean adjustment the state holds
// the m-1 eigenpairs orthogonal to 1 and not the null vector 1/sqrt(m) of
// K' (Rank is m-1). Init does the same in batch: it diagonalises
// C = Q^T K' Q and sets U = Q V; applying Q or Q^T costs O(n) per vector
// through prefix sums.
//
// Every point is incorporated: deflated components keep their eigenpairs,
// nothing is ever dropped (unlike the reference implementation, which
// skips points whose update fails). Stats counts the bordered updates of
// Add and the rank-one updates of Remove.
//
// # Truncation
//
// With Options.Components = r > 0 only the top r eigenpairs are kept. The
// border vector b (g with mean adjustment) need not lie in span U_r: its
// normalised residual q = (I - U_r U_r^T) b / |.| joins the basis as a
// column of eigenvalue 0 in the current approximation, which turns the
// bordering of the held M_r = U_r Lambda_r U_r^T into the arrowhead problem
// [diag(Lambda_r, 0) [U_r q]^T b; b^T [U_r q] kappa] of size r+2, exact in
// the span of [[U_r q; 0 0] e_{m+1}] (h_m with mean adjustment); after the
// bordered update the smallest eigenpairs are dropped back to r. A step
// costs the kernel row (O(n d)), O(n r) for [U_r q]^T b and q, O(r^2) for
// the roots and one n x (r+1) by (r+1) x (r+2) product: O(n r^2) per point
// instead of O(n^3) (batch) or O(n^2) (the full update). As the bordering
// is linear in the previous matrix, the error is exactly the sum of the
// dropped parts,
//
//	M_n - U_r Lambda_r U_r^T = sum_t diag(D_t, 0),  |.|_F <= sum_t |D_t|_F,
//
// D_t being the eigen-part dropped at step t; TruncationBound returns that
// sum (plus sqrt(2) |q_t| for a residual too small to add, below
// 1e-10 |b|, when the step borders with U_r U_r^T b instead of b). It is
// never below the batch truncation error sqrt(sum_{j>r} lambda_j^2).
//
// # Downdate
//
// Incremental.Remove deletes a point: it is moved to the last position and the
// terms that would add it to the remaining points are applied with opposite
// signs in reverse order, which leaves diag(M_{n-1}, c) (with mean
// adjustment [K'_{n-1} 0; 0 0] + c h h^T); the eigenvector e_n (or h) is then
// split off with a Householder reflection of its coordinates U^T e_n (U^T h).
//
// # Drift
//
// Floating-point errors accumulate over the updates. Drift reports the relative
// reconstruction error |M - U Lambda U^T|_F / |M|_F and the loss of
// orthogonality |U^T U - I|_max exactly (O(n^2 r)); EstimateDrift estimates
// both from p Gaussian probe vectors g (E|A g|^2 = |A|_F^2) in O(n^2 p), the
// orthogonality estimate being of |U^T U - I|_F, which bounds the max norm.
// With Options.ReorthThreshold > 0 the drift is estimated every
// Options.CheckEvery points and, when it passes the threshold, the basis is
// re-orthogonalised by a Rayleigh-Ritz step (U <- U L^{-T} W with
// U^T U = L L^T and W the eigenvectors of L^{-1} U^T M U L^{-T}).
//
// # Incremental Nystrom
//
// For landmarks c_1..c_m the Nystrom approximation of K is
// K_nm K_mm^+ K_mn = F F^T with F = K_nm U Lambda^{+1/2} from the
// eigendecomposition K_mm = U Lambda U^T; Nystrom keeps that decomposition
// exact as landmarks are added, with one bordered update per landmark
// (no mean adjustment), and its Map is the feature map x -> F(x), a
// kernels.PersistentMap registered as "inc-nystrom" (MapKind; decode it with
// kernels.UnmarshalMap). NewNystromMap builds the same map from one batch
// eigendecomposition.
//
// # Models
//
// Fit and Incremental.Model return a Model: the top k eigenpairs and what
// Transform needs to project new points (the training points, the
// centring). Scores gives the training points' scores sqrt(lambda_j) U_ij
// without kernel evaluations. A Model is a kernels.PersistentMap of kind
// "kpca" (ModelKind): MarshalBinary stores every float64 bit for bit and
// UnmarshalModel (or kernels.UnmarshalMap) rebuilds a model that
// transforms to the same bits.
//
// # Conventions
//
// Fit, Incremental.Init, Incremental.AddRows and NewNystromMap take a
// context first; every constructor takes an Options last, whose Backend
// (nil: backend.Default()), Progress and MemoryBudget mean what they mean in
// every zonal package. Errors wrap the sentinels of package zonal; each
// function's documentation names the ones it can return. The experiment
// harness (growth with checkpoints, timings, Nystrom error series) is not
// part of this package: it lives with the `zonal kpca` command.
package kpca
