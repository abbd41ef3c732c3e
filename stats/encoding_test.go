package stats_test

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/DataDog/sketches-go/ddsketch/mapping"
	"github.com/DataDog/sketches-go/ddsketch/store"
	"github.com/tpsmeter/tpsmeter/stats"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var (
	_ encoding.BinaryMarshaler   = (*stats.Sketch)(nil)
	_ encoding.BinaryUnmarshaler = (*stats.Sketch)(nil)
	_ json.Marshaler             = (*stats.Sketch)(nil)
	_ json.Unmarshaler           = (*stats.Sketch)(nil)
)

// roundTripCases are sketches that must survive both encodings unchanged.
func roundTripCases(t testing.TB) map[string]*stats.Sketch {
	fine, err := stats.NewSketchWithAccuracy(0.002)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range sample(distributions[1], 5000, 8) {
		fine.Add(v)
	}
	collapsed := stats.NewSketch()
	for e := -40.0; e <= 40; e += 0.01 {
		collapsed.Add(math.Pow(10, e))
	}
	// Sum +Inf plus Sum -Inf: NaN, with the bits the CPU makes.
	nanSum := sketchOf([]float64{1e308, 1e308})
	if err := nanSum.Merge(sketchOf([]float64{-1e308, -1e308})); err != nil {
		t.Fatal(err)
	}
	cases := map[string]*stats.Sketch{
		"empty":          stats.NewSketch(),
		"zero value":     new(stats.Sketch),
		"only dropped":   sketchOf([]float64{math.NaN(), math.Inf(-1)}),
		"only zeros":     sketchOf([]float64{0, 0, math.Copysign(0, -1)}),
		"one value":      sketchOf([]float64{0.042}),
		"mixed signs":    sketchOf([]float64{-3, -0.5, 0, 1e-9, 7, math.NaN(), 1e300, -1e-300}),
		"sum overflow":   sketchOf([]float64{1e308, 1e308}),
		"sum NaN":        nanSum,
		"subnormals":     sketchOf([]float64{5e-324, 1e-310}),
		"finer accuracy": fine,
		"collapsed":      collapsed,
	}
	for i, d := range distributions {
		cases[d.name] = sketchOf(sample(d, 20000, uint64(i)))
	}
	return cases
}

func TestEncodingRoundTrip(t *testing.T) {
	for name, s := range roundTripCases(t) {
		t.Run(name, func(t *testing.T) {
			bin, err := s.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var fromBin stats.Sketch
			if err := fromBin.UnmarshalBinary(bin); err != nil {
				t.Fatalf("UnmarshalBinary: %v", err)
			}
			requireSame(t, s, &fromBin)

			js, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			fromJSON := stats.NewSketch()
			fromJSON.Add(123) // decoding replaces, it does not merge
			if err := json.Unmarshal(js, fromJSON); err != nil {
				t.Fatalf("UnmarshalJSON: %v\n%s", err, js)
			}
			requireSame(t, s, fromJSON)

			// A decoded sketch keeps working like the original.
			a, b := s.Clone(), &fromBin
			for _, v := range sample(distributions[0], 100, 1) {
				a.Add(v)
				b.Add(v)
			}
			requireSame(t, a, b)
		})
	}
}

