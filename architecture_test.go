package zonal_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const modulePath = "github.com/zonal-ml/zonal"

// netlibTag is the one build tag that changes the import graph (noasm only
// swaps the files of backend/internal/asm). An import present only with it
// is written "PKG (tag netlib)" in the table.
const netlibTag = "netlib"

// TestArchitectureTable checks the package table of ARCHITECTURE.md against
// go list: every package of the module has a row, every row names a package
// that exists, and each row's imports column is the package's zonal imports
// in its non-test files, with the imports that only the netlib build has
// marked "(tag netlib)". Test-only imports are left out because the table
// describes the code's structure, not its test helpers.
func TestArchitectureTable(t *testing.T) {
	goTool := findGoTool(t)
	plain := listImports(t, goTool, "")
	netlib := listImports(t, goTool, netlibTag)

	text, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := parsePackageTable(string(text))
	if err != nil {
		t.Fatalf("ARCHITECTURE.md: %v", err)
	}

	for pkg := range union(plain, netlib) {
		if _, ok := rows[pkg]; !ok {
			t.Errorf("package %s has no row in ARCHITECTURE.md's package table", pkg)
		}
	}
	for pkg, row := range rows {
		p, inPlain := plain[pkg]
		n, inNetlib := netlib[pkg]
		if !inPlain && !inNetlib {
			t.Errorf("ARCHITECTURE.md names package %s, which go list does not know", pkg)
			continue
		}
		wantPlain := slices.Sorted(maps.Keys(p))
		wantAll := slices.Sorted(maps.Keys(union(p, n)))
		gotPlain := slices.Sorted(maps.Keys(row.plain))
		gotAll := slices.Sorted(maps.Keys(union(row.plain, row.tagged)))
		if !slices.Equal(gotPlain, wantPlain) {
			t.Errorf("%s: the table lists the imports %v without a tag; the default build imports %v", pkg, gotPlain, wantPlain)
		}
		if !slices.Equal(gotAll, wantAll) {
			t.Errorf("%s: the table lists the imports %v in all; the default and netlib builds import %v", pkg, gotAll, wantAll)
		}
		for imp := range row.tagged {
			if p[imp] {
				t.Errorf("%s: the table marks %s (tag netlib), but the default build imports it too", pkg, imp)
			}
		}
	}
}

// findGoTool returns the go command: the one in PATH, else the one of the
// toolchain that built this test. The test cannot check anything without
// it, so its absence is a failure, not a skip.
func findGoTool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	t.Fatalf("the go command is neither in PATH nor at %s: TestArchitectureTable runs go list to compare ARCHITECTURE.md with the module's packages", p)
	return ""
}

// listImports runs go list on the module with the given build tags and
// returns, for each package (named relative to the module, "." for the
// root), the set of zonal packages its non-test files import. cgo is
// enabled so that the netlib files, which use cgo, are listed whatever
// CGO_ENABLED the tests run with; go list does not invoke the C compiler.
func listImports(t *testing.T, goTool, tags string) map[string]map[string]bool {
	t.Helper()
	cmd := exec.Command(goTool, "list", "-json", "-tags", tags, "./...")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -tags %q ./...: %v\n%s", tags, err, stderr.String())
	}
	pkgs := map[string]map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list -tags %q: decoding its output: %v", tags, err)
		}
		name, ok := relPackage(p.ImportPath)
		if !ok {
			t.Fatalf("go list -tags %q ./... listed %s, outside module %s", tags, p.ImportPath, modulePath)
		}
		imps := map[string]bool{}
		for _, imp := range p.Imports {
			if r, ok := relPackage(imp); ok {
				imps[r] = true
			}
		}
		pkgs[name] = imps
	}
	if len(pkgs) == 0 {
		t.Fatalf("go list -tags %q ./... listed no package", tags)
	}
	return pkgs
}

// relPackage names an import path of the module relative to it ("." for
// the root package); ok is false for paths outside the module.
func relPackage(path string) (string, bool) {
	if path == modulePath {
		return ".", true
	}
	if rest, ok := strings.CutPrefix(path, modulePath+"/"); ok {
		return rest, true
	}
	return "", false
}

// tableRow is one package's imports column: the imports of every build and
// those marked "(tag netlib)".
type tableRow struct {
	plain, tagged map[string]bool
}

// parsePackageTable reads the table under "## Packages": the first column
// names the package in backquotes (`.` is the root), the last one lists its
// zonal imports separated by commas ("zonal" for the root, "none" for no
// import), each optionally followed by "(tag netlib)".
func parsePackageTable(doc string) (map[string]tableRow, error) {
	_, section, ok := strings.Cut(doc, "\n## Packages\n")
	if !ok {
		return nil, errors.New(`no "## Packages" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string]tableRow{}
	header := true
	for line := range strings.SplitSeq(section, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 3 {
			return nil, errors.New("a table row without three columns: " + line)
		}
		first := strings.TrimSpace(cells[0])
		if header || strings.Trim(first, "-") == "" {
			header = false // the header row, then the separator row
			continue
		}
		name, ok := backquoted(first)
		if !ok {
			return nil, errors.New("a row whose first column names no `package`: " + line)
		}
		if _, dup := rows[name]; dup {
			return nil, errors.New("package " + name + " has two rows")
		}
		row, err := parseImports(strings.TrimSpace(cells[2]))
		if err != nil {
			return nil, errors.New(name + ": " + err.Error())
		}
		rows[name] = row
	}
	if len(rows) == 0 {
		return nil, errors.New("the package table has no rows")
	}
	return rows, nil
}

// backquoted returns the text between the first pair of backquotes of s.
func backquoted(s string) (string, bool) {
	_, rest, ok := strings.Cut(s, "`")
	if !ok {
		return "", false
	}
	name, _, ok := strings.Cut(rest, "`")
	return name, ok && name != ""
}

// parseImports reads an imports column.
func parseImports(col string) (tableRow, error) {
	row := tableRow{plain: map[string]bool{}, tagged: map[string]bool{}}
	if col == "none" {
		return row, nil
	}
	for item := range strings.SplitSeq(col, ",") {
		item = strings.TrimSpace(item)
		name, note, hasNote := strings.Cut(item, " ")
		name = strings.Trim(name, "`")
		if name == "" || name == "none" {
			return row, errors.New(`an empty or "none" entry among imports: ` + col)
		}
		if name == "zonal" {
			name = "."
		}
		switch {
		case !hasNote:
			row.plain[name] = true
		case strings.TrimSpace(note) == "(tag "+netlibTag+")":
			row.tagged[name] = true
		default:
			return row, errors.New("unknown note " + note + " after " + name + ` (only "(tag netlib)" is understood)`)
		}
	}
	return row, nil
}

// union returns a new set holding the members of a and b.
func union[V any](a, b map[string]V) map[string]bool {
	u := map[string]bool{}
	for k := range a {
		u[k] = true
	}
	for k := range b {
		u[k] = true
	}
	return u
}
