package stats

import (
	"fmt"
	"math"

	"github.com/DataDog/sketches-go/ddsketch/mapping"
)

// DefaultRelativeAccuracy is the relative accuracy of NewSketch, of the zero
// Sketch, and of the sketches inside Aggregate and Window: every quantile is
// within 1% of the exact value of that rank.
const DefaultRelativeAccuracy = 0.01

// MinRelativeAccuracy and MaxRelativeAccuracy bound the relative accuracy
// accepted by NewSketchWithAccuracy and by the decoders.
// The finest accuracy, 0.01%, may take up to about 0.8 MiB per sign (1.6 MiB
// once a bin counts more than 2^32-1 values).
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
// sign is 4 bytes per bin between the lowest and highest value seen, plus
// some slack (32 bins and an eighth of the span, at most), rounded up to the
// allocator's size class: 1-5 KiB in all for 10^6 values, even spread over
// all of 1 µs to 3 hours, at most 8 KiB per sign at 1%. A sign with more than
// 2^32-1 values in one bin takes 8 bytes per bin.
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

// defaultMapping is the index mapping of every sketch with
// DefaultRelativeAccuracy. A mapping is immutable, so they share it.
var defaultMapping = func() *mapping.CubicallyInterpolatedMapping {
	m, err := mapping.NewCubicallyInterpolatedMapping(DefaultRelativeAccuracy)
	if err != nil {
		panic(err) // unreachable: the accuracy is a valid constant
	}
	return m
}()

// Sketch is a mergeable quantile sketch with a relative-error guarantee
// (DDSketch): Quantile(q) is within RelativeAccuracy of the exact q-quantile,
// whatever the distribution, in bounded memory. Count, Sum, Min and Max are
// tracked exactly, and so are the bins' counts (integers).
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
	m              *mapping.CubicallyInterpolatedMapping // nil until first use
	accuracy       float64
	minIdx, maxIdx float64 // smallest and largest magnitude that gets a bin
	limit          int     // bins per sign: maxBinsFor(accuracy)
	pos, neg       binStore
	zero           uint64 // values in the zero bucket

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

// init sets up the index mapping of an empty sketch. accuracy must be valid.
func (s *Sketch) init(accuracy float64) {
	m := defaultMapping
	if accuracy != DefaultRelativeAccuracy {
		var err error
		if m, err = mapping.NewCubicallyInterpolatedMapping(accuracy); err != nil || m == nil {
			// Unreachable for a validated accuracy; fall back rather than panic.
			m, accuracy = defaultMapping, DefaultRelativeAccuracy
		}
	}
	s.accuracy = accuracy
	s.m = m
	s.limit = maxBinsFor(accuracy)
	s.minIdx = m.MinIndexableValue()
	s.maxIdx = m.MaxIndexableValue()
}

// Add records v. It does not allocate once the bins cover v's range (steady
// state). NaN, ±Inf and values of magnitude above about 1.2e308 are ignored and
// counted by Dropped; see Sketch for zero and negative values.
func (s *Sketch) Add(v float64) {
	if s.m == nil {
		s.init(DefaultRelativeAccuracy)
	}
	switch {
	case v > s.minIdx:
		if v > s.maxIdx { // includes +Inf
			s.dropped++
			return
		}
		if i := s.m.Index(v); !s.pos.inc(i) {
			s.pos.add(i, 1, s.limit)
		}
	case v < -s.minIdx:
		if v < -s.maxIdx { // includes -Inf
			s.dropped++
			return
		}
		if i := s.m.Index(-v); !s.neg.inc(i) {
			s.neg.add(i, 1, s.limit)
		}
	case v != v: // NaN
		s.dropped++
		return
	default:
		s.zero++ // |v| <= minIdx
	}
	s.track(v)
	s.count++
	s.sum += v
}

// AddN records v n times, as n calls of Add would, in constant time; n <= 0
// records nothing. The one difference is Sum, which grows by v*n rounded
// once, where n calls of Add would round n times. Count (and Dropped) never
// pass math.MaxInt64: AddN records only as many of the n values as fit.
// The meter uses it for per-token gaps: a chunk of k tokens contributes k
// samples of its gap divided by k.
func (s *Sketch) AddN(v float64, n int) {
	if n <= 0 {
		return
	}
	if s.m == nil {
		s.init(DefaultRelativeAccuracy)
	}
	if v > s.maxIdx || v < -s.maxIdx || v != v { // ±Inf, NaN, too large
		s.dropped += min(int64(n), math.MaxInt64-s.dropped)
		return
	}
	k := min(int64(n), math.MaxInt64-s.count)
	if k == 0 {
		return
	}
	switch {
	case v > s.minIdx:
		s.pos.add(s.m.Index(v), uint64(k), s.limit)
	case v < -s.minIdx:
		s.neg.add(s.m.Index(-v), uint64(k), s.limit)
	default:
		s.zero += uint64(k)
	}
	s.track(v)
	s.count += k
	s.sum += v * float64(k)
}

// track updates Min and Max with a value about to be counted.
func (s *Sketch) track(v float64) {
	if s.count == 0 {
		s.min, s.max = v, v
		return
	}
	if v < s.min {
		s.min = v
	}
	if v > s.max {
		s.max = v
	}
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
	if s.m == nil {
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
	k := uint64(math.Floor(q * float64(s.count-1)))
	var v float64
	negN := s.neg.total
	switch {
	case k < negN:
		v = -s.m.Value(s.neg.keyAtRank(negN - 1 - k))
	case k-negN < s.zero:
		v = 0
	default:
		v = s.m.Value(s.pos.keyAtRank(k - negN - s.zero))
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
// relative accuracy, or if the merged Count would pass math.MaxInt64.
func (s *Sketch) Merge(o *Sketch) error {
	if o == nil {
		return nil
	}
	if s.RelativeAccuracy() != o.RelativeAccuracy() {
		return fmt.Errorf("%w: %v and %v", ErrIncompatible, s.RelativeAccuracy(), o.RelativeAccuracy())
	}
	if s.count > math.MaxInt64-o.count {
		return fmt.Errorf("%w: counts %d and %d overflow int64", ErrIncompatible, s.count, o.count)
	}
	if s == o {
		o = o.Clone()
	}
	s.dropped += min(o.dropped, math.MaxInt64-s.dropped)
	if o.count == 0 {
		return nil
	}
	if s.m == nil {
		s.init(o.accuracy)
	}
	s.pos.merge(&o.pos, s.limit)
	s.neg.merge(&o.neg, s.limit)
	s.zero += o.zero
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

// Reset empties s, keeping its accuracy and its allocated bins for reuse: a
// Reset sketch filled again with values in the range it held before (a
// pooled per-stream sketch) does not allocate.
func (s *Sketch) Reset() {
	s.pos.reset()
	s.neg.reset()
	s.zero = 0
	s.count, s.dropped = 0, 0
	s.sum, s.min, s.max = 0, 0, 0
}

// Clone returns a deep copy of s that shares nothing with it.
func (s *Sketch) Clone() *Sketch {
	c := &Sketch{}
	c.init(s.RelativeAccuracy())
	c.pos = s.pos.clone(c.limit)
	c.neg = s.neg.clone(c.limit)
	c.zero = s.zero
	c.count, c.dropped = s.count, s.dropped
	c.sum, c.min, c.max = s.sum, s.min, s.max
	return c
}
