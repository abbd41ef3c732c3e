package tpsotel

// ScopeName is the instrumentation scope of every instrument this package
// creates: the meter is named by the package's import path, as otelhttp
// names its own.
const ScopeName = "github.com/tpsmeter/tpsmeter/tpsotel"

// Version is the version of the tpsmeter library reported as the
// instrumentation scope's version (metric.WithInstrumentationVersion).
const Version = "0.1.0"
