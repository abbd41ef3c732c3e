package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	promclient "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsopenai"
	"github.com/tpsmeter/tpsmeter/tpsotel"
)

// app is the example application: a meter whose telemetry goes to the
// OpenTelemetry Prometheus exporter, served on /metrics, and an openai-go
// client talking to the simulated upstream.
type app struct {
	Meter       *tpsmeter.Meter
	MetricsAddr string // host:port of the /metrics server

	mp        *sdkmetric.MeterProvider
	metrics   *http.Server
	upstream  *upstream
	transport *http.Transport
	client    openai.Client
}

// newApp wires everything: the Prometheus exporter as the MeterProvider's
// reader, tpsotel's hooks on the meter, /metrics on listen. With
// lowOverhead, the three per-chunk histograms are aggregated by a
// tpsotel.ChunkProducer registered on the exporter (the low-overhead mode);
// without, every metric goes through the SDK's instruments (the default).
func newApp(listen string, lowOverhead bool) (*app, error) {
	reg := promclient.NewRegistry()
	promOpts := []otelprom.Option{otelprom.WithRegisterer(reg)}
	var telOpts []tpsotel.Option
	if lowOverhead {
		// The producer goes on the reader (the exporter) before the
		// MeterProvider exists, and to tpsotel.New after.
		p := tpsotel.NewChunkProducer()
		promOpts = append(promOpts, otelprom.WithProducer(p))
		telOpts = append(telOpts, tpsotel.WithChunkProducer(p))
	}
	exporter, err := otelprom.New(promOpts...)
	if err != nil {
		return nil, fmt.Errorf("prometheus exporter: %w", err)
	}
	res := resource.NewSchemaless(semconv.ServiceName("tpsmeter-example"))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter), sdkmetric.WithResource(res))
	tel, err := tpsotel.New(append(telOpts, tpsotel.WithMeterProvider(mp))...)
	if err != nil {
		_ = mp.Shutdown(context.Background())
		return nil, err
	}
	a := &app{mp: mp, Meter: tpsmeter.New(tpsmeter.WithHooks(tel.Hooks()))}

	ln, err := net.Listen("tcp", listen)
	if err != nil {
		_ = mp.Shutdown(context.Background())
		return nil, fmt.Errorf("metrics listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	a.metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	a.MetricsAddr = ln.Addr().String()
	go func() { _ = a.metrics.Serve(ln) }()

	if a.upstream, err = startUpstream(); err != nil {
		a.Close()
		return nil, fmt.Errorf("simulated upstream: %w", err)
	}
	a.transport = &http.Transport{MaxIdleConnsPerHost: 64}
	a.client = openai.NewClient(
		option.WithBaseURL(a.upstream.URL()),
		option.WithAPIKey("sk-local-simulator"),
		option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: a.transport}),
		option.WithMiddleware(a.Meter.Middleware),
	)
	return a, nil
}

// Run meters n streams, at most concurrency at a time, and returns the
// first error any of them ended with.
func (a *app) Run(ctx context.Context, n, concurrency int) error {
	if concurrency < 1 {
		concurrency = 1
	}
	host, portStr, _ := net.SplitHostPort(a.upstream.ln.Addr().String())
	port, _ := strconv.Atoi(portStr)
	ctx = tpsmeter.WithRequestInfo(ctx, tpsmeter.RequestInfo{ServerAddress: host, ServerPort: port})
	jobs := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for i := range jobs {
				errs <- a.stream(ctx, i)
			}
		})
	}
	for i := range n {
		select {
		case jobs <- i:
		case <-ctx.Done():
		}
	}
	close(jobs)
	wg.Wait()
	close(errs)
	var first error
	for err := range errs {
		if err != nil && first == nil {
			first = err
		}
	}
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// stream meters one chat completion stream.
func (a *app) stream(ctx context.Context, i int) error {
	params := openai.ChatCompletionNewParams{
		Model:         "gpt-4o-mini",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage(fmt.Sprintf("Say something, request %d", i))},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	s := tpsopenai.NewChatStream(ctx, a.Meter, a.client.Chat.Completions.NewStreaming, params)
	for s.Next() {
		_ = s.Current() // an application would render the text here
	}
	err := s.Err()
	_ = s.Close()
	if res, ok := s.Result(); ok && err == nil && res.Err != nil {
		err = res.Err
	}
	return err
}

// Close stops the servers and the MeterProvider.
func (a *app) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	if a.upstream != nil {
		errs = append(errs, a.upstream.Close())
	}
	if a.transport != nil {
		a.transport.CloseIdleConnections()
	}
	errs = append(errs, a.metrics.Shutdown(ctx), a.mp.Shutdown(ctx))
	_ = errors.Join(errs...)
}
