package perceive_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter/perceive"
)

// The reading rate with the defaults: 238 wpm * 4/3 tokens per word / 60.
const readRate = 238.0 * 4 / 3 / 60

// Hand-built timelines. Unless stated otherwise a chunk carries one token of
// four characters. The expected values in each check are derived by hand in
// the comments; every timeline is also checked against the reference
// implementations in helpers_test.go.
var timelines = []struct {
	name  string
	cfg   perceive.Config
	tl    []arrival
	check func(t *testing.T, r perceive.Report)
}{
	{
		// 50 chunks every 50 ms from 0.5 s: decode 2.45 s, 20 tok/s = 80 chars/s.
		name: "steady",
		tl:   steady(ms(500), ms(50), 50, 1, 4),
		check: func(t *testing.T, r perceive.Report) {
			if r.Stalls != 0 || r.JankRatio != 0 || r.GapCV > 1e-9 || r.BurstShare != 0 {
				t.Errorf("steady stream: stalls %d jank %v cv %v burst %v, want all 0", r.Stalls, r.JankRatio, r.GapCV, r.BurstShare)
			}
			approx(t, "NaivePerceivedTPS", r.NaivePerceivedTPS, 49/2.45, 1e-9) // tokens after the first instant / decode
			// Smooth: reveal starts at 0.75 s at 80 chars/s (the exact running
			// average), the buffer never empties: 200 chars end at 0.75 + 2.5.
			approxDur(t, "TimeToFirstVisible", r.TimeToFirstVisible, ms(750), 0)
			approxDur(t, "TimeToLastVisible", r.TimeToLastVisible, ms(3250), time.Microsecond)
			approx(t, "RevealRate", r.RevealRate, 80, 1e-9)
			approx(t, "PerceivedTPS", r.PerceivedTPS, 20, 1e-6)
			approxDur(t, "VisibleStallTime", r.VisibleStallTime, 0, 0)
			// 20 tok/s outpaces a 5.29 tok/s reader from the second chunk on.
			approx(t, "OutpacedReaderShare", r.OutpacedReaderShare, 49.0/50, 1e-12)
			approxDur(t, "ReadingLag", r.ReadingLag, ms(500)+secs(50/readRate)-ms(2950), time.Microsecond)
		},
	},
	{
		// The same 50 tokens at the same average: 10 bursts of 5 chunks in one
		// instant, every 250 ms from 0.5 s. Decode 2.25 s; 45 tokens after the
		// first instant: 20 tok/s, like "steady".
		name: "bursty-equal-average",
		tl:   bursts(ms(500), ms(250), 10, 5, 0, 1, 4),
		check: func(t *testing.T, r perceive.Report) {
			approx(t, "NaivePerceivedTPS", r.NaivePerceivedTPS, 45/2.25, 1e-9)
			// All 9 gaps between bursts (250 ms) are jank, and they fill the decode time.
			approx(t, "JankRatio", r.JankRatio, 1, 1e-12)
			approxDur(t, "NaiveVisibleStallTime", r.NaiveVisibleStallTime, 9*ms(250), 0)
			if r.Stalls != 0 {
				t.Errorf("Stalls = %d, want 0 (250 ms gaps)", r.Stalls)
			}
			// 49 gaps: 9 of 250 ms and 40 of 0: CV = sqrt((1-p)/p), p = 9/49.
			approx(t, "GapCV", r.GapCV, 2.1081851067789197, 1e-9)
			// 4 of every 5 tokens come in the same instant as the previous one.
			approx(t, "BurstShare", r.BurstShare, 40.0/49, 1e-12)
			// Smoothing at the running average (80 chars/s) rides over the
			// 250 ms gaps with its 250 ms buffer: no visible stall at all.
			approxDur(t, "VisibleStallTime", r.VisibleStallTime, 0, 0)
			approxDur(t, "TimeToLastVisible", r.TimeToLastVisible, ms(3250), time.Microsecond)
			approx(t, "PerceivedTPS", r.PerceivedTPS, 20, 1e-6)
			// Each burst is one display update: all bursts after the first
			// arrive while the reader is behind (20 tok/s > 5.29).
			approx(t, "OutpacedReaderShare", r.OutpacedReaderShare, 45.0/50, 1e-12)
		},
	},
	{
		// Bursts of 10 tokens every 500 ms: the 250 ms buffer cannot hide all.
		name: "bursty-longer-than-buffer",
		tl:   bursts(ms(500), ms(500), 5, 10, 0, 1, 4),
		check: func(t *testing.T, r perceive.Report) {
			approx(t, "NaivePerceivedTPS", r.NaivePerceivedTPS, 40/2.0, 1e-9)
			approx(t, "NaiveVisibleStallShare", r.NaiveVisibleStallShare, 1, 1e-12)
			// At 0.75 s no rate is known yet (one instant so far): burst 0
			// appears at once; the text stands still until burst 1 at 1.0 s
			// (250 ms, visible). From then on 80 chars/s drains each burst
			// exactly as the next arrives; the last ends at 2.5 + 0.5.
			approxDur(t, "VisibleStallTime", r.VisibleStallTime, ms(250), time.Microsecond)
			approxDur(t, "TimeToLastVisible", r.TimeToLastVisible, ms(3000), time.Microsecond)
			approx(t, "VisibleStallShare", r.VisibleStallShare, 0.25/2.25, 1e-9)
			// 160 chars after the first visible instant over 2.25 s, at 1/4 token per char.
			approx(t, "PerceivedTPS", r.PerceivedTPS, 160/2.25/4, 1e-6)
		},
	},
	{
		// 20 chunks, a 3 s gap, 20 chunks, a 12 s gap, 10 chunks (50 ms apart
		// otherwise). Decode: 0.95 + 3 + 0.95 + 12 + 0.45 = 17.35 s.
		name: "long-stalls",
		tl: append(append(steady(ms(500), ms(50), 20, 1, 4),
			steady(ms(4450), ms(50), 20, 1, 4)...),
			steady(ms(17400), ms(50), 10, 1, 4)...),
		check: func(t *testing.T, r perceive.Report) {
			if r.Stalls != 2 || r.LongStalls != 1 {
				t.Errorf("Stalls/LongStalls = %d/%d, want 2/1", r.Stalls, r.LongStalls)
			}
			approxDur(t, "LongestStall", r.LongestStall, 12*time.Second, 0)
			approxDur(t, "StalledTime", r.StalledTime, 15*time.Second, 0)
			approx(t, "StalledShare", r.StalledShare, 15/17.35, 1e-12)
			if r.NaiveVisibleStalls != 2 {
				t.Errorf("NaiveVisibleStalls = %d, want 2", r.NaiveVisibleStalls)
			}
			// A 250 ms buffer cannot hide a 3 s or a 12 s silence, but it
			// shortens what is seen of them.
			if r.VisibleStalls != 2 || r.VisibleStallTime >= r.StalledTime {
				t.Errorf("smooth: %d visible stalls for %v, want 2 and less than %v", r.VisibleStalls, r.VisibleStallTime, r.StalledTime)
			}
			// The renderer drains its 20-char buffer 250 ms after 1.45 s and then
			// stands still until 4.45 s: 2.75 s of the first stall stay visible.
			if r.VisibleStallTime < ms(2750) {
				t.Errorf("VisibleStallTime = %v, want at least 2.75 s", r.VisibleStallTime)
			}
		},
	},
	{
		// Speculative decoding: 25 chunks of 4 tokens every 80 ms (50 tok/s).
		name: "speculative-bursts",
		tl:   steady(ms(500), ms(80), 25, 4, 4),
		check: func(t *testing.T, r perceive.Report) {
			approx(t, "BurstShare", r.BurstShare, 75.0/99, 1e-12) // 3 extra tokens per chunk
			if r.GapCV > 1e-9 || r.JankRatio != 0 {
				t.Errorf("GapCV %v JankRatio %v, want 0 (regular 80 ms chunks)", r.GapCV, r.JankRatio)
			}
			approx(t, "NaivePerceivedTPS", r.NaivePerceivedTPS, 96/1.92, 1e-9)
			approx(t, "PerceivedTPS", r.PerceivedTPS, 50, 1e-6) // 400 chars at 200 chars/s from 0.75 s
			approx(t, "OutpacedReaderShare", r.OutpacedReaderShare, 96.0/100, 1e-12)
		},
	},
	{
		// The same packing slower than reading: 4 tokens every 1 s (4 tok/s).
		// Packing alone does not outpace the reader (a chunk takes 0.756 s to
		// read), and a gap of exactly the threshold (1 s) is not a stall.
		name: "speculative-slow",
		tl:   steady(ms(500), time.Second, 10, 4, 4),
		check: func(t *testing.T, r perceive.Report) {
			if r.OutpacedReaderShare != 0 {
				t.Errorf("OutpacedReaderShare = %v, want 0", r.OutpacedReaderShare)
			}
			approxDur(t, "ReadingLag", r.ReadingLag, secs(4/readRate), time.Microsecond)
			if r.Stalls != 0 {
				t.Errorf("Stalls = %d, want 0: gaps equal to the threshold are not stalls", r.Stalls)
			}
			approx(t, "JankRatio", r.JankRatio, 1, 1e-12)
			approx(t, "BurstShare", r.BurstShare, 30.0/39, 1e-12)
		},
	},
	{
		// Slow start then fast: 5 chunks every 500 ms from 1 s (2 tok/s), then
		// 50 chunks every 20 ms (50 tok/s) up to 4 s. Decode 3 s.
		name: "slow-start-then-fast",
		tl:   append(steady(time.Second, ms(500), 5, 1, 4), steady(ms(3020), ms(20), 50, 1, 4)...),
		check: func(t *testing.T, r perceive.Report) {
			approx(t, "NaivePerceivedTPS", r.NaivePerceivedTPS, 54/3.0, 1e-9)
			approx(t, "JankRatio", r.JankRatio, 2/3.0, 1e-12)
			// The running average learns the fast phase late: the renderer
			// falls behind and ends long after the last arrival, so smoothing
			// lowers the pace a user sees.
			if r.TimeToLastVisible <= r.LastArrival+ms(250) || r.PerceivedTPS >= r.NaivePerceivedTPS {
				t.Errorf("smooth ends %v (last arrival %v), pace %v vs naive %v: want a lagging renderer",
					r.TimeToLastVisible, r.LastArrival, r.PerceivedTPS, r.NaivePerceivedTPS)
			}
			// The reader keeps up with the slow phase and is outpaced by all 50 fast chunks.
			approx(t, "OutpacedReaderShare", r.OutpacedReaderShare, 50.0/55, 1e-12)
		},
	},
	{
		name: "fixed-reveal-rate",
		cfg:  perceive.Config{RevealRate: 40, PlayoutBuffer: 100 * time.Millisecond},
		tl:   steady(ms(500), ms(50), 50, 1, 4),
		check: func(t *testing.T, r perceive.Report) {
			// 200 chars at 40 chars/s from 0.6 s: 5 s, 10 tok/s, never dry.
			approxDur(t, "TimeToFirstVisible", r.TimeToFirstVisible, ms(600), 0)
			approxDur(t, "TimeToLastVisible", r.TimeToLastVisible, ms(5600), time.Microsecond)
			approx(t, "PerceivedTPS", r.PerceivedTPS, 10, 1e-6)
			approx(t, "RevealRate", r.RevealRate, 40, 0)
		},
	},
	{
		name: "no-playout-buffer",
		cfg:  perceive.Config{PlayoutBuffer: -1},
		tl:   bursts(ms(500), ms(250), 10, 5, 0, 1, 4),
		check: func(t *testing.T, r perceive.Report) {
			// Burst 0 shows at once at 0.5 s (no rate yet); from burst 1 on,
			// 80 chars/s drains each 20-char burst exactly at the next one.
			approxDur(t, "TimeToFirstVisible", r.TimeToFirstVisible, ms(500), 0)
			approxDur(t, "VisibleStallTime", r.VisibleStallTime, ms(250), time.Microsecond)
			approxDur(t, "TimeToLastVisible", r.TimeToLastVisible, ms(3000), time.Microsecond)
		},
	},
	{
		name: "naive-mode",
		cfg:  perceive.Config{Render: perceive.Naive},
		tl:   bursts(ms(500), ms(250), 10, 5, 0, 1, 4),
		check: func(t *testing.T, r perceive.Report) {
			if r.Render != perceive.Naive || r.RevealRate != 0 {
				t.Errorf("Render %v RevealRate %v, want naive and 0", r.Render, r.RevealRate)
			}
			if r.PerceivedTPS != r.NaivePerceivedTPS || r.VisibleStallTime != r.NaiveVisibleStallTime ||
				r.VisibleStalls != r.NaiveVisibleStalls || r.VisibleStallShare != r.NaiveVisibleStallShare {
				t.Errorf("naive mode headline fields differ from the Naive fields: %+v", r)
			}
			approxDur(t, "TimeToFirstVisible", r.TimeToFirstVisible, ms(500), 0)
			approxDur(t, "TimeToLastVisible", r.TimeToLastVisible, ms(2750), 0)
		},
	},
	{
		// Two chunks in the first instant, then one more: decode 100 ms.
		name: "same-instant-start",
		tl:   []arrival{{ms(200), 1, 3}, {ms(200), 2, 5}, {ms(300), 1, 2}},
		check: func(t *testing.T, r perceive.Report) {
			// Naive: 2 chars after the first instant in 0.1 s, 4 tokens / 10 chars.
			approx(t, "NaivePerceivedTPS", r.NaivePerceivedTPS, 20*0.4, 1e-9)
			// Running average 2 chars / 0.1 s; reveal from 0.45 s: 10 chars take 0.5 s.
			approx(t, "RevealRate", r.RevealRate, 20, 1e-9)
			approxDur(t, "TimeToLastVisible", r.TimeToLastVisible, ms(950), time.Microsecond)
			// Burst: chunk 0's extra token? none; chunk 1 arrives in the same
			// instant (1 + 1 extra); chunk 2 is 100 ms later: 2 of 3 tokens.
			approx(t, "BurstShare", r.BurstShare, 2.0/3, 1e-12)
		},
	},
}

