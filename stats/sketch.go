package stats

import (
	"fmt"
	"math"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/DataDog/sketches-go/ddsketch/mapping"
	"github.com/DataDog/sketches-go/ddsketch/store"
)

// DefaultRelativeAccuracy is the relative accuracy of NewSketch, of the zero
// Sketch, and of the sketches inside Aggregate and Window: every quantile is
// within 1% of the exact value of that rank.
const DefaultRelativeAccuracy = 0.01

// MinRelativeAccuracy and MaxRelativeAccuracy bound the relative accuracy
// accepted by NewSketchWithAccuracy and by the decoders.
// The finest accuracy, 0.01%, may take up to about 1.6 MiB per sign.
const (
	MinRelativeAccuracy = 1e-4
	MaxRelativeAccuracy = 0.5
)

// MaxBins is the most bins a sketch with DefaultRelativeAccuracy keeps for
// each sign. At 1% one bin spans a factor of about 1.02, so 2048 bins cover a
// ratio of about 4e17 between the smallest and the largest value (for example
// 1 ns to 12 years) before anything is lost. Sketches with a finer accuracy
// get proportionally more bins, so that they cover the same ratio (0.1%:
// about 20,500 bins). Past that, the lowest bins are folded together: the
// accuracy guarantee is then lost for the lowest quantiles only, while the
// high ones (P90..P99.9, what users judge providers by) keep it. Memory per
// sign is 8 bytes per bin between the lowest and highest value seen, plus 63
// bins of slack, rounded up to the allocator's size class: 2-7 KiB for 10^6
// typical latencies, at most about 16 KiB per sign at 1%.
const MaxBins = 2048

// maxBinsFor returns the bin limit for a relative accuracy: MaxBins, scaled
// by how many more bins per octave the cubic mapping needs at that accuracy
// (0.7/ln((1+a)/(1-a)) bins per octave).
func maxBinsFor(accuracy float64) int {
	if accuracy >= DefaultRelativeAccuracy {
		return MaxBins
	}
	perOctave := func(a float64) float64 { return 0.7 / math.Log((1+a)/(1-a)) }
	return int(math.Ceil(MaxBins * perOctave(accuracy) / perOctave(DefaultRelativeAccuracy)))
}

// Sketch is a mergeable quantile sketch with a relative-error guarantee
// (DDSketch): Quantile(q) is within RelativeAccuracy of the exact q-quantile,
// whatever the distribution, in bounded memory. Count, Sum, Min and Max are
// tracked exactly.
//
// Values: zero and values whose magnitude is below about 2.2e-308 go to an
// exact zero bucket (quantiles report them as 0, kept within [Min, Max]);
// negative values are kept, in a mirrored store with the same accuracy; NaN,
// ±Inf and finite values whose magnitude exceeds about 1.2e308 are ignored
// and counted by Dropped, never by Count.
//
// The zero Sketch is an empty sketch with DefaultRelativeAccuracy, ready to
// use. A Sketch is NOT safe for concurrent use: guard it with a mutex, or use
// Aggregate. Do not copy a non-zero Sketch by value (copies share their bins);
// use Clone.
type Sketch struct {
	accuracy float64
	m        *mapping.CubicallyInterpolatedMapping
	pos, neg *store.CollapsingLowestDenseStore
	dd       *ddsketch.DDSketch // shares m, pos and neg; holds the zero count
	minIdx   float64            // smallest magnitude that gets a bin
	maxIdx   float64            // largest magnitude that gets a bin

	// Bin indexes that the allocated bins of pos and neg cover without
	// growing; an index outside calls refit. See refit.
	posLo, posHi, negLo, negHi int

	// reused is set by Reset: a sketch that is reset and filled again (a
	// pooled per-stream sketch) keeps its bin arrays instead of refitting
	// them, trading the tight fit for no allocation on reuse.
	reused bool

	count   int64
	dropped int64
	sum     float64
	min     float64
	max     float64
}

// NewSketch returns an empty sketch with DefaultRelativeAccuracy. It is the
// same as new(Sketch).
func NewSketch() *Sketch {
	s := &Sketch{}
	s.init(DefaultRelativeAccuracy)
	return s
}

