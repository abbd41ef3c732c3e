package stats

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	enc "github.com/DataDog/sketches-go/ddsketch/encoding"
)

// EncodingVersion is the version written by MarshalBinary and MarshalJSON.
// Decoders accept exactly this version and return ErrUnsupportedVersion for
// others.
const EncodingVersion = 1

// binaryMagic starts every binary encoding.
var binaryMagic = [4]byte{'T', 'P', 'S', 'K'}

// jsonMapping names the index mapping in the JSON encoding.
const jsonMapping = "ddsketch-cubic"

// MarshalBinary encodes s compactly (typically 0.3-2 KiB). The format,
// version 1, is:
//
//	"TPSK"             4 bytes
//	version            1 byte (1)
//	relative accuracy  float64, little endian
//	count, dropped     unsigned varints
//	sum, min, max      float64 each, little endian (0 for an empty sketch)
//	bins               DDSketch's own binary encoding, byte for byte what
//	                   sketches-go's DDSketch.Encode writes for the same bins
//	                   (index mapping omitted): zero count, positive and
//	                   negative stores, counts as float64 (exact to 2^53 per
//	                   bin)
//
// Decoding it gives back a sketch that is identical in every observable way,
// so sketches from many processes merge into one report exactly as if the
// values had been recorded in one place.
func (s *Sketch) MarshalBinary() ([]byte, error) {
	posSize, posDense := storeSize(&s.pos)
	negSize, negDense := storeSize(&s.neg)
	size := len(binaryMagic) + 1 + 8 + binary.MaxVarintLen64*2 + 3*8 + 1 + enc.MaxVarLen64 + posSize + negSize
	b := make([]byte, 0, size) // exact but for the varints
	b = append(b, binaryMagic[:]...)
	b = append(b, EncodingVersion)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s.RelativeAccuracy()))
	b = binary.AppendUvarint(b, uint64(s.count))
	b = binary.AppendUvarint(b, uint64(s.dropped))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(canonicalNaN(s.sum)))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s.min))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s.max))
	if s.zero != 0 {
		enc.EncodeFlag(&b, enc.FlagZeroCountVarFloat)
		enc.EncodeVarfloat64(&b, float64(s.zero))
	}
	encodeStore(&b, &s.pos, enc.FlagTypePositiveStore, posDense)
	encodeStore(&b, &s.neg, enc.FlagTypeNegativeStore, negDense)
	return b, nil
}

// storeSize returns the length of the encoding of st, flag included, and
// whether it is the dense layout. Like sketches-go's dense stores, the
// encoder picks the shorter of two layouts (the dense one on a tie), so the
// bytes are those the library writes for the same bins: contiguous counts
// from the lowest to the highest counted bin, or index deltas and counts of
// the non-empty bins. An empty store takes no bytes.
func storeSize(st *binStore) (size int, dense bool) {
	lo, hi, ok := st.span()
	if !ok {
		return 0, false
	}
	denseSize := enc.Uvarint64Size(uint64(hi-lo)+1) + enc.Varint64Size(int64(lo)) + enc.Varint64Size(1)
	sparseSize, nonEmpty, prev := 0, uint64(0), lo
	for i := lo; i <= hi; i++ {
		c := float64(st.at(i - st.offset))
		n := enc.Varfloat64Size(c)
		denseSize += n
		if c != 0 {
			nonEmpty++
			sparseSize += enc.Varint64Size(int64(i-prev)) + n
			prev = i
		}
	}
	sparseSize += enc.Uvarint64Size(nonEmpty)
	if denseSize <= sparseSize {
		return 1 + denseSize, true
	}
	return 1 + sparseSize, false
}