func TestTimelines(t *testing.T) {
	for _, tc := range timelines {
		t.Run(tc.name, func(t *testing.T) {
			r := checkAgainstReferences(t, tc.tl, tc.cfg, last(tc.tl))
			tc.check(t, r)
		})
	}
}

// TestBurstyVersusSteady is the headline claim: at the same average
// rate a bursty stream looks worse than a steady one in a naive UI, and a
// smoothing renderer narrows (here: closes) the difference.
func TestBurstyVersusSteady(t *testing.T) {
	st := feed(perceive.Config{}, steady(ms(500), ms(50), 50, 1, 4)).Report(ms(2950))
	bu := feed(perceive.Config{}, bursts(ms(500), ms(250), 10, 5, 0, 1, 4)).Report(ms(2750))
	approx(t, "naive pace, bursty vs steady", bu.NaivePerceivedTPS, st.NaivePerceivedTPS, 1e-9)
	naiveGap := bu.NaiveVisibleStallShare - st.NaiveVisibleStallShare
	smoothGap := bu.VisibleStallShare - st.VisibleStallShare
	if naiveGap <= 0.5 {
		t.Errorf("naive: bursty still share %v vs steady %v, want bursty clearly worse", bu.NaiveVisibleStallShare, st.NaiveVisibleStallShare)
	}
	if smoothGap >= naiveGap {
		t.Errorf("smoothing did not narrow the difference: naive gap %v, smooth gap %v", naiveGap, smoothGap)
	}
}