// Sketches from several processes, shipped as bytes, merge into exactly what
// one process would have recorded.
func TestEncodingMergeAcrossProcesses(t *testing.T) {
	vs := sample(distributions[2], 90000, 77)
	whole := sketchOf(vs)
	merged := stats.NewSketch()
	for pod := range 3 {
		part := sketchOf(vs[pod*30000 : (pod+1)*30000])
		var wire []byte
		var err error
		if pod%2 == 0 {
			wire, err = part.MarshalBinary()
		} else {
			wire, err = json.Marshal(part)
		}
		if err != nil {
			t.Fatal(err)
		}
		var got stats.Sketch
		if pod%2 == 0 {
			err = got.UnmarshalBinary(wire)
		} else {
			err = json.Unmarshal(wire, &got)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := merged.Merge(&got); err != nil {
			t.Fatal(err)
		}
	}
	if math.Abs(merged.Sum()-whole.Sum()) > 1e-9*whole.Sum() {
		t.Fatalf("Sum %v vs %v", merged.Sum(), whole.Sum())
	}
	for _, q := range qGrid {
		if merged.Quantile(q) != whole.Quantile(q) {
			t.Fatalf("Quantile(%v): %v merged from pods, %v recorded in one place", q, merged.Quantile(q), whole.Quantile(q))
		}
	}
}

func TestUnmarshalBinaryRejects(t *testing.T) {
	valid, err := sketchOf([]float64{0.1, 0.2, 0, -3}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	with := func(i int, b byte) []byte { c := bytes.Clone(valid); c[i] = b; return c }
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"nil", nil, stats.ErrMalformed},
		{"short", []byte("TPS"), stats.ErrMalformed},
		{"wrong magic", with(0, 'X'), stats.ErrMalformed},
		{"JSON given to the binary decoder", []byte(`{"version":1}`), stats.ErrMalformed},
		{"future version", with(4, 2), stats.ErrUnsupportedVersion},
		{"accuracy zero", append(append([]byte("TPSK\x01"), make([]byte, 8)...), valid[13:]...), stats.ErrInvalidAccuracy},
		{"count too high", with(13, valid[13]+1), stats.ErrMalformed},
		{"trailing garbage", append(bytes.Clone(valid), 0xff), stats.ErrMalformed},
		// Header: magic 4, version 1, accuracy 8, count 1, dropped 1, then
		// sum at 15, min at 23, max at 31.
		{"min above max", func() []byte {
			c := bytes.Clone(valid)
			binary.LittleEndian.PutUint64(c[23:], math.Float64bits(1))
			return c
		}(), stats.ErrMalformed},
		{"NaN max", func() []byte {
			c := bytes.Clone(valid)
			binary.LittleEndian.PutUint64(c[31:], math.Float64bits(math.NaN()))
			return c
		}(), stats.ErrMalformed},
		{"max disagrees with bins", func() []byte {
			c := bytes.Clone(valid)
			binary.LittleEndian.PutUint64(c[31:], math.Float64bits(0.4))
			return c
		}(), stats.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sketchOf([]float64{42})
			if err := s.UnmarshalBinary(tc.in); !errors.Is(err, tc.want) {
				t.Fatalf("UnmarshalBinary = %v, want %v", err, tc.want)
			}
			if s.Count() != 1 || s.Max() != 42 {
				t.Fatal("failed UnmarshalBinary modified the receiver")
			}
		})
	}
	// Every strict prefix of a valid encoding is an error.
	for n := range len(valid) {
		var s stats.Sketch
		if err := s.UnmarshalBinary(valid[:n]); err == nil {
			t.Errorf("prefix of %d/%d bytes decoded without error", n, len(valid))
		}
	}
}

func TestUnmarshalJSONRejects(t *testing.T) {
	good := `{"version":1,"mapping":"ddsketch-cubic","relative_accuracy":0.01,"count":3,"dropped":0,` +
		`"sum":0.6000000000000001,"min":0.1,"max":0.3,"zero_count":0,"positive":[[-117,1],[-82,1],[-61,1]],"negative":[]}`
	var s stats.Sketch
	if err := json.Unmarshal([]byte(good), &s); err != nil {
		t.Fatalf("the valid base case fails: %v", err)
	}
	for _, tc := range []struct {
		name, old, new string
		want           error
	}{
		{"not JSON", good, `{"version":`, stats.ErrMalformed},
		{"array", good, `[1,2]`, stats.ErrMalformed},
		{"no version", `"version":1,`, ``, stats.ErrUnsupportedVersion},
		{"future version", `"version":1`, `"version":2`, stats.ErrUnsupportedVersion},
		{"other mapping", `ddsketch-cubic`, `ddsketch-log`, stats.ErrMalformed},
		{"bad accuracy", `0.01,`, `0,`, stats.ErrInvalidAccuracy},
		{"count mismatch", `"count":3`, `"count":4`, stats.ErrMalformed},
		{"negative count", `"count":3`, `"count":-3`, stats.ErrMalformed},
		{"negative bin count", `[-61,1]`, `[-61,-1]`, stats.ErrMalformed},
		{"bins out of order", `[[-117,1],[-82,1],[-61,1]]`, `[[-82,1],[-117,1],[-61,1]]`, stats.ErrMalformed},
		{"index out of range", `[-61,1]`, `[99999999999,1]`, stats.ErrMalformed},
		{"max disagrees with bins", `"max":0.3`, `"max":3`, stats.ErrMalformed},
		{"min above max", `"min":0.1`, `"min":0.5`, stats.ErrMalformed},
		{"NaN min", `"min":0.1`, `"min":"NaN"`, stats.ErrMalformed},
		{"string count", `"count":3`, `"count":"3"`, stats.ErrMalformed},
		{"negative zero count", `"zero_count":0`, `"zero_count":-1`, stats.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := strings.Replace(good, tc.old, tc.new, 1)
			if in == good {
				t.Fatalf("case does not change the input")
			}
			s := sketchOf([]float64{42})
			if err := s.UnmarshalJSON([]byte(in)); !errors.Is(err, tc.want) {
				t.Fatalf("UnmarshalJSON = %v, want %v\n%s", err, tc.want, in)
			}
			if s.Count() != 1 || s.Max() != 42 {
				t.Fatal("failed UnmarshalJSON modified the receiver")
			}
		})
	}
}

