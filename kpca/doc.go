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
// (M is K or K'). With any gamma > 0 and c = kappa/4, s = (3 kappa/4 + gamma)/2,
// t = (3 kappa/4 - gamma)/2, this is the expansion diag(M_m, c) followed by two
// symmetric rank-one updates,
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
// eigenvectors [U 0; 0 1] and eigenvalues Lambda and c.
//
// Without mean adjustment b_i = k(x_i, x_{m+1}), kappa = k(x_{m+1}, x_{m+1}):
// two updates. With mean adjustment, let s_i = sum_j K_ij be the row sums and
// S = 1^T K 1 the total of the uncentred m x m matrix, a_i = k(x_i, x_{m+1}),
// k = k(x_{m+1}, x_{m+1}), n = m+1, and s'_i = s_i + a_i (i <= m),
// s'_n = 1^T a + k, S' = S + 2 1^T a + k the sums after the addition. Then
//
//	b_i   = a_i - s'_i/n - s'_n/n + S'/n^2,
//	kappa = k - 2 s'_n/n + S'/n^2,
//
// and the leading m x m block of K'_{n} differs from K'_m by
//
//	D_ij = u_i + u_j + c0,  u_i = s_i/m - s'_i/n,  c0 = S'/n^2 - S/m^2,
//
// i.e. D = w 1^T + 1 w^T with w = u + (c0/2) 1, a symmetric rank-two matrix.
// For any alpha > 0, w 1^T + 1 w^T = (1/2) p p^T - (1/2) q q^T with
// p = alpha 1 + w/alpha and q = alpha 1 - w/alpha (both padded with a zero
// for the new point); alpha = sqrt(|w| / sqrt(m)) balances |alpha 1| and
// |w/alpha|. So with mean adjustment
//
//	K'_{n} = diag(K'_m, c) + (1/gamma)([b;s][b;s]^T - [b;t][b;t]^T)
//	         + (1/2)([p;0][p;0]^T - [q;0][q;0]^T):
//
// four updates. Each symmetric rank-one update U Lambda U^T + rho v v^T is
// solved by the backend's secular-equation update
// (backend.Backend.RankOneUpdate). Every point is incorporated: a term whose
// vector is exactly zero is the identity and is not applied, nothing else is
// ever dropped (Stats.Skipped is always 0; it exists because the reference
// implementation skips points whose update fails).
//
// # Truncation
//
// With Options.Components = r > 0 only the top r eigenpairs are kept. The new
// point expands the basis to [U_r 0; 0 1] plus the normalised components of
// the update vectors outside it (at most three more columns, with eigenvalue
// 0 in the current approximation), so every rank-one update is exact within
// that span; afterwards the smallest eigenpairs are dropped back to r. As the
// bordering is linear in the previous matrix, the error is exactly the sum of
// the dropped parts,
//
//	M_n - U_r Lambda_r U_r^T = sum_t diag(D_t, 0),  |.|_F <= sum_t |D_t|_F,
//
// D_t being the eigen-part dropped at step t; TruncationBound returns that
// sum. It is never below the batch truncation error
// sqrt(sum_{j>r} lambda_j^2).
//
// # Downdate
//
// Incremental.Remove deletes a point: it is moved to the last position and the
// terms that would add it to the remaining points are applied with opposite
// signs in reverse order, which leaves diag(M_{n-1}, c); the eigenvector e_n
// is then split off with a Householder reflection of the last row of U.
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
// exact as landmarks are added, with the two-update scheme above
// (no mean adjustment), and its Map is the feature map x -> F(x), a
// kernels.PersistentMap registered as "inc-nystrom".
package kpca