func TestLateTokenCredit(t *testing.T) {
	// Tokens credited with the chunk vs. the same tokens credited later by a
	// call with no characters: the reports must agree.
	direct := []arrival{{ms(100), 1, 4}, {ms(110), 3, 9}, {ms(400), 2, 6}, {ms(1600), 1, 2}}
	var a, b perceive.Tracker
	for _, x := range direct {
		a.Observe(x.at, x.tokens, x.chars)
	}
	b.Observe(0, 1, 0) // before any text: held for the first arrival
	b.Observe(ms(100), 0, 4)
	b.Observe(ms(110), 1, 9)
	b.Observe(ms(110), 2, 0)
	b.Observe(ms(400), 0, 6)
	b.Observe(ms(400), 2, 0)
	b.Observe(ms(1600), 1, 2)
	b.Observe(ms(1600), 0, 0) // nothing: ignored
	ra, rb := a.Report(ms(1600)), b.Report(ms(1600))
	if ra != rb {
		t.Errorf("late credits change the report:\n direct %+v\n late   %+v", ra, rb)
	}
	checkAgainstReferences(t, direct, perceive.Config{}, ms(1600))
}

func TestClockGoingBackwards(t *testing.T) {
	var tr perceive.Tracker
	tr.Observe(-ms(5), 1, 1) // clamped to 0
	tr.Observe(ms(300), 1, 1)
	tr.Observe(ms(200), 1, 1) // clamped to 300 ms
	tr.Observe(ms(400), 1, 1)
	r := tr.Report(0) // end before the last arrival: taken as the last arrival
	if r.Clamped != 2 {
		t.Errorf("Clamped = %d, want 2", r.Clamped)
	}
	want := feed(perceive.Config{}, []arrival{{0, 1, 1}, {ms(300), 1, 1}, {ms(300), 1, 1}, {ms(400), 1, 1}}).Report(ms(400))
	want.Clamped = 2
	if r != want {
		t.Errorf("clamped report\n got  %+v\n want %+v", r, want)
	}
	checkInvariants(t, r)
}

