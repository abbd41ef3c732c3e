package perceive_test

import (
	"fmt"
	"time"

	"github.com/tpsmeter/tpsmeter/perceive"
)

// Two answers of 50 tokens (4 characters each) at the same average rate,
// 20 tokens/s: one steady (a token every 50 ms), one bursty (5 tokens at once
// every 250 ms). A naive UI shows the bursty one standing still between
// bursts, all the time; a smoothing renderer with a 250 ms playout buffer
// shows both as the same steady flow, at the cost of 250 ms more before the
// first character.
func Example() {
	const ms = time.Millisecond
	var st, bu perceive.Tracker // the zero Tracker uses the defaults
	for i := range 50 {
		st.Observe(500*ms+time.Duration(i)*50*ms, 1, 4)
	}
	for b := range 10 {
		bu.Observe(500*ms+time.Duration(b)*250*ms, 5, 20)
	}
	for _, s := range []struct {
		name string
		r    perceive.Report
	}{{"steady", st.Report(2950 * ms)}, {"bursty", bu.Report(2750 * ms)}} {
		r := s.r
		fmt.Printf("%s: naive %.0f tok/s, still %.0f%% of the time, first visible %v\n",
			s.name, r.NaivePerceivedTPS, 100*r.NaiveVisibleStallShare, r.FirstArrival)
		fmt.Printf("%s: smooth %.0f tok/s, still %.0f%% of the time, first visible %v\n",
			s.name, r.PerceivedTPS, 100*r.VisibleStallShare, r.TimeToFirstVisible)
		fmt.Printf("%s: gap CV %.2f, burst share %.2f, outpaces a reader for %.0f%% of tokens\n",
			s.name, r.GapCV, r.BurstShare, 100*r.OutpacedReaderShare)
	}
	// Output:
	// steady: naive 20 tok/s, still 0% of the time, first visible 500ms
	// steady: smooth 20 tok/s, still 0% of the time, first visible 750ms
	// steady: gap CV 0.00, burst share 0.00, outpaces a reader for 98% of tokens
	// bursty: naive 20 tok/s, still 100% of the time, first visible 500ms
	// bursty: smooth 20 tok/s, still 0% of the time, first visible 750ms
	// bursty: gap CV 0.00, burst share 0.82, outpaces a reader for 90% of tokens
}

// A long stall: the naive UI shows it whole, a smoothing renderer hides only
// its first moments, and the stall-begins deadline tells a caller when to show
// "still thinking...".
func ExampleTracker_StallDeadline() {
	const ms = time.Millisecond
	var t perceive.Tracker
	t.Reset(perceive.Config{}) // stall threshold 1 s
	for i := range 10 {
		t.Observe(300*ms+time.Duration(i)*40*ms, 1, 4)
	}
	d, _ := t.StallDeadline()
	fmt.Println("stall begins if nothing arrives by", d)
	for i := range 10 {
		t.Observe(4*time.Second+time.Duration(i)*40*ms, 1, 4)
	}
	r := t.Report(4360 * ms)
	fmt.Printf("stalls %d, longest %v, %.0f%% of decode time\n", r.Stalls, r.LongestStall, 100*r.StalledShare)
	fmt.Printf("visible stalls: naive %v, smooth %v\n", r.NaiveVisibleStallTime, r.VisibleStallTime.Round(ms))
	// Output:
	// stall begins if nothing arrives by 1.66s
	// stalls 1, longest 3.34s, 82% of decode time
	// visible stalls: naive 3.34s, smooth 3.05s
}
