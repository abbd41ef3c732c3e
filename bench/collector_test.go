package bench_test

import (
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter/bench"
	"github.com/tpsmeter/tpsmeter/stats"
)

func TestCollector(t *testing.T) {
	c := bench.NewCollector(stats.LengthBuckets{}, 0, 1)
	add := func(target, bucket string, seq int, phase string, ok bool) {
		r := synthRecord(target, bucket, "hard", 200*time.Millisecond, 50, 30)
		r.Seq, r.Phase = seq, phase
		if !ok {
			r.Result.Status, r.Result.ErrorType = "partial", "500"
		}
		c.Add(r)
	}
	add("a", "short", 5, bench.PhaseMeasure, true)
	add("a", "short", 2, bench.PhaseMeasure, true) // lower seq: replaces the timeline
	add("a", "short", 9, bench.PhaseMeasure, true)
	add("a", "short", 1, bench.PhaseMeasure, false) // failed: no timeline
	add("a", "short", 0, bench.PhaseWarmup, true)   // ignored entirely
	for i, b := range []string{"medium", "long", "x", "y"} {
		add("a", b, i, bench.PhaseMeasure, true)
	}
	res := c.Results()
	cell := res.Cell(bench.CellKey{Target: "a", Bucket: "short", Class: "hard", Phase: bench.PhaseMeasure})
	if cell == nil || cell.Requests != 4 || cell.Completed != 3 || cell.Errors["500"] != 1 {
		t.Fatalf("cell = %+v, want 4 requests, 3 completed, one 500", cell)
	}
	if got := cell.Metric(bench.MetricTTFT).Count(); got != 3 {
		t.Errorf("TTFT values = %d, want the 3 completed requests", got)
	}
	if got := cell.Metric(bench.MetricTokensPerChunk).Count(); got != 3*30 {
		t.Errorf("tokens-per-chunk values = %d, want one per chunk (90)", got)
	}
	if len(res.Timelines) != bench.MaxTimelinesPerTarget {
		t.Fatalf("%d timelines, want %d", len(res.Timelines), bench.MaxTimelinesPerTarget)
	}
	if tl := res.Timelines[0]; tl.Bucket != "short" || tl.Seq != 2 || len(tl.Points) != 30 {
		t.Errorf("short timeline: seq %d, %d points; want the lowest completed seq (2) and 30 points", tl.Seq, len(tl.Points))
	}
	// Cells are ordered by bucket (short, medium, long, then unknown names).
	var order []string
	for _, c := range res.Cells {
		order = append(order, c.Bucket)
	}
	if len(order) < 3 || order[0] != "short" || order[1] != "medium" || order[2] != "long" {
		t.Errorf("cell order = %v", order)
	}
}