func TestJSONIsSelfDescribing(t *testing.T) {
	js, err := json.Marshal(sketchOf([]float64{-2, 0, 0.5, math.NaN()}))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"version": 1.0, "mapping": "ddsketch-cubic", "relative_accuracy": 0.01, "count": 3.0, "dropped": 1.0,
		"sum": -1.5, "min": -2.0, "max": 0.5, "zero_count": 1.0,
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if len(m["positive"].([]any)) != 1 || len(m["negative"].([]any)) != 1 {
		t.Errorf("bins: %s", js)
	}
}

// The encodings are a wire format between versions of this library: the
// golden files pin them. Regenerate with go test -run Golden -update.
func TestGoldenEncodings(t *testing.T) {
	r := rand.New(rand.NewPCG(2024, 5))
	s := stats.NewSketch()
	for range 2000 {
		s.Add(math.Exp(-4 + r.NormFloat64()))
	}
	s.Add(0)
	s.Add(-0.25)
	s.Add(math.NaN())
	bin, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct {
		file string
		data []byte
	}{{"sketch-v1.bin", bin}, {"sketch-v1.json", append(js, '\n')}} {
		path := filepath.Join("testdata", g.file)
		if *update {
			if err := os.WriteFile(path, g.data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("golden file missing (run go test -run Golden -update): %v", err)
		}
		if !bytes.Equal(g.data, want) {
			t.Errorf("%s: encoding changed; if intended, bump EncodingVersion and regenerate with -update", path)
		}
		var got stats.Sketch
		if strings.HasSuffix(path, ".bin") {
			err = got.UnmarshalBinary(want)
		} else {
			err = json.Unmarshal(want, &got)
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		requireSame(t, &got, s)
	}
}

// The bin section is DDSketch's own encoding: payloads written by other
// sketches-go stores (the buffered paginated store writes index-delta bins,
// the sparse store index-delta-and-count bins) decode to the same sketch.
func TestUnmarshalBinaryAcceptsOtherDDSketchStores(t *testing.T) {
	m, err := mapping.NewCubicallyInterpolatedMapping(stats.DefaultRelativeAccuracy)
	if err != nil {
		t.Fatal(err)
	}
	for name, provider := range map[string]store.Provider{
		"buffered paginated": store.BufferedPaginatedStoreConstructor,
		"sparse":             store.SparseStoreConstructor,
		"dense":              store.DenseStoreConstructor,
	} {
		for _, n := range []int{3, 3000} { // few values stay in the paginated store's buffer
			vs := append(sample(distributions[3], n, 4), -1, -2, -2, 0, 0)
			want := sketchOf(vs)
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				dd := ddsketch.NewDDSketchFromStoreProvider(m, provider)
				for _, v := range vs {
					if err := dd.Add(v); err != nil {
						t.Fatal(err)
					}
				}
				b := []byte("TPSK\x01")
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(stats.DefaultRelativeAccuracy))
				b = binary.AppendUvarint(b, uint64(want.Count()))
				b = binary.AppendUvarint(b, 0)
				for _, f := range []float64{want.Sum(), want.Min(), want.Max()} {
					b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
				}
				dd.Encode(&b, true)
				var got stats.Sketch
				if err := got.UnmarshalBinary(b); err != nil {
					t.Fatal(err)
				}
				requireSame(t, &got, want)
			})
		}
	}
}

