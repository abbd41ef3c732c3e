//go:build race

package main

// raceEnabled: the race detector slows the instrumented client several
// times, so timing comparisons mean nothing under it.
const raceEnabled = true