// encodeStore appends the bins of st in DDSketch's binary encoding, in the
// layout storeSize chose. Counts are written as float64, exact up to 2^53
// per bin. An empty store writes nothing.
func encodeStore(b *[]byte, st *binStore, t enc.FlagType, dense bool) {
	lo, hi, ok := st.span()
	if !ok {
		return
	}
	count := func(i int) float64 { return float64(st.at(i - st.offset)) }
	if dense {
		enc.EncodeFlag(b, enc.NewFlag(t, enc.BinEncodingContiguousCounts))
		enc.EncodeUvarint64(b, uint64(hi-lo)+1)
		enc.EncodeVarint64(b, int64(lo))
		enc.EncodeVarint64(b, 1)
		for i := lo; i <= hi; i++ {
			enc.EncodeVarfloat64(b, count(i))
		}
		return
	}
	enc.EncodeFlag(b, enc.NewFlag(t, enc.BinEncodingIndexDeltasAndCounts))
	var nonEmpty uint64
	for i := lo; i <= hi; i++ {
		if count(i) != 0 {
			nonEmpty++
		}
	}
	enc.EncodeUvarint64(b, nonEmpty)
	prev := 0
	for i := lo; i <= hi; i++ {
		if c := count(i); c != 0 {
			enc.EncodeVarint64(b, int64(i-prev))
			enc.EncodeVarfloat64(b, c)
			prev = i
		}
	}
}

// UnmarshalBinary replaces s with the sketch encoded by MarshalBinary. On
// error (ErrMalformed, ErrUnsupportedVersion, ErrInvalidAccuracy, all wrapped
// with detail) s is left unchanged. It never panics on arbitrary input; its
// memory is bounded by the input length and the bin limit of the encoded
// accuracy (MaxBins per sign at 1%, up to about 0.8 MiB per sign at
// MinRelativeAccuracy, twice that with counts above 2^32-1).
func (s *Sketch) UnmarshalBinary(data []byte) error {
	if len(data) < len(binaryMagic)+1 || !bytes.Equal(data[:4], binaryMagic[:]) {
		return fmt.Errorf("%w: missing %q header", ErrMalformed, binaryMagic[:])
	}
	if v := data[4]; v != EncodingVersion {
		return fmt.Errorf("%w: binary version %d", ErrUnsupportedVersion, v)
	}
	r := data[5:]
	acc, ok := takeFloat(&r)
	if !ok {
		return fmt.Errorf("%w: truncated accuracy", ErrMalformed)
	}
	if !validAccuracy(acc) {
		return fmt.Errorf("%w: %v", ErrInvalidAccuracy, acc)
	}
	var p parts
	p.accuracy = acc
	count, n := binary.Uvarint(r)
	if n <= 0 || count > math.MaxInt64 {
		return fmt.Errorf("%w: bad count", ErrMalformed)
	}
	r = r[n:]
	dropped, n := binary.Uvarint(r)
	if n <= 0 || dropped > math.MaxInt64 {
		return fmt.Errorf("%w: bad dropped count", ErrMalformed)
	}
	r = r[n:]
	p.count, p.dropped = int64(count), int64(dropped)
	for _, f := range []*float64{&p.sum, &p.min, &p.max} {
		if *f, ok = takeFloat(&r); !ok {
			return fmt.Errorf("%w: truncated summary", ErrMalformed)
		}
	}
	p.sum = canonicalNaN(p.sum)
	var err error
	if p.zero, p.pos, p.neg, err = decodeBins(r); err != nil {
		return err
	}
	ns, err := p.build()
	if err != nil {
		return err
	}
	*s = *ns
	return nil
}

// canonicalNaN returns math.NaN() for every NaN and f otherwise. A Sum that
// overflowed to NaN may carry any NaN bit pattern (x86 makes Inf-Inf
// 0xfff8000000000000; a decoded one carries the encoder's); the JSON
// encoding cannot keep it, so the binary one writes and reads them all as
// one NaN, and a sketch encodes the same after either round trip.
func canonicalNaN(f float64) float64 {
	if f != f {
		return math.NaN()
	}
	return f
}

func takeFloat(r *[]byte) (float64, bool) {
	if len(*r) < 8 {
		return 0, false
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(*r))
	*r = (*r)[8:]
	return f, true
}

type bin struct {
	index int
	count float64
}

