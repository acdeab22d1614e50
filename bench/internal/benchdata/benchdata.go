// Package benchdata gives the bench programs their default data folder.
//
// The programs run from the bench module (cd bench; go run ./NAME), so the
// shared data sets, which live in ../shared/data beside the repository, are
// ../../shared/data from there. $ZONAL_DATA, when set, names the folder
// instead, as it does for the tests of the core module (a worktree outside
// the repository's usual place then still finds the data).
package benchdata

import "os"

// EnvVar names the environment variable that overrides the data folder.
const EnvVar = "ZONAL_DATA"

// Dir is the default data folder: $ZONAL_DATA when set, otherwise
// ../../shared/data (relative to bench/).
func Dir() string {
	if d := os.Getenv(EnvVar); d != "" {
		return d
	}
	return "../../shared/data"
}
