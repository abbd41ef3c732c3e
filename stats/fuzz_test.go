package stats_test

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/tpsmeter/tpsmeter/stats"
)

func isDecodeError(err error) bool {
	return errors.Is(err, stats.ErrMalformed) || errors.Is(err, stats.ErrUnsupportedVersion) || errors.Is(err, stats.ErrInvalidAccuracy)
}

// checkConsistent fails unless an accepted sketch behaves: quantiles are
// monotone and within [Min, Max], and it survives both encodings unchanged.
func checkConsistent(t *testing.T, s *stats.Sketch) {
	t.Helper()
	prev := math.Inf(-1)
	for _, q := range qGrid {
		v := s.Quantile(q)
		if s.Count() == 0 {
			if !math.IsNaN(v) {
				t.Fatalf("empty sketch: Quantile(%v) = %v", q, v)
			}
			continue
		}
		if v < prev || v < s.Min() || v > s.Max() {
			t.Fatalf("Quantile(%v) = %v: previous %v, range [%v, %v]", q, v, prev, s.Min(), s.Max())
		}
		prev = v
	}
	if _, err := json.Marshal(s.Summary()); err != nil {
		t.Fatalf("Summary does not encode: %v", err)
	}
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var fromBin stats.Sketch
	if err := fromBin.UnmarshalBinary(b); err != nil {
		t.Fatalf("re-decoding our own binary encoding: %v", err)
	}
	requireSame(t, s, &fromBin)
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var fromJSON stats.Sketch
	if err := fromJSON.UnmarshalJSON(js); err != nil {
		t.Fatalf("re-decoding our own JSON encoding: %v\n%s", err, js)
	}
	requireSame(t, s, &fromJSON)
}

func FuzzUnmarshalBinary(f *testing.F) {
	for _, s := range roundTripCases(f) {
		b, err := s.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("TPSK\x01"))
	f.Add([]byte("TPSK\x01\x7b\x14\xaeG\xe1z\x84?\x01\x00\x00\x00\x00\x00\x00\x00\xf0?\x00\x00\x00\x00\x00\x00\xf0?\x00\x00\x00\x00\x00\x00\xf0?\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s stats.Sketch
		if err := s.UnmarshalBinary(data); err != nil {
			if !isDecodeError(err) {
				t.Fatalf("error %v is not one of the sentinel errors", err)
			}
			if s.Count() != 0 || s.Dropped() != 0 {
				t.Fatal("failed decode modified the receiver")
			}
			return
		}
		checkConsistent(t, &s)
	})
}

func FuzzUnmarshalJSON(f *testing.F) {
	for _, s := range roundTripCases(f) {
		b, err := json.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"version":1,"mapping":"ddsketch-cubic","relative_accuracy":0.01,"count":1,"dropped":0,"sum":"+Inf","min":1,"max":1,"zero_count":0,"positive":[[0,1]],"negative":[]}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"positive":[[1,2,3]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s stats.Sketch
		if err := s.UnmarshalJSON(data); err != nil {
			if !isDecodeError(err) {
				t.Fatalf("error %v is not one of the sentinel errors", err)
			}
			return
		}
		checkConsistent(t, &s)
	})
}

// FuzzSketch feeds arbitrary float64 bit patterns (NaN, ±Inf, subnormals,
// huge and negative values) and checks the documented properties.
func FuzzSketch(f *testing.F) {
	seed := func(vs ...float64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
		return b
	}
	f.Add(seed(1, 2, 3), uint16(1))
	f.Add(seed(math.NaN(), math.Inf(1), -0.0, 5e-324, -1e308, 1e-300, 3), uint16(4))
	f.Add(seed(sample(distributions[1], 200, 1)...), uint16(100))
	f.Add(seed(sample(distributions[4], 300, 2)...), uint16(7))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		var vs []float64
		for len(data) >= 8 {
			vs = append(vs, math.Float64frombits(binary.LittleEndian.Uint64(data)))
			data = data[8:]
		}
		c := int(cut) % (len(vs) + 1)
		whole, a, b := stats.NewSketch(), stats.NewSketch(), stats.NewSketch()
		var kept []float64
		ambiguous := false
		for i, v := range vs {
			whole.Add(v)
			if i < c {
				a.Add(v)
			} else {
				b.Add(v)
			}
			switch av := math.Abs(v); {
			case av < 1.25e308:
				kept = append(kept, v)
			case av <= 1.26e308:
				ambiguous = true // near the largest value that gets a bin
			}
		}
		if whole.Count()+whole.Dropped() != int64(len(vs)) {
			t.Fatalf("Count %d + Dropped %d != %d values", whole.Count(), whole.Dropped(), len(vs))
		}
		if !ambiguous {
			if whole.Count() != int64(len(kept)) {
				t.Fatalf("Count = %d, want %d", whole.Count(), len(kept))
			}
			if len(kept) > 0 && (whole.Min() != slices.Min(kept) || whole.Max() != slices.Max(kept)) {
				t.Fatalf("Min, Max = %v, %v; want %v, %v", whole.Min(), whole.Max(), slices.Min(kept), slices.Max(kept))
			}
			checkAccuracy(t, whole, kept)
		}
		checkConsistent(t, whole)

		// Merge of the two halves is the whole.
		if err := a.Merge(b); err != nil {
			t.Fatal(err)
		}
		if a.Count() != whole.Count() || a.Dropped() != whole.Dropped() || !sameFloat(a.Min(), whole.Min()) || !sameFloat(a.Max(), whole.Max()) {
			t.Fatal("merged halves differ from the whole")
		}
		for _, q := range qGrid {
			if !sameFloat(a.Quantile(q), whole.Quantile(q)) {
				t.Fatalf("Quantile(%v): merged %v, whole %v", q, a.Quantile(q), whole.Quantile(q))
			}
		}
	})
}

// checkAccuracy compares with exact quantiles when no bins were folded (the
// values of each sign span less than MaxBins bins) and treats the magnitudes
// that the zero bucket absorbs as zero.
func checkAccuracy(t *testing.T, s *stats.Sketch, kept []float64) {
	t.Helper()
	if len(kept) == 0 {
		return
	}
	exact := make([]float64, len(kept))
	lo, hi := [2]float64{math.Inf(1), math.Inf(1)}, [2]float64{}
	for i, v := range kept {
		av := math.Abs(v)
		if av <= 2.3e-308 {
			v, av = 0, 0
		}
		exact[i] = v
		if av > 0 {
			side := 0
			if v < 0 {
				side = 1
			}
			lo[side], hi[side] = min(lo[side], av), max(hi[side], av)
		}
	}
	for side := range 2 {
		if hi[side] > 0 && math.Log2(hi[side]/lo[side]) > 55 { // 2048 bins span ~58 octaves
			return
		}
	}
	slices.Sort(exact)
	for _, q := range qGrid {
		if q == 0 || q == 1 {
			continue // exact Min and Max, checked by the caller
		}
		want := exact[int(q*float64(len(exact)-1))]
		got := s.Quantile(q)
		if want == 0 {
			if math.Abs(got) > 2.3e-308 {
				t.Fatalf("Quantile(%v) = %v, want 0", q, got)
			}
			continue
		}
		if math.Abs(got-want) > bound(stats.DefaultRelativeAccuracy, want) {
			t.Fatalf("Quantile(%v) = %v, exact %v", q, got, want)
		}
	}
}
