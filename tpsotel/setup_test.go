package tpsotel_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsmetertest"
	"github.com/tpsmeter/tpsmeter/tpsotel"
)

// refusingProvider hands out meters that refuse every histogram, returning
// no instrument at all, or a working one together with an error (as the
// SDK does for a questionable definition).
type refusingProvider struct {
	noop.MeterProvider
	withInstrument bool
}

func (p refusingProvider) Meter(string, ...metric.MeterOption) metric.Meter {
	return refusingMeter{withInstrument: p.withInstrument}
}

type refusingMeter struct {
	noop.Meter
	withInstrument bool
}

var errRefused = errors.New("refused by the test provider")

func (m refusingMeter) Float64Histogram(string, ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	if m.withInstrument {
		return noop.Float64Histogram{}, errRefused
	}
	return nil, errRefused
}

func (m refusingMeter) Int64Histogram(string, ...metric.Int64HistogramOption) (metric.Int64Histogram, error) {
	if m.withInstrument {
		return noop.Int64Histogram{}, errRefused
	}
	return nil, errRefused
}

type errorRecorder struct {
	mu   sync.Mutex
	errs []error
}

func (e *errorRecorder) Handle(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errs = append(e.errs, err)
}

func (e *errorRecorder) all() []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]error(nil), e.errs...)
}

// swapErrorHandler installs a recording global error handler for the test.
func swapErrorHandler(t *testing.T) *errorRecorder {
	t.Helper()
	prev := otel.GetErrorHandler()
	rec := &errorRecorder{}
	otel.SetErrorHandler(rec)
	t.Cleanup(func() { otel.SetErrorHandler(prev) })
	return rec
}

// TestSetupErrors: refused instruments give an error wrapping ErrSetup,
// also sent to otel.Handle; the Telemetry still works and never panics, in
// both modes.
func TestSetupErrors(t *testing.T) {
	for _, mode := range telemetryModes {
		for _, withInstrument := range []bool{false, true} {
			t.Run(mode.name+"/"+map[bool]string{false: "no instrument", true: "instrument and error"}[withInstrument], func(t *testing.T) {
				setupErrors(t, mode.producer, withInstrument)
			})
		}
	}
}

func setupErrors(t *testing.T, producer, withInstrument bool) {
	handled := swapErrorHandler(t)
	opts := []tpsotel.Option{tpsotel.WithMeterProvider(refusingProvider{withInstrument: withInstrument}), tpsotel.WithTracing(true), tpsotel.WithCountedTokenUsage(true)}
	if producer {
		opts = append(opts, tpsotel.WithChunkProducer(tpsotel.NewChunkProducer()))
	}
	tel, err := tpsotel.New(opts...)
	if !errors.Is(err, tpsotel.ErrSetup) || !errors.Is(err, errRefused) {
		t.Fatalf("New error = %v, want ErrSetup wrapping the provider's error", err)
	}
	if tel == nil {
		t.Fatal("New returned a nil Telemetry with its error")
	}
	got := handled.all()
	if len(got) != 1 || !errors.Is(got[0], tpsotel.ErrSetup) {
		t.Fatalf("otel.Handle got %v, want the setup error once", got)
	}
	clock := tpsmetertest.NewClock(time.Unix(0, 0))
	panics := 0
	m := tpsmeter.New(tpsmeter.WithClock(clock), tpsmeter.WithTokenizer(wordTokenizer), tpsmeter.WithHooks(tel.Hooks()),
		tpsmeter.WithPanicHandler(func(any) { panics++ }))
	_, rec := m.Start(context.Background(), testInfo)
	for _, s := range completeSteps {
		clock.Advance(s.after)
		rec.Chunk(clock.Now())
		rec.Content(0, s.text)
		rec.EndChunk()
	}
	rec.End(clock.Now(), errors.New("boom"))
	if m.HookPanics() != 0 || panics != 0 {
		t.Fatalf("hooks panicked %d times with refused instruments", m.HookPanics())
	}
}

// TestMeterOption: the one-line form installs working hooks, and sends a
// setup error to otel.Handle instead of dropping or panicking.
func TestMeterOption(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	m := tpsmeter.New(tpsotel.MeterOption(tpsotel.WithMeterProvider(mp)), tpsmeter.WithTokenizer(wordTokenizer))
	_, rec := m.Start(context.Background(), testInfo)
	rec.Chunk(rec.Now())
	rec.Content(0, "hi")
	rec.End(rec.Now(), nil)
	if n := len(durationPoints(collect(t, reader))); n != 1 {
		t.Fatalf("MeterOption: %d duration points, want 1", n)
	}

	handled := swapErrorHandler(t)
	_ = tpsmeter.New(tpsotel.MeterOption(tpsotel.WithMeterProvider(refusingProvider{})))
	if got := handled.all(); len(got) != 1 || !errors.Is(got[0], tpsotel.ErrSetup) {
		t.Fatalf("MeterOption setup error reached otel.Handle as %v", got)
	}
}

// TestGlobalMeterProviderByDefault: without WithMeterProvider (or with a
// nil one) New uses otel.GetMeterProvider().
func TestGlobalMeterProviderByDefault(t *testing.T) {
	prev := otel.GetMeterProvider()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	otel.SetMeterProvider(mp)
	t.Cleanup(func() {
		otel.SetMeterProvider(prev)
		_ = mp.Shutdown(context.Background())
	})
	for _, opts := range [][]tpsotel.Option{nil, {tpsotel.WithMeterProvider(nil), nil}} {
		tel, err := tpsotel.New(opts...)
		if err != nil {
			t.Fatal(err)
		}
		m := tpsmeter.New(tpsmeter.WithHooks(tel.Hooks()), tpsmeter.WithTokenizer(wordTokenizer))
		_, rec := m.Start(context.Background(), testInfo)
		rec.End(rec.Now(), nil)
	}
	var n uint64
	for _, p := range durationPoints(collect(t, reader)) {
		n += p.Count
	}
	if n != 2 {
		t.Fatalf("global provider saw %d requests, want 2", n)
	}
}