func TestReportDoesNotChangeTracker(t *testing.T) {
	tl := steady(ms(300), ms(70), 30, 1, 3)
	var a, b perceive.Tracker
	for i, x := range tl {
		a.Observe(x.at, x.tokens, x.chars)
		b.Observe(x.at, x.tokens, x.chars)
		if i%7 == 0 {
			r1, r2 := a.Report(x.at), a.Report(x.at)
			if r1 != r2 {
				t.Fatalf("two Reports in a row differ")
			}
		}
	}
	if a.Report(last(tl)) != b.Report(last(tl)) {
		t.Errorf("calling Report mid-stream changed the final report")
	}
}

func TestZeroTrackerAndEmptyReport(t *testing.T) {
	var z perceive.Tracker
	if z.StallThreshold() != time.Second {
		t.Errorf("zero Tracker StallThreshold = %v, want 1s", z.StallThreshold())
	}
	if _, ok := z.StallDeadline(); ok {
		t.Errorf("StallDeadline ok before any arrival")
	}
	r := z.Report(time.Second)
	want := perceive.Report{Render: perceive.Smooth, ReadingRate: readRate}
	approx(t, "ReadingRate", r.ReadingRate, readRate, 1e-12)
	r.ReadingRate = want.ReadingRate
	if r != want {
		t.Errorf("empty report = %+v, want %+v", r, want)
	}
	// A zero Tracker behaves like one Reset with the zero Config.
	var reset perceive.Tracker
	reset.Reset(perceive.Config{})
	for _, x := range steady(ms(100), ms(30), 10, 1, 2) {
		z.Observe(x.at, x.tokens, x.chars)
		reset.Observe(x.at, x.tokens, x.chars)
	}
	if z.Report(ms(500)) != reset.Report(ms(500)) {
		t.Errorf("zero Tracker differs from Reset(Config{})")
	}
	// Reset discards the previous stream.
	reset.Reset(perceive.Config{StallThreshold: 2 * time.Second})
	if r := reset.Report(ms(500)); r.Arrivals != 0 || reset.StallThreshold() != 2*time.Second {
		t.Errorf("after Reset: arrivals %d, threshold %v", r.Arrivals, reset.StallThreshold())
	}
}

