// Package secular solves the symmetric rank-one eigenvalue update that every
// zonal backend exposes as RankOneUpdate, and the bordered (arrowhead)
// update behind backend.BorderedUpdate.
//
// Given A = U diag(d) U^T, with d ascending and U (n x m) having orthonormal
// columns, and a rank-one term rho v v^T, the update returns the
// eigendecomposition of U (diag(d) + rho z z^T) U^T with z = U^T v (exactly
// A + rho v v^T when U is square). The inner m x m problem
// D + rho z z^T is solved in O(m^2) by the classical divide-and-conquer
// machinery (Bunch, Nielsen and Sorensen 1978; Gu and Eisenstat 1994):
//
//   - Sign: for rho < 0 the problem is negated, eig(D + rho z z^T) =
//     -eig(-D + |rho| z z^T), so the root finder only ever sees rho > 0.
//   - Scaling: D and rho |z|^2 are scaled by a power of two so the larger of
//     max|d| and rho |z|^2 is about 1 (exact; undone on output), so no
//     intermediate underflows or overflows.
//   - Deflation: with z normalised (rho absorbs |z|^2) and
//     tol = 8 eps max(max|d|, rho), a component with rho |z_i| <= tol is
//     dropped (its pair (d_i, u_i) is an eigenpair to within tol), and two
//     poles d_j <= d_k whose Givens rotation zeroing z_j leaves an
//     off-diagonal |c s (d_k - d_j)| <= tol are merged: the rotation is applied
//     to the two columns of U and the rotated d_j is kept as an eigenvalue.
//     Every deflation perturbs the matrix by at most tol in norm, so the result
//     is backward stable; nothing is ever dropped from the output.
//   - Roots: the K remaining eigenvalues are the roots of the secular equation
//     f(x) = 1 + rho sum_j z_j^2/(d_j - x) = 0, one in each interval
//     (d_i, d_{i+1}) and the last in (d_K, d_K + rho |z|^2]. Laed4 finds each
//     root as an offset tau from its nearest pole (so d_j - lambda is known to
//     high relative accuracy even when lambda nearly equals a pole) by
//     rational interpolation of f with two poles (fixed-weight and middle-way
//     schemes, switched when progress stalls), safeguarded by a bracket that
//     shrinks every step and a bisection step when the model leaves it.
//   - Orthogonality: instead of the input z, the vector zhat for which the
//     computed roots are exact eigenvalues is recomputed by the Lowner
//     product formula
//     zhat_i^2 = (lambda_i - d_i) prod_{j != i} (d_i - lambda_j)/(d_i - d_j)
//     (up to the factor 1/rho, irrelevant after normalisation), and the
//     eigenvector of root j is (zhat_i/(d_i - lambda_j))_i normalised. These
//     vectors are orthogonal to working precision however close the roots are
//     (Gu and Eisenstat).
//   - The updated eigenvectors are U_active * Utilde through one Gemm of
//     n x K by K x K; deflated columns are copied; eigenpairs are then sorted
//     ascending.
//
// # Bordered update
//
// Bordered solves the same kind of problem for a matrix bordered by one row
// and column, M_{n+1} = [[U; 0] w] A [[U; 0] w]^T with the arrowhead
// A = [diag(d) z; z^T alpha] (z = U^T v): the m+1 eigenvalues of A are the
// roots of x - alpha + sum_j z_j^2/(d_j - x) = 0, one below d_1, one in each
// gap and one above d_m, found by ArrowRoot (the Laed4 iteration with the
// linear term x - alpha in the model, and the outer roots as offsets from
// the outermost poles), after the same scaling and deflation; z is
// recomputed from the roots by the arrowhead Lowner formula and the
// eigenvectors follow with one n x K by K x (K+1) product. Bordering M by
// one point this way costs one product where the expansion and two
// rank-one updates cost two.
//
// The driver is written once; a backend may supply its own RootFinder (the
// netlib backend calls LAPACK's dlaed4) while purego uses Laed4.
package secular
