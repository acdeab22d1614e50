package main

import "github.com/zonal-ml/zonal/kernels"

func newTestKernel() (kernels.Kernel, error) { return kernels.NewGaussian(5) }