func TestSingleArrival(t *testing.T) {
	cases := []struct {
		name    string
		cfg     perceive.Config
		wantTPS float64
		wantTTL time.Duration
	}{
		// All text at one instant: no rate, shown at once 250 ms later, no pace.
		{"running-average", perceive.Config{}, 0, ms(1250)},
		// 10 tokens / 50 chars at 100 chars/s: 0.5 s, 20 tok/s.
		{"fixed-rate", perceive.Config{RevealRate: 100}, 20, ms(1750)},
		{"naive", perceive.Config{Render: perceive.Naive}, 0, time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var tr perceive.Tracker
			tr.Reset(tc.cfg)
			tr.Observe(time.Second, 10, 50)
			r := tr.Report(ms(1500))
			approx(t, "PerceivedTPS", r.PerceivedTPS, tc.wantTPS, 1e-9)
			approxDur(t, "TimeToLastVisible", r.TimeToLastVisible, tc.wantTTL, time.Microsecond)
			approxDur(t, "TrailingSilence", r.TrailingSilence, ms(500), 0)
			// 9 of the 9 tokens after the first came with it.
			approx(t, "BurstShare", r.BurstShare, 1, 0)
			approxDur(t, "ReadingLag", r.ReadingLag, secs(10/readRate), time.Microsecond)
			if r.DecodeTime != 0 || r.GapCV != 0 || r.StalledShare != 0 || r.OutpacedReaderShare != 0 {
				t.Errorf("single arrival: %+v", r)
			}
			checkInvariants(t, r)
		})
	}
}

