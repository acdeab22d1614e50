// Package backendtest is the conformance suite every backend.Backend
// implementation must pass, in the style of gonum's blas/testblas and
// lapack/testlapack: Run(t, b) checks one backend against reference
// computations and mathematical identities, Parity(t, a, b) checks that two
// backends agree on the same random cases, and Concurrent(t, b) calls one
// backend from many goroutines (run it under -race).
//
// Operands are views into larger arrays (stride > cols) whose padding is
// filled with NaN: an implementation that reads outside a view propagates the
// NaN into its result, and one that writes outside it changes the padding;
// both are reported.
//
// Tolerances are stated next to each check. They come from the standard
// rounding-error bounds (Higham, Accuracy and Stability of Numerical
// Algorithms, 2nd ed.), with u = 2^-53 the unit roundoff and
// gamma_k = k*u/(1-k*u):
//
//   - products (Gemm, Syrk, Gemv, Dot): |fl(A B) - A B| <= gamma_k |A||B|
//     elementwise (Thm 3.5) for any summation order, blocked or FMA; the
//     reference product has the same bound, so the two may differ by
//     2*gamma_k |A||B|, and we allow 2*gamma_(k+2) (|alpha||A||B| + |beta||C|).
//   - Cholesky: L L^T = A + dA with |dA| <= gamma_(n+1) |L||L^T| (Thm 10.3).
//   - triangular solves: (T + dT) x = b with |dT| <= gamma_n |T| (Thm 8.5),
//     so the residual |T x - b| <= gamma_n |T||x|.
//   - symmetric eigenproblems and the secular update: a backward-stable
//     method returns the exact eigensystem of A + E with ||E||_2 <= p(n) u
//     ||A||_2; eigenvalues then move by at most ||E||_2 (Weyl), and the
//     computed vectors are orthogonal to O(p(n) u). We take p(n) = 20 n,
//     generous for Householder tridiagonalisation and QL/QR or divide and
//     conquer (whose observed p(n) is far below n).
//
// Parity tolerances between two backends are the sum of the two backends'
// bounds above; for solutions (Cholesky factors, solves, eigenvectors) they
// are the forward-error bounds cond * backward error on well-conditioned
// inputs, stated in Parity.
package backendtest
