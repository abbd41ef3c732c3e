package reliability_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"

	promclient "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsotel"
)

// TestModelCardinalityCap: 10,000 requests, each naming a different model
// (and answered by a differently named one), from 8 goroutines, through one
// Meter exporting to Prometheus through package tpsotel: the meter keeps at
// most 64+1 aggregate groups and the exposition at most 100+1 model label
// values, while every request is still counted.
func TestModelCardinalityCap(t *testing.T) {
	const n, workers = 10_000, 8
	reg := promclient.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		t.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	tel, err := tpsotel.New(tpsotel.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	m := tpsmeter.New(tpsmeter.WithHooks(tel.Hooks()))
	run := func(from, to int) {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := from + w; i < to; i += workers {
					_, rec := m.Start(context.Background(), tpsmeter.RequestInfo{Model: fmt.Sprintf("model-%05d", i), Provider: "openai", Operation: "chat"})
					rec.Chunk(rec.Now())
					rec.SetResponseModel(fmt.Sprintf("served-%05d", i))
					rec.Content(0, "Hello")
					rec.FinishReason(0, "stop")
					rec.EndChunk()
					rec.End(rec.Now(), nil)
				}
			})
		}
		wg.Wait()
	}
	scrape := func() string {
		rw := httptest.NewRecorder()
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rw, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		return rw.Body.String()
	}
	seriesRE := regexp.MustCompile(`(?m)^[a-z_]+(?:_bucket|_count|_sum)?\{`)
	run(0, n/10)
	seriesTenth := len(seriesRE.FindAllString(scrape(), -1))
	run(n/10, n)

	groups := m.Snapshot()
	var reqs int64
	other := false
	for _, g := range groups {
		reqs += g.Requests
		other = other || g.Key.Model == "other"
	}
	if len(groups) > 64+1 || !other || reqs != n {
		t.Errorf("meter: %d groups (cap 64 + other, other present: %v), %d requests counted of %d", len(groups), other, reqs, n)
	}

	text := scrape()
	models := map[string]bool{}
	for _, mt := range regexp.MustCompile(`gen_ai_(?:request|response)_model="([^"]*)"`).FindAllStringSubmatch(text, -1) {
		models[mt[1]] = true
	}
	series := len(seriesRE.FindAllString(text, -1))
	if series != seriesTenth {
		t.Errorf("%d series after %d distinct models, %d after %d: the exposition still grows past the cap", seriesTenth, n/10, series, n)
	}
	if len(models) > tpsotel.DefaultMaxModels+1 || !models[tpsotel.OverflowModel] || len(models) < 2 {
		t.Errorf("Prometheus exposition: %d distinct model label values (cap %d + %q)", len(models), tpsotel.DefaultMaxModels, tpsotel.OverflowModel)
	}
	counted := regexp.MustCompile(`(?m)^gen_ai_client_operation_duration_seconds_count\{[^}]*\} (\d+)`).FindAllStringSubmatch(text, -1)
	var total int
	for _, c := range counted {
		var v int
		fmt.Sscan(c[1], &v)
		total += v
	}
	if total != n {
		t.Errorf("the exposition counts %d requests in gen_ai.client.operation.duration, want %d", total, n)
	}
	t.Logf("%d distinct models: %d meter groups, %d model label values, %d series lines, %d bytes of exposition",
		n, len(groups), len(models), series, len(text))
}
