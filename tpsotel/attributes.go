package tpsotel

import (
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/tpsmeter/tpsmeter"
)

// Attribute keys of this package's own, under the tpsmeter prefix. The
// GenAI attribute keys come from the semantic conventions (semconv v1.41.0).
const (
	// OutputBucketKey is the output-length bucket of a request
	// (tpsmeter.Result.OutputBucket, set with tpsmeter.WithLengthBuckets),
	// on every metric recorded when a request ends.
	OutputBucketKey = attribute.Key("tpsmeter.output.bucket")
	// TokenBasisKey says how a counted token number was obtained (exact,
	// estimate, custom): it marks the gen_ai.client.token.usage points
	// recorded with WithCountedTokenUsage, which the server did not report.
	TokenBasisKey = attribute.Key("tpsmeter.token.basis")
)

// unknownValue stands for a required attribute (gen_ai.operation.name,
// gen_ai.provider.name) whose value the request did not give, as the
// semantic conventions' "_OTHER" fallback.
const unknownValue = "_OTHER"

// chunkKey identifies the attribute set of the per-chunk metrics: the
// request's description without its Class (Class is not an attribute).
type chunkKey = tpsmeter.RequestInfo

// finishKey identifies the attribute set of the metrics recorded when a
// request ends.
type finishKey struct {
	req           chunkKey
	responseModel string
	bucket        string
	errorType     string
	basis         tpsmeter.Basis
}

// chunkAttrs holds the ready-made record options of the per-chunk metrics
// (SDK path) and, with a ChunkProducer, the attribute set and its points in
// the producer, found on the first value of each metric.
type chunkAttrs struct {
	opts  []metric.RecordOption
	set   attribute.Set
	hists [numChunkMetrics]atomic.Pointer[chunkHist]
}

// hist returns the set's point of metric m in p. The producer's lock is
// taken once per cached set and metric; concurrent first calls store the
// same point (the producer owns the map from sets to points).
func (a *chunkAttrs) hist(p *ChunkProducer, m int) *chunkHist {
	if h := a.hists[m].Load(); h != nil {
		return h
	}
	h := p.hist(m, a.set)
	a.hists[m].Store(h)
	return h
}

// finishAttrs holds the ready-made record options of the metrics recorded
// when a request ends: all of them, and token usage by token type.
type finishAttrs struct {
	all     []metric.RecordOption
	input   []metric.RecordOption
	output  []metric.RecordOption
	counted []metric.RecordOption
}

func recordOpts(kvs ...attribute.KeyValue) []metric.RecordOption {
	return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(kvs...))}
}

// baseAttrs returns the attributes every metric carries, from the request's
// description, with the model name capped.
func (t *Telemetry) baseAttrs(info chunkKey) []attribute.KeyValue {
	op, prov := info.Operation, info.Provider
	if op == "" {
		op = unknownValue
	}
	if prov == "" {
		prov = unknownValue
	}
	kvs := make([]attribute.KeyValue, 0, 10)
	kvs = append(kvs, semconv.GenAIOperationNameKey.String(op), semconv.GenAIProviderNameKey.String(prov))
	if m := t.models.name(info.Model); m != "" {
		kvs = append(kvs, semconv.GenAIRequestModelKey.String(m))
	}
	if info.ServerAddress != "" {
		kvs = append(kvs, semconv.ServerAddressKey.String(info.ServerAddress))
	}
	if info.ServerPort > 0 {
		kvs = append(kvs, semconv.ServerPortKey.Int(info.ServerPort))
	}
	return kvs
}

func (t *Telemetry) buildChunk(k chunkKey) *chunkAttrs {
	set := attribute.NewSet(t.baseAttrs(k)...)
	if t.cfg.producer != nil {
		return &chunkAttrs{set: set}
	}
	return &chunkAttrs{opts: []metric.RecordOption{metric.WithAttributeSet(set)}, set: set}
}

func (t *Telemetry) buildFinish(k finishKey) *finishAttrs {
	kvs := t.baseAttrs(k.req)
	if m := t.models.name(k.responseModel); m != "" {
		kvs = append(kvs, semconv.GenAIResponseModelKey.String(m))
	}
	if k.bucket != "" {
		kvs = append(kvs, OutputBucketKey.String(k.bucket))
	}
	if k.errorType != "" {
		kvs = append(kvs, semconv.ErrorTypeKey.String(k.errorType))
	}
	f := &finishAttrs{all: recordOpts(kvs...)}
	n := len(kvs)
	f.input = recordOpts(append(kvs[:n:n], semconv.GenAITokenTypeInput)...)
	f.output = recordOpts(append(kvs[:n:n], semconv.GenAITokenTypeOutput)...)
	if t.cfg.countedUsage {
		basis := string(k.basis)
		if basis == "" {
			basis = string(tpsmeter.BasisEstimate)
		}
		f.counted = recordOpts(append(kvs[:n:n], semconv.GenAITokenTypeOutput, TokenBasisKey.String(basis))...)
	}
	return f
}

// chunkAttrs returns the cached record options for a chunk of the request.
func (t *Telemetry) chunkAttrs(info tpsmeter.RequestInfo) *chunkAttrs {
	info.Class = ""
	return t.chunkSets.get(info, t.buildChunk)
}

// finishAttrs returns the cached record options for the end of a request.
func (t *Telemetry) finishAttrs(info tpsmeter.RequestInfo, res *tpsmeter.Result) *finishAttrs {
	info.Class = ""
	k := finishKey{req: info, responseModel: res.ResponseModel, bucket: res.OutputBucket, errorType: res.ErrorType, basis: res.TokenBasis}
	return t.finishSets.get(k, t.buildFinish)
}
