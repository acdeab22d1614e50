package kernels

import "context"

var contextBG = context.Background()
