package stats

import "errors"

// ErrIncompatible is returned by Merge when two sketches were built with
// different relative accuracies: their bins do not line up, so merging them
// would silently break the error guarantee. Merge also returns it, wrapped
// with detail, when the two Counts together would pass math.MaxInt64.
var ErrIncompatible = errors.New("stats: sketches have different relative accuracies")

// ErrInvalidAccuracy is returned by NewSketchWithAccuracy, and by the decoders,
// for a relative accuracy outside [MinRelativeAccuracy, MaxRelativeAccuracy].
var ErrInvalidAccuracy = errors.New("stats: relative accuracy out of range")

// ErrMalformed is returned by UnmarshalBinary and UnmarshalJSON for input that
// is not a well-formed, self-consistent encoded sketch (wrong magic, truncated,
// counts that do not add up, non-finite min or max, and so on). Errors wrap it
// with detail; test with errors.Is.
var ErrMalformed = errors.New("stats: malformed sketch encoding")

// ErrUnsupportedVersion is returned by the decoders for an encoding whose
// version number this package does not know (written by a newer release).
var ErrUnsupportedVersion = errors.New("stats: unsupported sketch encoding version")

// ErrInvalidBuckets is returned by NewLengthBuckets for edges that are not
// strictly increasing, or names that are empty, duplicated or of the wrong number.
var ErrInvalidBuckets = errors.New("stats: invalid length buckets")
