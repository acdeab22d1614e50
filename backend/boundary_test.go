package backend_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// TestAsmBoundary lists every package of the module (with the default build
// tags and with netlib) and fails if one outside backend/ imports the
// assembly package backend/internal/asm, in its code or its tests, and if
// the assembly package is not reached through the backend at all (which
// would mean the listing is not seeing it). The Go internal rule already
// refuses such an import at build time; this test keeps the rule visible and
// guards against the package leaving internal/.
func TestAsmBoundary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list on the whole module")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not in PATH")
	}
	const (
		mod = "github.com/zonal-ml/zonal"
		asm = mod + "/backend/internal/asm"
	)
	for _, tags := range []string{"", "netlib"} {
		cmd := exec.Command(goTool, "list", "-tags", tags,
			"-f", "{{.ImportPath}} {{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}", mod+"/...")
		cmd.Dir = ".."
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -tags %q: %v\n%s", tags, err, stderr.String())
		}
		importers := 0
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 0 {
				continue
			}
			pkg := f[0]
			inside := pkg == mod+"/backend" || strings.HasPrefix(pkg, mod+"/backend/")
			for _, imp := range f[1:] {
				if imp != asm && !strings.HasPrefix(imp, asm+"/") {
					continue
				}
				if !inside {
					t.Errorf("tags %q: %s imports %s: only packages under backend/ may", tags, pkg, imp)
				}
				importers++
			}
		}
		if importers == 0 {
			t.Fatalf("tags %q: no package imports %s: the listing is broken", tags, asm)
		}
	}
}
