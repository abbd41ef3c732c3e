package bench_test

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter/bench"
	"github.com/tpsmeter/tpsmeter/llmsim"
)

// reportResults is a small real run with every plot's data: two targets,
// three buckets, and cold-start probes.
func reportResults(t *testing.T) *bench.Results {
	t.Helper()
	p := llmsim.Profile{TTFTMedian: 30 * time.Millisecond, TTFTSpread: 0.3, TokensPerSecond: 600, Jitter: 0.3}
	q := p
	q.TokensPerChunk, q.SpeculativeMaxBurst = 2, 5
	w := bench.DefaultWorkload()
	return mustRun(t, bench.Config{
		Targets:  []bench.Target{startSim(t, "steady", p, 1), startSim(t, "bursty", q, 2)},
		Workload: w, Requests: 20, Concurrency: 10, Seed: 2, Probes: []time.Duration{0, 50 * time.Millisecond},
	})
}

func TestHTMLReport(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := bench.WriteHTML(&buf, reportResults(t)); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{`id="plot-ttft"`, `id="plot-tps"`, `id="plot-timeline"`, `id="plot-probes"`, "const TPSBENCH = {", `"ttftCdf"`, `"timelines"`, "steady", "bursty"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Self-contained: nothing is loaded from anywhere.
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//|<link|@import`).FindString(html); m != "" {
		t.Errorf("report loads an external resource: %q", m)
	}
}

// chromium returns the path of a headless-capable Chromium, or skips (fails
// in CI, where .ci/run installs it).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium not found: CI must install it (Debian package chromium)")
	}
	t.Skip("chromium not installed (apt-get install chromium); the HTML report was not checked in a browser")
	return ""
}

// TestHTMLReportInChromium opens the report in headless Chromium: the
// script must draw every plot without an error (it then marks the page
// data-plots="ok"), and a screenshot must show the plots' colours.
func TestHTMLReportInChromium(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := bench.WriteHTML(f, reportResults(t)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	chrome := func(extra ...string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--user-data-dir=" + filepath.Join(dir, "profile"), "--window-size=1200,2000"}, extra...)
		args = append(args, "file://"+page)
		cmd := exec.CommandContext(ctx, bin, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %v: %v\n%s", extra, err, stderr.String())
		}
		return stdout.Bytes()
	}

	dom := string(chrome("--dump-dom"))
	root := regexp.MustCompile(`<html[^>]*>`).FindString(dom)
	if !strings.Contains(root, `data-plots="ok"`) || strings.Contains(root, "data-error") {
		t.Fatalf("the report's script did not finish cleanly; root element: %q", root)
	}
	if !strings.Contains(dom, "plots: ok") {
		t.Error("the status line does not say the plots are ok")
	}
	if n := strings.Count(dom, `class="plot-line"`); n < 4 {
		t.Errorf("%d plot lines drawn, want at least 4 (TTFT CDFs, timelines, probes)", n)
	}
	if n := strings.Count(dom, `class="plot-bar"`); n < 4 {
		t.Errorf("%d bars drawn, want at least 4 (TPS by bucket)", n)
	}

	shot := filepath.Join(dir, "report.png")
	chrome("--screenshot=" + shot)
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if sz := img.Bounds().Size(); sz.X < 1000 || sz.Y < 1500 {
		t.Fatalf("screenshot is %v, want the 1200x2000 window", sz)
	}
	// The two targets' colours (#2563eb, #dc2626) must be on screen.
	blue, red := 0, 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			r, g, b = r>>8, g>>8, b>>8
			switch {
			case near(r, 0x25) && near(g, 0x63) && near(b, 0xeb):
				blue++
			case near(r, 0xdc) && near(g, 0x26) && near(b, 0x26):
				red++
			}
		}
	}
	if blue < 50 || red < 50 {
		t.Errorf("screenshot shows %d blue and %d red pixels, want the plots of both targets", blue, red)
	}
	if keep := os.Getenv("TPSBENCH_KEEP_SCREENSHOT"); keep != "" {
		_ = os.WriteFile(keep, b, 0o644)
	}
}

func near(v, want uint32) bool { return v+24 >= want && v <= want+24 }