// decodeBins decodes the bin section of MarshalBinary: the DDSketch binary
// encoding (see github.com/DataDog/sketches-go/ddsketch/encoding) without an
// index mapping. Unlike the library's own decoder, which ignores errors inside
// a store, it rejects anything it does not fully understand. Bins are
// returned sorted by index, repeated indexes summed.
func decodeBins(b []byte) (zero float64, pos, neg []bin, err error) {
	var sides [2][]bin
	fail := func(what string, e error) (float64, []bin, []bin, error) {
		return 0, nil, nil, fmt.Errorf("%w: bins: %s: %v", ErrMalformed, what, e)
	}
	for len(b) > 0 {
		flag, err := enc.DecodeFlag(&b)
		if err != nil {
			return fail("flag", err)
		}
		if flag == enc.FlagZeroCountVarFloat {
			z, err := enc.DecodeVarfloat64(&b)
			if err != nil {
				return fail("zero count", err)
			}
			zero += z
			continue
		}
		var side *[]bin
		switch flag.Type() {
		case enc.FlagTypePositiveStore:
			side = &sides[0]
		case enc.FlagTypeNegativeStore:
			side = &sides[1]
		default:
			return fail("flag", fmt.Errorf("unexpected flag %#x", flag))
		}
		if err := decodeStore(&b, flag.SubFlag(), side); err != nil {
			return fail("store", err)
		}
	}
	return zero, normalizeBins(sides[0]), normalizeBins(sides[1]), nil
}

var errIndexRange = errors.New("bin index out of range")

