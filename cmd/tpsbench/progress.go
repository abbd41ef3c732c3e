package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tpsmeter/tpsmeter/bench"
)

// showProgress decides whether to draw the progress bar: "on", "off", or
// "auto" (only when w is a terminal, so that logs and CI stay clean).
func showProgress(mode string, w io.Writer) bool {
	switch mode {
	case "on":
		return true
	case "off":
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progressPeriod is how often the bar is redrawn.
const progressPeriod = 250 * time.Millisecond

// startProgress redraws a one-line progress bar on w until the returned
// function is called (which clears the line; it may be called twice).
func startProgress(r *bench.Runner, w io.Writer) func() {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(progressPeriod)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-t.C:
				fmt.Fprint(w, "\r\033[K"+progressLine(r.Progress(), 28))
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			<-finished
		})
	}
}

// progressLine renders one progress snapshot with a bar of width cells.
func progressLine(p bench.Progress, width int) string {
	frac := -1.0
	what := ""
	switch {
	case p.Planned > 0:
		frac = p.Elapsed.Seconds() / p.Planned.Seconds()
		what = fmt.Sprintf("%4.1fs/%s", p.Elapsed.Seconds(), p.Planned)
	case p.PlannedRequests > 0:
		frac = float64(p.Done) / float64(p.PlannedRequests)
		what = fmt.Sprintf("%d/%d requests", p.Done, p.PlannedRequests)
	}
	bar := ""
	if frac >= 0 {
		frac = min(frac, 1)
		n := int(frac * float64(width))
		bar = "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "] "
		if frac >= 1 {
			what += " draining"
		}
	}
	return fmt.Sprintf("%-8s %s%s | %d done, %d errors, %d in flight", p.Phase, bar, what, p.Done, p.Errors, p.InFlight)
}
