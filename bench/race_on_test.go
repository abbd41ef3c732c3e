//go:build race

package bench_test

// raceEnabled: the race detector slows the instrumented client several
// times, so client-side timings mean nothing (see skipTimingUnderRace).
const raceEnabled = true