func TestStallDeadline(t *testing.T) {
	var tr perceive.Tracker
	tr.Reset(perceive.Config{StallThreshold: 2 * time.Second})
	tr.Observe(ms(700), 1, 1)
	tr.Observe(ms(900), 1, 1)
	d, ok := tr.StallDeadline()
	if !ok || d != ms(2900) {
		t.Errorf("StallDeadline = %v, %v; want 2.9s, true", d, ok)
	}
}

func TestNaiveEqualsSmoothWithInstantRenderer(t *testing.T) {
	// A smoothing renderer with no buffer and an enormous fixed rate shows
	// every chunk when it arrives: its still time and window are the naive ones.
	tl := append(bursts(ms(300), ms(400), 6, 3, ms(2), 1, 5), steady(ms(4000), ms(30), 20, 1, 5)...)
	r := feed(perceive.Config{PlayoutBuffer: -1, RevealRate: 1e15}, tl).Report(last(tl))
	approxDur(t, "VisibleStallTime", r.VisibleStallTime, r.NaiveVisibleStallTime, time.Microsecond)
	if r.VisibleStalls != r.NaiveVisibleStalls {
		t.Errorf("VisibleStalls %d vs naive %d", r.VisibleStalls, r.NaiveVisibleStalls)
	}
	approxDur(t, "TimeToFirstVisible", r.TimeToFirstVisible, r.FirstArrival, 0)
	approxDur(t, "TimeToLastVisible", r.TimeToLastVisible, r.LastArrival, time.Microsecond)
	// The continuous renderer counts the first chunk inside the window.
	c0 := float64(tl[0].chars)
	approx(t, "PerceivedTPS", r.PerceivedTPS, r.NaivePerceivedTPS*float64(r.Chars)/(float64(r.Chars)-c0), 1e-6)
}

func TestObserveAndReportDoNotAllocate(t *testing.T) {
	var tr perceive.Tracker
	tr.Reset(perceive.Config{})
	at := time.Duration(0)
	if n := testing.AllocsPerRun(1000, func() {
		at += 13 * time.Millisecond
		tr.Observe(at, 1, 4)
	}); n != 0 {
		t.Errorf("Observe allocates %v times per call", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = tr.Report(at) }); n != 0 {
		t.Errorf("Report allocates %v times per call", n)
	}
}

func TestReportJSON(t *testing.T) {
	r := feed(perceive.Config{}, steady(ms(500), ms(50), 10, 1, 4)).Report(ms(950))
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"render":"smooth"`, `"stalls":0`, `"perceived_tps":`, `"outpaced_reader_share":`, `"time_to_first_visible":750000000`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s lacks %s", b, want)
		}
	}
	var back perceive.Report
	if err := json.Unmarshal(b, &back); err != nil || back != r {
		t.Errorf("round trip: %v\n got  %+v\n want %+v", err, back, r)
	}
}