// Sketch keeps its own bin store (uint32 counts), but its bins are those of
// sketches-go's CollapsingLowestDenseStore with the same mapping and limit,
// and its bin section is byte for byte what the library encodes for them:
// for every shape, in any order, collapsed or not, and after merges.
func TestBinsMatchSketchesGo(t *testing.T) {
	m, err := mapping.NewCubicallyInterpolatedMapping(stats.DefaultRelativeAccuracy)
	if err != nil {
		t.Fatal(err)
	}
	newLib := func() *ddsketch.DDSketch {
		return ddsketch.NewDDSketch(m, store.NewCollapsingLowestDenseStore(stats.MaxBins), store.NewCollapsingLowestDenseStore(stats.MaxBins))
	}
	// binSection is the part of MarshalBinary after the summary header.
	binSection := func(s *stats.Sketch) []byte {
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		n := 4 + 1 + 8
		for range 2 { // count and dropped
			_, k := binary.Uvarint(b[n:])
			n += k
		}
		return b[n+24:]
	}
	libBins := func(dd *ddsketch.DDSketch) []byte {
		var b []byte
		dd.Encode(&b, true)
		return b
	}
	shapes := append(slices.Clone(distributions),
		dist{"signed with zeros", func(r *rand.Rand) float64 {
			if r.IntN(5) == 0 {
				return 0
			}
			return r.NormFloat64()
		}},
		// Tens of thousands of bins per sign: both stores fold the lowest ones.
		dist{"collapsing", func(r *rand.Rand) float64 {
			return math.Copysign(math.Exp(max(-700, min(700, r.NormFloat64()*200))), r.NormFloat64())
		}},
		dist{"collapsing, one huge value", func(r *rand.Rand) float64 {
			if r.IntN(5000) == 0 {
				return 1e300
			}
			return math.Exp(r.NormFloat64())
		}},
	)
	for _, d := range shapes {
		t.Run(d.name, func(t *testing.T) {
			vs := sample(d, 20000, 3)
			orders := map[string][]float64{"random": vs, "sorted": slices.Sorted(slices.Values(vs))}
			orders["descending"] = slices.Clone(orders["sorted"])
			slices.Reverse(orders["descending"])
			for name, in := range orders {
				lib, whole := newLib(), stats.NewSketch()
				libA, libB, a, b := newLib(), newLib(), stats.NewSketch(), stats.NewSketch()
				for i, v := range in {
					whole.Add(v)
					if err := lib.Add(v); err != nil {
						t.Fatal(err)
					}
					if i%3 == 0 {
						a.Add(v)
						_ = libA.Add(v)
					} else {
						b.Add(v)
						_ = libB.Add(v)
					}
				}
				if got, want := binSection(whole), libBins(lib); !bytes.Equal(got, want) {
					t.Fatalf("%s: bins differ from sketches-go's:\n%x\n%x", name, got, want)
				}
				if err := a.Merge(b); err != nil {
					t.Fatal(err)
				}
				if err := libA.MergeWith(libB); err != nil {
					t.Fatal(err)
				}
				if got, want := binSection(a), libBins(libA); !bytes.Equal(got, want) {
					t.Fatalf("%s, merged: bins differ from sketches-go's", name)
				}
				for _, q := range qGrid { // Sum differs by rounding only
					if x, y := a.Quantile(q), whole.Quantile(q); x != y {
						t.Fatalf("%s: Quantile(%v) = %v merged, %v whole", name, q, x, y)
					}
				}
			}
		})
	}
}

// The same cross-check with counts past 2^32 (AddN, merges, Reset and
// folding in random order): the uint32 bins widen and stay exact where
// sketches-go's float64 bins are exact (below 2^53).
func TestBinsMatchSketchesGoWithLargeCounts(t *testing.T) {
	m, err := mapping.NewCubicallyInterpolatedMapping(stats.DefaultRelativeAccuracy)
	if err != nil {
		t.Fatal(err)
	}
	newLib := func() *ddsketch.DDSketch {
		return ddsketch.NewDDSketch(m, store.NewCollapsingLowestDenseStore(stats.MaxBins), store.NewCollapsingLowestDenseStore(stats.MaxBins))
	}
	libBins := func(dd *ddsketch.DDSketch) []byte {
		var b []byte
		dd.Encode(&b, true)
		return b
	}
	r := rand.New(rand.NewPCG(9, 9))
	value := func() float64 {
		switch r.IntN(10) {
		case 0:
			return 0
		case 1: // far away: makes the stores fold
			return math.Copysign(math.Exp(r.NormFloat64()*150), r.NormFloat64())
		}
		return math.Copysign(math.Exp(r.NormFloat64()), r.NormFloat64())
	}
	count := func() int {
		if r.IntN(2) == 0 {
			return 1 + r.IntN(10)
		}
		return 1 + r.IntN(1<<34)
	}
	fill := func(s *stats.Sketch, dd *ddsketch.DDSketch, ops int) {
		for range ops {
			v, n := value(), count()
			s.AddN(v, n)
			if err := dd.AddWithCount(v, float64(n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for trial := range 40 {
		s, dd := stats.NewSketch(), newLib()
		for step := range 20 {
			switch r.IntN(8) {
			case 0:
				o, odd := stats.NewSketch(), newLib()
				fill(o, odd, 1+r.IntN(30))
				if err := s.Merge(o); err != nil {
					t.Fatal(err)
				}
				if err := dd.MergeWith(odd); err != nil {
					t.Fatal(err)
				}
			case 1:
				s.Reset()
				dd.Clear()
			default:
				fill(s, dd, 1+r.IntN(10))
			}
			b, err := s.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var back stats.Sketch
			if err := back.UnmarshalBinary(b); err != nil {
				t.Fatalf("trial %d step %d: %v", trial, step, err)
			}
			if want := libBins(dd); !bytes.HasSuffix(b, want) {
				t.Fatalf("trial %d step %d: bins differ from sketches-go's:\n%x\nwant suffix\n%x", trial, step, b, want)
			}
		}
	}
}
