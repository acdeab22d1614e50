package purego

import (
	"testing"

	"gonum.org/v1/gonum/blas/testblas"
)

// gonum's own BLAS test suites, run against the adapter whose Dgemm, Dsyrk,
// Ddot, Daxpy and Dscal are zonal's.

func TestDgemm(t *testing.T) { testblas.TestDgemm(t, Implementation{}) }
func TestDsyrk(t *testing.T) { testblas.DsyrkTest(t, Implementation{}) }
func TestDdot(t *testing.T)  { testblas.DdotTest(t, Implementation{}) }
func TestDaxpy(t *testing.T) { testblas.DaxpyTest(t, Implementation{}) }
func TestDscal(t *testing.T) { testblas.DscalTest(t, Implementation{}) }
func TestDnrm2(t *testing.T) { testblas.Dnrm2Test(t, Implementation{}) }
