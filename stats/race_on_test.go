//go:build race

package stats_test

// raceEnabled is true under the race detector, where the large-sample tests,
// whose results do not depend on scheduling, use smaller samples.
const raceEnabled = true
