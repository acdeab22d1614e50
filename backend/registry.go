package backend

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/zonal-ml/zonal"
)

// EnvVar names the environment variable that overrides the default backend.
const EnvVar = "ZONAL_BACKEND"

type entry struct {
	priority int
	b        Backend
}

var (
	mu       sync.RWMutex
	registry = map[string]entry{}
)

// register adds a compiled-in backend; the highest priority is the default.
func register(b Backend, priority int) {
	mu.Lock()
	defer mu.Unlock()
	registry[b.Name()] = entry{priority, b}
}

// Names lists the compiled-in backends, the default first.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		pi, pj := registry[names[i]].priority, registry[names[j]].priority
		if pi != pj {
			return pi > pj
		}
		return names[i] < names[j]
	})
	return names
}

// ByName returns the compiled-in backend with the given name. An unknown or
// uncompiled name is an error (wrapping zonal.ErrUnknown) that lists the
// available ones.
func ByName(name string) (Backend, error) {
	mu.RLock()
	e, ok := registry[name]
	mu.RUnlock()
	if !ok {
		hint := ""
		if name == "netlib" {
			hint = " (netlib needs the build tag: go build -tags netlib, with libopenblas-dev and liblapacke-dev installed)"
		}
		return nil, fmt.Errorf("backend: %w %q; available: %s%s", zonal.ErrUnknown, name, strings.Join(Names(), ", "), hint)
	}
	return e.b, nil
}

// FromEnv returns the backend named by $ZONAL_BACKEND, or the compiled-in
// default when the variable is empty. A name that is not compiled in is an
// error.
func FromEnv() (Backend, error) {
	if name := strings.TrimSpace(os.Getenv(EnvVar)); name != "" {
		b, err := ByName(name)
		if err != nil {
			return nil, fmt.Errorf("$%s: %w", EnvVar, err)
		}
		return b, nil
	}
	names := Names()
	return ByName(names[0])
}

// Default returns the backend to use when the caller has no preference: the
// one named by $ZONAL_BACKEND if that is valid, otherwise netlib when compiled
// in (build tag netlib), otherwise purego. Programs that want an invalid
// $ZONAL_BACKEND to be an error (the zonal CLI does) call FromEnv instead.
func Default() Backend {
	if b, err := FromEnv(); err == nil {
		return b
	}
	b, _ := ByName(Names()[0])
	return b
}
