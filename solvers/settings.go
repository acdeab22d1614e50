package solvers

import "github.com/zonal-ml/zonal"

// Sampling is how FALKON draws its centres (FalkonOptions.Sampling), a
// typed setting (String, ParseSampling).
type Sampling string

func (s Sampling) String() string {
	if s == "" {
		return string(SamplingUniform)
	}
	return string(s)
}

// ParseSampling parses uniform or rls.
func ParseSampling(s string) (Sampling, error) {
	return zonal.ParseSetting("Sampling", s, SamplingUniform, SamplingRLS)
}
