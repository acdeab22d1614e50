//go:build netlib

package backend

import "github.com/zonal-ml/zonal/backend/netlib"

func init() { register(netlib.New(), 10) }
