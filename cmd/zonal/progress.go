package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/zonal-ml/zonal"
)

// progressBar draws one self-overwriting line on stderr while a fit runs,
// only when stderr is a terminal (so logs and pipes stay clean).
type progressBar struct {
	mu      sync.Mutex
	w       io.Writer
	enabled bool
	last    time.Time
	drawn   bool
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func newProgressBar(stderr io.Writer) *progressBar {
	return &progressBar{w: stderr, enabled: isTerminal(stderr)}
}

// report is a solvers progress callback; safe for concurrent use.
func (p *progressBar) report(pr zonal.Progress) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if pr.Done < pr.Total && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	fmt.Fprint(p.w, "\r"+renderProgress(pr, 30))
	p.drawn = true
}

// renderProgress formats one progress line with a bar of the given width.
func renderProgress(pr zonal.Progress, width int) string {
	frac := 0.0
	if pr.Total > 0 {
		frac = min(1, max(0, float64(pr.Done)/float64(pr.Total)))
	}
	fill := int(frac * float64(width))
	s := fmt.Sprintf("%-9s [%s%s] %3.0f%% %d/%d", pr.Stage, strings.Repeat("#", fill), strings.Repeat(".", width-fill), 100*frac, pr.Done, pr.Total)
	if pr.Stage == "cg" {
		s += fmt.Sprintf(" residual %.2e", pr.Residual)
	}
	return s + "   "
}

// done clears the progress line.
func (p *progressBar) done() {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", 80)+"\r")
		p.drawn = false
	}
}
