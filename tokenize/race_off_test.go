//go:build !race

package tokenize_test

// raceEnabled scales the slowest reference comparisons down under the race
// detector, which makes the (quadratic) reference implementation very slow.
const raceEnabled = false
