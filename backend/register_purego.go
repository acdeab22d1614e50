package backend

import "github.com/zonal-ml/zonal/backend/purego"

func init() { register(purego.New(), 0) }
