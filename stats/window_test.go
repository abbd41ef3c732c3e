package stats_test

import (
	"sync"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter/stats"
)

// fakeClock is a settable clock, safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestWindowVisibility(t *testing.T) {
	// 60 s in 6 slices of 10 s. A value recorded at offset r stays visible
	// until the end of its slice plus 50 s: between 50 and 60 s.
	type step struct {
		at    time.Duration // since the window was created
		add   float64       // 0: nothing added
		count int64         // Snapshot().Count() after the step
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"one value ages out at the end of its slice plus 50s", []step{
			{at: 0, add: 1, count: 1},
			{at: 9 * time.Second, count: 1},
			{at: 59*time.Second + 999*time.Millisecond, count: 1},
			{at: 60 * time.Second, count: 0},
		}},
		{"late in a slice: visible for just over 50s", []step{
			{at: 9*time.Second + 999*time.Millisecond, add: 1, count: 1},
			{at: 59 * time.Second, count: 1},
			{at: 60 * time.Second, count: 0},
		}},
		{"values age out one slice at a time", []step{
			{at: 5 * time.Second, add: 1, count: 1},
			{at: 15 * time.Second, add: 2, count: 2},
			{at: 25 * time.Second, add: 3, count: 3},
			{at: 65 * time.Second, count: 2},
			{at: 75 * time.Second, count: 1},
			{at: 85 * time.Second, count: 0},
		}},
		{"a reused ring slot forgets its old slice", []step{
			{at: 1 * time.Second, add: 1, count: 1},
			{at: 61 * time.Second, add: 2, count: 1}, // same slot, next lap
			{at: 62 * time.Second, add: 3, count: 2},
		}},
		{"a long idle gap empties the window", []step{
			{at: 0, add: 1, count: 1},
			{at: 0, add: 2, count: 2},
			{at: 10 * time.Hour, count: 0},
			{at: 10 * time.Hour, add: 3, count: 1},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			start := clock.Now()
			w := stats.NewWindow(time.Minute, 6, clock.Now)
			for i, s := range tc.steps {
				clock.mu.Lock()
				clock.t = start.Add(s.at)
				clock.mu.Unlock()
				if s.add != 0 {
					w.Add(s.add)
				}
				if got := w.Snapshot().Count(); got != s.count {
					t.Fatalf("step %d at %v: Count = %d, want %d", i, s.at, got, s.count)
				}
			}
		})
	}
}

func TestWindowSnapshotContents(t *testing.T) {
	clock := newFakeClock()
	w := stats.NewWindow(5*time.Minute, 5, clock.Now)
	var recent []float64
	for i := range 600 { // one value per second for 10 minutes
		v := float64(i%97) + 1
		w.Add(v)
		if i >= 600-300 { // the last 5 whole slices
			recent = append(recent, v)
		}
		clock.Advance(time.Second)
	}
	clock.Advance(-time.Second) // still inside the last slice
	requireSame(t, w.Snapshot(), sketchOf(recent))
}

func TestWindowExplicitTimes(t *testing.T) {
	clock := newFakeClock()
	t0 := clock.Now()
	w := stats.NewWindow(time.Minute, 6, clock.Now)
	at := func(d time.Duration) time.Time { return t0.Add(d) }

	w.AddAt(at(30*time.Second), 1)
	w.AddAt(at(25*time.Second), 2)  // the clock stepped back within the window: kept in its own slice
	w.AddAt(at(-15*time.Second), 3) // window as of 30s: slices from -20s to 40s
	if got := w.SnapshotAt(at(30 * time.Second)).Count(); got != 3 {
		t.Fatalf("Count = %d, want 3", got)
	}
	if got := w.SnapshotAt(at(21 * time.Second)).Count(); got != 2 {
		t.Fatalf("as of 21s: Count = %d, want 2 (the value at 30s is in the future)", got)
	}
	w.AddAt(at(-21*time.Second), 4) // older than the window as of 30s: ignored
	if got := w.SnapshotAt(at(30 * time.Second)).Count(); got != 3 {
		t.Fatalf("a value older than the window was kept: Count = %d", got)
	}
	w.AddAt(at(-10*time.Hour), 5)
	w.AddAt(at(1<<62), 6) // very far future: no overflow
	if got := w.SnapshotAt(at(1 << 62)).Count(); got != 1 {
		t.Fatalf("far future: Count = %d, want 1", got)
	}
	w.Reset()
	if got := w.SnapshotAt(at(1 << 62)).Count(); got != 0 {
		t.Fatalf("after Reset: Count = %d", got)
	}
}

func TestNewWindowArguments(t *testing.T) {
	for _, tc := range []struct {
		name   string
		width  time.Duration
		slices int
		want   time.Duration
	}{
		{"defaults", 0, 0, stats.DefaultWindowWidth},
		{"negative", -time.Second, -3, stats.DefaultWindowWidth},
		{"uneven split rounds the slice down", 10 * time.Second, 3, 9999999999},
		{"more slices than nanoseconds", 5, 100, 5},
		{"slices capped", time.Hour, 1 << 30, time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := stats.NewWindow(tc.width, tc.slices, nil)
			if got := w.Width(); got != tc.want {
				t.Fatalf("Width = %v, want %v", got, tc.want)
			}
			w.Add(1) // real clock
			if w.Width() >= time.Second && w.Snapshot().Count() != 1 {
				t.Fatal("value not visible right after Add")
			}
		})
	}
}

func TestWindowConcurrent(t *testing.T) {
	clock := newFakeClock()
	w := stats.NewWindow(time.Minute, 60, clock.Now)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				w.Add(float64(g*1000 + i))
				if i%500 == 0 {
					_ = w.Snapshot()
				}
			}
		})
	}
	wg.Wait()
	if got := w.Snapshot().Count(); got != 16000 {
		t.Fatalf("Count = %d, want 16000", got)
	}
}