// NewSketchWithAccuracy returns an empty sketch whose quantiles are within
// relativeAccuracy (for example 0.005 for 0.5%) of the exact ones. It returns
// ErrInvalidAccuracy outside [MinRelativeAccuracy, MaxRelativeAccuracy].
// Sketches merge only with sketches of the same accuracy.
func NewSketchWithAccuracy(relativeAccuracy float64) (*Sketch, error) {
	if !validAccuracy(relativeAccuracy) {
		return nil, fmt.Errorf("%w: %v not in [%v, %v]", ErrInvalidAccuracy, relativeAccuracy, MinRelativeAccuracy, MaxRelativeAccuracy)
	}
	s := &Sketch{}
	s.init(relativeAccuracy)
	return s, nil
}

func validAccuracy(a float64) bool {
	return a >= MinRelativeAccuracy && a <= MaxRelativeAccuracy
}

// init builds the internal DDSketch. accuracy must be valid.
func (s *Sketch) init(accuracy float64) {
	m, err := mapping.NewCubicallyInterpolatedMapping(accuracy)
	if err != nil || m == nil {
		// Unreachable for a validated accuracy; fall back rather than panic.
		m, _ = mapping.NewCubicallyInterpolatedMapping(DefaultRelativeAccuracy)
		accuracy = DefaultRelativeAccuracy
	}
	s.accuracy = accuracy
	s.m = m
	s.pos = store.NewCollapsingLowestDenseStore(maxBinsFor(accuracy))
	s.neg = store.NewCollapsingLowestDenseStore(maxBinsFor(accuracy))
	s.dd = ddsketch.NewDDSketch(m, s.pos, s.neg)
	s.minIdx = m.MinIndexableValue()
	s.maxIdx = m.MaxIndexableValue()
	s.refitAll(false) // sets the windows of the empty stores
}

// binSlack is how far past the last fitted span an index may land before
// refit runs; it must stay below the library's own slack (about 31 bins each
// side of a freshly allocated array) so that the library never has to grow a
// fitted array by itself.
const binSlack = 16

// refit keeps the bin arrays of one sign (neg false: positive values) tight.
// sketches-go grows a dense store with append, whose amortized doubling leaves
// up to about half of the array unused; after 10^6 lognormal latencies that
// is 8.4 KiB instead of 5.6 KiB (BenchmarkDDSketchLibraryMemory). When a new
// index leaves the fitted window (which happens O(span/binSlack) times in a
// sketch's life, whatever the order of the values), refit copies the store
// into one allocated for its exact span, and it stops once the span nears the
// bin limit, where the library no longer grows the array. Each refit copies
// at most the bin limit, so a sketch's refits cost O(limit²/binSlack) in all;
// for accuracies finer than about 0.25% (limits above 4*MaxBins) that would
// be too much and refit is switched off. compact false only recomputes the
// window (for a store that is already tight).
func (s *Sketch) refit(neg, compact bool) {
	st, lo, hi := s.pos, &s.posLo, &s.posHi
	if neg {
		st, lo, hi = s.neg, &s.negLo, &s.negHi
	}
	if s.reused {
		// A Reset sketch is being reused: keep the arrays it already has and
		// let the store grow in place, so reuse does not allocate.
		*lo, *hi = math.MinInt, math.MaxInt
		return
	}
	limit := maxBinsFor(s.accuracy)
	if limit > 4*MaxBins {
		*lo, *hi = math.MinInt, math.MaxInt
		return
	}
	if st.IsEmpty() {
		*lo, *hi = 1, 0 // the first index refits
		return
	}
	mn, _ := st.MinIndex()
	mx, _ := st.MaxIndex()
	if mx-mn+1+2*binSlack+64 >= limit {
		*lo, *hi = math.MinInt, math.MaxInt
	} else {
		*lo, *hi = mn-binSlack, mx+binSlack
	}
	if !compact || mx == mn {
		return
	}
	c := store.NewCollapsingLowestDenseStore(limit)
	c.MergeWith(st)
	z := s.dd.GetZeroCount()
	if neg {
		s.neg = c
	} else {
		s.pos = c
	}
	s.dd = ddsketch.NewDDSketch(s.m, s.pos, s.neg)
	if z > 0 {
		_ = s.dd.AddWithCount(0, z)
	}
}

