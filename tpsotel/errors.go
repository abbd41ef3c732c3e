package tpsotel

import "errors"

// ErrSetup marks an error found while creating the instruments: an
// instrument that the MeterProvider refused. New returns it wrapped (test
// with errors.Is) and also passes it to otel.Handle; the instruments that
// could not be created record nothing, the others work as usual.
var ErrSetup = errors.New("tpsotel: instrument setup failed")
