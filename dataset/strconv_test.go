package dataset

import "strconv"

func strconvParse(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