// refitAll refits both signs; compact only those whose bins now span
// indexes outside their window (after a merge or a decode).
func (s *Sketch) refitAll(compact bool) {
	outside := func(st *store.CollapsingLowestDenseStore, lo, hi int) bool {
		if st.IsEmpty() {
			return false
		}
		mn, _ := st.MinIndex()
		mx, _ := st.MaxIndex()
		return mn < lo || mx > hi
	}
	s.refit(false, compact && outside(s.pos, s.posLo, s.posHi))
	s.refit(true, compact && outside(s.neg, s.negLo, s.negHi))
}

// Add records v. It does not allocate once the bins cover v's range (steady
// state). NaN, ±Inf and values of magnitude above about 1.2e308 are ignored and
// counted by Dropped; see Sketch for zero and negative values.
func (s *Sketch) Add(v float64) {
	if s.dd == nil {
		s.init(DefaultRelativeAccuracy)
	}
	switch {
	case v > s.minIdx:
		if v > s.maxIdx { // includes +Inf
			s.dropped++
			return
		}
		i := s.m.Index(v)
		s.pos.Add(i)
		if i < s.posLo || i > s.posHi {
			s.refit(false, true)
		}
	case v < -s.minIdx:
		if v < -s.maxIdx { // includes -Inf
			s.dropped++
			return
		}
		i := s.m.Index(-v)
		s.neg.Add(i)
		if i < s.negLo || i > s.negHi {
			s.refit(true, true)
		}
	case v != v: // NaN
		s.dropped++
		return
	default:
		_ = s.dd.Add(v) // lands in the zero bucket; cannot fail for |v| <= minIdx
	}
	if s.count == 0 {
		s.min, s.max = v, v
	} else {
		if v < s.min {
			s.min = v
		}
		if v > s.max {
			s.max = v
		}
	}
	s.count++
	s.sum += v
}

// Count returns how many values were recorded (Dropped ones excluded); 0 for
// an empty sketch.
func (s *Sketch) Count() int64 { return s.count }

// Dropped returns how many values Add ignored (NaN, ±Inf, magnitude above
// about 1.2e308), including those of merged sketches.
func (s *Sketch) Dropped() int64 { return s.dropped }

// Sum returns the sum of the recorded values, accumulated in float64 in the
// order they were added and merged; 0 for an empty sketch. It becomes ±Inf or NaN only if the sum overflows float64.
func (s *Sketch) Sum() float64 { return s.sum }

// Mean returns Sum/Count, or NaN for an empty sketch.
func (s *Sketch) Mean() float64 {
	if s.count == 0 {
		return math.NaN()
	}
	return s.sum / float64(s.count)
}

// Min returns the exact smallest recorded value, or NaN for an empty sketch.
func (s *Sketch) Min() float64 {
	if s.count == 0 {
		return math.NaN()
	}
	return s.min
}

// Max returns the exact largest recorded value, or NaN for an empty sketch.
func (s *Sketch) Max() float64 {
	if s.count == 0 {
		return math.NaN()
	}
	return s.max
}

// RelativeAccuracy returns the relative accuracy the sketch was built with
// (DefaultRelativeAccuracy for the zero Sketch).
func (s *Sketch) RelativeAccuracy() float64 {
	if s.dd == nil {
		return DefaultRelativeAccuracy
	}
	return s.accuracy
}

