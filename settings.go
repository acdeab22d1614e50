package zonal

import (
	"fmt"
	"strings"
)

// ParseSetting returns the one of values whose name is s (surrounding
// space ignored), or a *ParamError naming param and listing the values:
// the Parse function of every string-typed setting of the module (a
// partition strategy, a sampling rule, a tuning criterion, ...).
func ParseSetting[T ~string](param, s string, values ...T) (T, error) {
	s = strings.TrimSpace(s)
	names := make([]string, len(values))
	for i, v := range values {
		if string(v) == s {
			return v, nil
		}
		names[i] = string(v)
	}
	return "", &ParamError{Param: param, Value: fmt.Sprintf("%q", s), Reason: "want " + strings.Join(names, ", ")}
}
