package solvers

import (
	"fmt"
	"math"
	"strings"
)

// Solver names of Diagnostics.
const (
	SolverCG       = "cg"       // conjugate gradients (FALKON, ParK's cells)
	SolverCholesky = "cholesky" // a direct factorisation (KRR, Ridge)
	SolverNewton   = "newton"   // Newton steps solved by CG (Logistic)
)

// Diagnostics describes how a fit's linear system was solved. Not meeting
// the tolerance is not an error: the fit returns its model, and
// Converged = false (String gives a one-line warning).
//
// For ParK the fields aggregate the cells: Iterations, Cap and Condition
// are the largest over the cells, Residual the worst cell's (WorstCell),
// Converged whether every cell converged, Unconverged how many did not.
type Diagnostics struct {
	// Solver is SolverCG or SolverCholesky; "" (the zero Diagnostics)
	// when the model was loaded from a file or assembled from parts: model
	// files do not record a fit's diagnostics, so nothing is known then.
	Solver string
	// Iterations run, and Cap the iteration bound in force when the solve
	// stopped (0 for a direct solve).
	Iterations, Cap int
	// Automatic is true when Cap was derived from the problem (Iterations
	// option zero) rather than given.
	Automatic bool
	// Residual is the final relative residual ||b - A x|| / ||b|| of the
	// solved system, the worst output column (0 for a direct solve, whose
	// error is that of the factorisation), and Tol the tolerance.
	Residual, Tol float64
	// Converged is true when Residual <= Tol (always for a direct solve).
	Converged bool
	// Stalled is true when the run stopped before its cap because neither
	// the objective CG minimises nor the true residual was still
	// decreasing: Tol is below the accuracy rounding allows for this
	// system, and the model is the best iterate found (Converged is
	// false). For ParK: some cell stalled.
	Stalled bool
	// Condition estimates the condition number of the preconditioned
	// system from CG's own coefficients (a lower bound; 0 when unknown).
	Condition float64
	// Cells is ParK's number of cells (0 for other models); then
	// Unconverged counts the cells whose solve did not meet Tol and
	// WorstCell is the cell with the largest Residual.
	Cells, Unconverged, WorstCell int
	// NewtonSteps is the Newton steps of a Logistic fit (SolverNewton);
	// Iterations and Cap are then its CG iterations over all steps and
	// the largest per-step bound, and Residual the final relative
	// gradient norm (LogisticOptions.GradTol is Tol).
	NewtonSteps int
}

// Diagnosed is implemented by every fitted model of this package.
type Diagnosed interface {
	Diagnostics() Diagnostics
}

// Known reports whether d describes a fit (false after loading a model).
func (d Diagnostics) Known() bool { return d.Solver != "" }

// String is a one-line summary, fit for a warning when !Converged.
func (d Diagnostics) String() string {
	switch d.Solver {
	case "":
		return "fit diagnostics not recorded (model loaded from a file)"
	case SolverCholesky:
		return "direct solve (Cholesky)"
	}
	var b strings.Builder
	if d.Solver == SolverNewton {
		d.outcome(&b, "Newton", d.NewtonSteps, "steps", "no step decreased the objective", "the step cap")
		fmt.Fprintf(&b, ", relative gradient %.3g (tol %.3g), %d CG iterations in all", d.Residual, d.Tol, d.Iterations)
		return b.String()
	}
	d.outcome(&b, "CG", d.Iterations, "iterations", "at the accuracy rounding allows: neither the objective nor the residual still decreasing",
		fmt.Sprintf("the %s cap of %d iterations", capKind(d.Automatic), d.Cap))
	fmt.Fprintf(&b, ", relative residual %.3g (tol %.3g)", d.Residual, d.Tol)
	if d.Converged {
		fmt.Fprintf(&b, ", %s cap %d", capKind(d.Automatic), d.Cap)
	}
	if d.Condition > 0 {
		fmt.Fprintf(&b, ", condition estimate %.3g", d.Condition)
	}
	if d.Cells > 0 {
		fmt.Fprintf(&b, "; %d of %d cells unconverged, worst cell %d", d.Unconverged, d.Cells, d.WorstCell)
	}
	return b.String()
}

// outcome writes the one switch every iterative solve's String shares:
// converged in count units, stalled (stall: why it stopped), or stopped at
// its cap (capped: which cap).
func (d Diagnostics) outcome(b *strings.Builder, name string, count int, units, stall, capped string) {
	switch {
	case d.Converged:
		fmt.Fprintf(b, "%s converged in %d %s", name, count, units)
	case d.Stalled:
		fmt.Fprintf(b, "%s NOT converged: stalled after %d %s (%s)", name, count, units, stall)
	default:
		fmt.Fprintf(b, "%s NOT converged: stopped at %s after %d %s", name, capped, count, units)
	}
}

func capKind(auto bool) string {
	if auto {
		return "automatic"
	}
	return "given"
}

// cgDiagnostics turns a CG run into Diagnostics; zero for a zero run (a
// model loaded from a file).
func cgDiagnostics(r CGResult, auto bool) Diagnostics {
	if r.Cap == 0 && r.History == nil {
		return Diagnostics{}
	}
	return Diagnostics{
		Solver: SolverCG, Iterations: r.Iterations, Cap: r.Cap, Automatic: auto,
		Residual: r.Residual, Tol: r.Tol, Converged: r.Converged, Stalled: r.Stalled, Condition: r.Condition,
	}
}

// directDiagnostics are the Diagnostics of a direct solve.
func directDiagnostics() Diagnostics {
	return Diagnostics{Solver: SolverCholesky, Converged: true}
}

// aggregateDiagnostics combines ParK's cells (see Diagnostics).
func aggregateDiagnostics(cells []Diagnostics) Diagnostics {
	if len(cells) == 0 || !cells[0].Known() {
		return Diagnostics{}
	}
	a := Diagnostics{Solver: SolverCG, Converged: true, Cells: len(cells), Residual: math.Inf(-1)}
	for q, c := range cells {
		a.Iterations = max(a.Iterations, c.Iterations)
		a.Cap = max(a.Cap, c.Cap)
		a.Automatic = a.Automatic || c.Automatic
		a.Stalled = a.Stalled || c.Stalled
		a.Tol = math.Max(a.Tol, c.Tol)
		a.Condition = math.Max(a.Condition, c.Condition)
		if !c.Converged {
			a.Converged = false
			a.Unconverged++
		}
		if c.Residual > a.Residual {
			a.Residual, a.WorstCell = c.Residual, q
		}
	}
	return a
}

// Diagnostics reports the fit's CG solve (unknown after loading).
func (m *Falkon) Diagnostics() Diagnostics { return cgDiagnostics(m.cg, m.auto) }

// Diagnostics reports the cells' CG solves, aggregated (unknown after
// loading; per cell in Report).
func (p *ParK) Diagnostics() Diagnostics { return p.diag }

// Diagnostics reports the direct solve (unknown after loading).
func (m *KRR) Diagnostics() Diagnostics {
	if !m.fitted {
		return Diagnostics{}
	}
	return directDiagnostics()
}

// Diagnostics reports the direct solve (unknown after loading).
func (m *Ridge) Diagnostics() Diagnostics {
	if !m.fitted {
		return Diagnostics{}
	}
	return directDiagnostics()
}