// Quantile returns an estimate of the q-quantile, within RelativeAccuracy of
// the exact value of rank floor(q*(Count-1)) in the sorted values (the lower
// quantile), and never outside [Min, Max]. Quantile(0) is exactly Min and
// Quantile(1) exactly Max. q below 0 is treated as 0 and above 1 as 1; a NaN q
// and an empty sketch give NaN. The result never decreases as q grows.
func (s *Sketch) Quantile(q float64) float64 {
	if s.count == 0 || q != q {
		return math.NaN()
	}
	if q <= 0 {
		return s.min
	}
	if q >= 1 {
		return s.max
	}
	// The element of rank k in increasing order: negative values first (their
	// store is indexed by magnitude, so it is walked from the top), then the
	// zero bucket, then positive values.
	k := math.Floor(q * float64(s.count-1))
	var v float64
	negN := s.neg.TotalCount()
	zeroN := s.dd.GetZeroCount()
	switch {
	case k < negN:
		v = -s.m.Value(s.neg.KeyAtRank(negN - 1 - k))
	case k < negN+zeroN:
		v = 0
	default:
		v = s.m.Value(s.pos.KeyAtRank(k - negN - zeroN))
	}
	if v < s.min {
		return s.min
	}
	if v > s.max {
		return s.max
	}
	return v
}

// Merge adds every value recorded in o to s, exactly as if they had been
// added to s directly (bins add up; Count, Sum, Min, Max and Dropped combine
// exactly, Sum up to float64 rounding). o is not modified; a nil o is a no-op.
// It returns ErrIncompatible, leaving s unchanged, if o has a different
// relative accuracy.
func (s *Sketch) Merge(o *Sketch) error {
	if o == nil {
		return nil
	}
	if s.RelativeAccuracy() != o.RelativeAccuracy() {
		return fmt.Errorf("%w: %v and %v", ErrIncompatible, s.RelativeAccuracy(), o.RelativeAccuracy())
	}
	if s == o {
		o = o.Clone()
	}
	s.dropped += o.dropped
	if o.count == 0 {
		return nil
	}
	if s.dd == nil {
		s.init(o.accuracy)
	}
	if err := s.dd.MergeWith(o.dd); err != nil {
		return fmt.Errorf("%w: %v", ErrIncompatible, err)
	}
	s.refitAll(true)
	if s.count == 0 {
		s.min, s.max = o.min, o.max
	} else {
		s.min = math.Min(s.min, o.min)
		s.max = math.Max(s.max, o.max)
	}
	s.count += o.count
	s.sum += o.sum
	return nil
}

// Reset empties s, keeping its accuracy and its allocated bins for reuse.
func (s *Sketch) Reset() {
	if s.dd != nil {
		s.dd.Clear()
		s.reused = true
		s.refitAll(false)
	}
	s.count, s.dropped = 0, 0
	s.sum, s.min, s.max = 0, 0, 0
}

// Clone returns a deep copy of s that shares nothing with it.
func (s *Sketch) Clone() *Sketch {
	c := &Sketch{}
	c.init(s.RelativeAccuracy())
	if s.dd != nil {
		c.pos.MergeWith(s.pos)
		c.neg.MergeWith(s.neg)
		if z := s.dd.GetZeroCount(); z > 0 {
			_ = c.dd.AddWithCount(0, z)
		}
		c.refitAll(false) // MergeWith into empty stores allocates tightly
	}
	c.count, c.dropped = s.count, s.dropped
	c.sum, c.min, c.max = s.sum, s.min, s.max
	return c
}

// forEachBin calls f for every non-empty bin of one sign (neg=false: positive
// values, neg=true: negative values, index of the magnitude) in increasing
// index order.
func (s *Sketch) forEachBin(neg bool, f func(index int, count float64)) {
	if s.dd == nil {
		return
	}
	st := s.pos
	if neg {
		st = s.neg
	}
	st.ForEach(func(index int, count float64) bool {
		f(index, count)
		return false
	})
}

// zeroCount returns the number of values in the zero bucket.
func (s *Sketch) zeroCount() float64 {
	if s.dd == nil {
		return 0
	}
	return s.dd.GetZeroCount()
}

// AddN records v n times, as n calls of Add would (n <= 0 records nothing).
// The meter uses it for per-token gaps: a chunk of k tokens contributes k
// samples of its gap divided by k.
func (s *Sketch) AddN(v float64, n int) {
	for i := 0; i < n; i++ {
		s.Add(v)
	}
}