func decodeStore(b *[]byte, mode enc.SubFlag, side *[]bin) error {
	n, err := enc.DecodeUvarint64(b)
	if err != nil {
		return err
	}
	add := func(index int64, count float64) error {
		if index < math.MinInt32 || index > math.MaxInt32 {
			return errIndexRange
		}
		if count != 0 {
			*side = append(*side, bin{int(index), count})
		}
		return nil
	}
	switch mode {
	case enc.BinEncodingIndexDeltasAndCounts, enc.BinEncodingIndexDeltas:
		index := int64(0)
		for range n { // each bin takes at least one byte: EOF ends a bogus n
			delta, err := enc.DecodeVarint64(b)
			if err != nil {
				return err
			}
			count := 1.0
			if mode == enc.BinEncodingIndexDeltasAndCounts {
				if count, err = enc.DecodeVarfloat64(b); err != nil {
					return err
				}
			}
			index += delta
			if err := add(index, count); err != nil {
				return err
			}
		}
	case enc.BinEncodingContiguousCounts:
		index, err := enc.DecodeVarint64(b)
		if err != nil {
			return err
		}
		delta, err := enc.DecodeVarint64(b)
		if err != nil {
			return err
		}
		if delta < -math.MaxInt32 || delta > math.MaxInt32 {
			return errIndexRange
		}
		for i := range n {
			count, err := enc.DecodeVarfloat64(b)
			if err != nil {
				return err
			}
			if i > 0 {
				index += delta
			}
			if err := add(index, count); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unknown bin encoding %#x", mode)
	}
	return nil
}

// normalizeBins sorts bins by index (our own encoder writes them sorted)
// and sums repeated indexes.
func normalizeBins(bins []bin) []bin {
	byIndex := func(a, b bin) int { return cmp.Compare(a.index, b.index) }
	if !slices.IsSortedFunc(bins, byIndex) {
		slices.SortStableFunc(bins, byIndex)
	}
	out := bins[:0]
	for _, b := range bins {
		if n := len(out); n > 0 && out[n-1].index == b.index {
			out[n-1].count += b.count
		} else {
			out = append(out, b)
		}
	}
	return out
}

// parts is a decoded, not yet validated sketch.
type parts struct {
	accuracy       float64
	count, dropped int64
	sum, min, max  float64
	zero           float64
	pos, neg       []bin
}

func validCount(c float64) bool {
	return c > 0 && c <= 1<<53 && c == math.Trunc(c)
}

// build validates p and turns it into a Sketch.
func (p *parts) build() (*Sketch, error) {
	if !validAccuracy(p.accuracy) {
		return nil, fmt.Errorf("%w: %v", ErrInvalidAccuracy, p.accuracy)
	}
	if p.count < 0 || p.dropped < 0 {
		return nil, fmt.Errorf("%w: negative count", ErrMalformed)
	}
	s := &Sketch{}
	s.init(p.accuracy)
	lo, hi := s.m.Index(s.minIdx), s.m.Index(s.maxIdx)
	var total uint64 // each count is at most 2^53 and there are at most len(input) of them
	if p.zero != 0 {
		if !validCount(p.zero) {
			return nil, fmt.Errorf("%w: zero count %v", ErrMalformed, p.zero)
		}
		total += uint64(p.zero)
	}
	for _, side := range [2][]bin{p.pos, p.neg} {
		for i, b := range side {
			if !validCount(b.count) || b.index < lo || b.index > hi || (i > 0 && b.index <= side[i-1].index) {
				return nil, fmt.Errorf("%w: bin %d with count %v", ErrMalformed, b.index, b.count)
			}
			if total += uint64(b.count); total > math.MaxInt64 {
				return nil, fmt.Errorf("%w: bins hold more than 2^63-1 values", ErrMalformed)
			}
		}
	}
	if total != uint64(p.count) {
		return nil, fmt.Errorf("%w: bins hold %d values, count says %d", ErrMalformed, total, p.count)
	}
	if p.count == 0 {
		if p.sum != 0 || p.min != 0 || p.max != 0 {
			return nil, fmt.Errorf("%w: empty sketch with non-zero sum, min or max", ErrMalformed)
		}
		s.dropped = p.dropped
		return s, nil
	}
	if !isFinite(p.min) || !isFinite(p.max) || p.min > p.max {
		return nil, fmt.Errorf("%w: min %v, max %v", ErrMalformed, p.min, p.max)
	}
	// Min and max must agree with the bins: the largest magnitude of each sign
	// sits in that sign's highest bin (collapsing only ever folds the lowest).
	hasNeg, hasPos := len(p.neg) > 0, len(p.pos) > 0
	if hasNeg != (p.min < -s.minIdx) || hasPos != (p.max > s.minIdx) ||
		(hasNeg && p.neg[len(p.neg)-1].index != s.m.Index(-p.min)) ||
		(hasPos && p.pos[len(p.pos)-1].index != s.m.Index(p.max)) ||
		(p.zero > 0 && (p.min > s.minIdx || p.max < -s.minIdx)) {
		return nil, fmt.Errorf("%w: min %v and max %v disagree with the bins", ErrMalformed, p.min, p.max)
	}
	for _, side := range []struct {
		st   *binStore
		bins []bin
	}{{&s.pos, p.pos}, {&s.neg, p.neg}} {
		if n := len(side.bins); n > 0 {
			// Reserve the whole span first: one allocation, folded as Add
			// would fold it if it spans more than the bin limit.
			side.st.reserve(side.bins[0].index, side.bins[n-1].index, s.limit, false)
			for _, b := range side.bins {
				side.st.add(b.index, uint64(b.count), s.limit)
			}
		}
	}
	s.zero = uint64(p.zero)
	s.count, s.dropped = p.count, p.dropped
	s.sum, s.min, s.max = p.sum, p.min, p.max
	return s, nil
}

func isFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// jsonSketch is the JSON encoding, version 1.
type jsonSketch struct {
	Version          int        `json:"version"`
	Mapping          string     `json:"mapping"`
	RelativeAccuracy float64    `json:"relative_accuracy"`
	Count            int64      `json:"count"`
	Dropped          int64      `json:"dropped"`
	Sum              jsonFloat  `json:"sum"`
	Min              jsonFloat  `json:"min"`
	Max              jsonFloat  `json:"max"`
	ZeroCount        int64      `json:"zero_count"`
	Positive         [][2]int64 `json:"positive"`
	Negative         [][2]int64 `json:"negative"`
}

// MarshalJSON encodes s as a self-describing JSON object, version 1:
//
//	{"version":1,"mapping":"ddsketch-cubic","relative_accuracy":0.01,
//	 "count":3,"dropped":0,"sum":0.6000000000000001,"min":0.1,"max":0.3,
//	 "zero_count":0,"positive":[[-117,1],[-82,1],[-61,1]],"negative":[]}
//
// positive and negative list [bin index, count] pairs in increasing index
// order; the bin of a value v is the Index of |v| in sketches-go's
// mapping.NewCubicallyInterpolatedMapping(relative_accuracy), about
// log2(|v|)*35 at 1%. zero_count counts the zero bucket. sum, min and max are
// JSON numbers that round-trip exactly; a sum that overflowed float64 is
// written as the string "+Inf", "-Inf" or "NaN".
func (s *Sketch) MarshalJSON() ([]byte, error) {
	j := jsonSketch{
		Version:          EncodingVersion,
		Mapping:          jsonMapping,
		RelativeAccuracy: s.RelativeAccuracy(),
		Count:            s.count,
		Dropped:          s.dropped,
		Sum:              jsonFloat(s.sum),
		Min:              jsonFloat(s.min),
		Max:              jsonFloat(s.max),
		ZeroCount:        int64(s.zero),
		Positive:         [][2]int64{},
		Negative:         [][2]int64{},
	}
	s.pos.forEach(func(i int, c uint64) { j.Positive = append(j.Positive, [2]int64{int64(i), int64(c)}) })
	s.neg.forEach(func(i int, c uint64) { j.Negative = append(j.Negative, [2]int64{int64(i), int64(c)}) })
	return json.Marshal(j)
}

// UnmarshalJSON replaces s with the sketch encoded by MarshalJSON. On error
// (ErrMalformed, ErrUnsupportedVersion, ErrInvalidAccuracy, all wrapped with
// detail) s is left unchanged. It never panics on arbitrary input; memory is
// bounded as for UnmarshalBinary.
func (s *Sketch) UnmarshalJSON(data []byte) error {
	var j jsonSketch
	if err := json.Unmarshal(data, &j); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if j.Version != EncodingVersion {
		return fmt.Errorf("%w: JSON version %d", ErrUnsupportedVersion, j.Version)
	}
	if j.Mapping != jsonMapping {
		return fmt.Errorf("%w: mapping %q", ErrMalformed, j.Mapping)
	}
	if j.ZeroCount < 0 {
		return fmt.Errorf("%w: zero count %d", ErrMalformed, j.ZeroCount)
	}
	p := parts{
		accuracy: j.RelativeAccuracy,
		count:    j.Count,
		dropped:  j.Dropped,
		sum:      float64(j.Sum),
		min:      float64(j.Min),
		max:      float64(j.Max),
		zero:     float64(j.ZeroCount),
	}
	var err error
	if p.pos, err = jsonBins(j.Positive); err != nil {
		return err
	}
	if p.neg, err = jsonBins(j.Negative); err != nil {
		return err
	}
	ns, err := p.build()
	if err != nil {
		return err
	}
	*s = *ns
	return nil
}

func jsonBins(in [][2]int64) ([]bin, error) {
	out := make([]bin, 0, len(in))
	for _, b := range in {
		if b[0] < math.MinInt32 || b[0] > math.MaxInt32 || b[1] <= 0 || b[1] > 1<<53 {
			return nil, fmt.Errorf("%w: bin [%d,%d]", ErrMalformed, b[0], b[1])
		}
		out = append(out, bin{int(b[0]), float64(b[1])})
	}
	return out, nil
}

// jsonFloat is a float64 that encodes non-finite values as strings.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"NaN"`:
		*f = jsonFloat(math.NaN())
		return nil
	case `"+Inf"`:
		*f = jsonFloat(math.Inf(1))
		return nil
	case `"-Inf"`:
		*f = jsonFloat(math.Inf(-1))
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = jsonFloat(v)
	return nil
}
