package bench

import (
	"fmt"
	"slices"
	"strings"
)

// Merge combines results of runs of the same benchmark made on several
// machines (or at several times) into one, as if all their requests had
// been measured in one run: cell counts add up, sketches merge exactly (so
// merged percentiles are those of all requests, within the sketch's 1%
// relative error), per-request samples combine into a uniform sample of
// the union, and the runs are listed side by side. The settings are the
// first results'; targets missing from them are appended.
//
// Merge refuses (ErrIncompatible) results with different length buckets
// and the same run twice (it would count its requests twice). The inputs
// are not modified.
func Merge(rs ...*Results) (*Results, error) {
	if len(rs) == 0 {
		return nil, fmt.Errorf("%w: nothing to merge", ErrIncompatible)
	}
	out := &Results{Settings: rs[0].Settings, Buckets: normBuckets(rs[0].Buckets)}
	out.Settings.Targets = slices.Clone(out.Settings.Targets)
	sampleCap := DefaultSampleCap
	seenRun := map[string]bool{}
	var aborted []string
	cells := map[CellKey]*Cell{}
	tl := map[string]int{}
	for i, r := range rs {
		if r == nil {
			return nil, fmt.Errorf("%w: results %d are nil", ErrIncompatible, i+1)
		}
		if !sameBuckets(rs[0], r) {
			return nil, fmt.Errorf("%w: results %d have different length buckets (%v vs %v)", ErrIncompatible, i+1, normBuckets(r.Buckets).Names, out.Buckets.Names)
		}
		for _, run := range r.Runs {
			if run.ID != "" && seenRun[run.ID] {
				return nil, fmt.Errorf("%w: run %s appears twice", ErrIncompatible, run.ID)
			}
			seenRun[run.ID] = true
			out.Runs = append(out.Runs, run)
		}
		for _, t := range r.Settings.Targets {
			if !slices.ContainsFunc(out.Settings.Targets, func(x Target) bool { return x.Name == t.Name }) {
				out.Settings.Targets = append(out.Settings.Targets, t)
			}
		}
		sampleCap = max(sampleCap, r.Settings.SampleCap)
		out.Partial = out.Partial || r.Partial
		if r.Aborted != "" {
			aborted = append(aborted, r.Aborted)
		}
		for _, t := range r.Timelines {
			if tl[t.Target] < MaxTimelinesPerTarget {
				tl[t.Target]++
				out.Timelines = append(out.Timelines, t)
			}
		}
	}
	out.Settings.SampleCap = sampleCap
	for _, r := range rs {
		for _, c := range r.Cells {
			m := cells[c.CellKey]
			if m == nil {
				m = &Cell{CellKey: c.CellKey, Metrics: map[string]*Dist{}}
				cells[c.CellKey] = m
				out.Cells = append(out.Cells, m)
			}
			m.Requests += c.Requests
			m.Completed += c.Completed
			m.BucketMismatches += c.BucketMismatches
			for e, n := range c.Errors {
				if m.Errors == nil {
					m.Errors = map[string]int64{}
				}
				m.Errors[e] += n
			}
			for name, d := range c.Metrics {
				md := m.Metrics[name]
				if md == nil {
					md = NewDist(sampleCap, distSeed(uint64(len(out.Runs)), c.CellKey, name))
					m.Metrics[name] = md
				}
				if err := md.Merge(d); err != nil {
					return nil, fmt.Errorf("cell %s, metric %s: %w", c.CellKey, name, err)
				}
			}
		}
	}
	out.Aborted = strings.Join(aborted, "; ")
	out.sortCells()
	return out, nil
}
