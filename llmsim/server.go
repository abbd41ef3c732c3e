package llmsim

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrAlreadyStarted is returned by [Server.Start] on a server that is already
// listening.
var ErrAlreadyStarted = errors.New("llmsim: server already started")

// ErrClosed is returned by [Server.Start] on a server that was shut down.
var ErrClosed = errors.New("llmsim: server closed")

// DefaultMaxBodyBytes is the request body limit when Config.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 1 << 20

// DefaultModels are the models GET /v1/models lists when Config.Models is
// empty (any model name is then accepted).
var DefaultModels = []string{"gpt-4o-mini", "gpt-4o", "gpt-4.1-nano", "gpt-3.5-turbo", "o3-mini", "llmsim-1"}

// Config configures a Server. The zero value is a working server: the
// instant profile (no delays), seed 0, no authentication, a 1 MiB body
// limit, any model name accepted, the real clock, listening (with Start) on
// 127.0.0.1 with a free port.
type Config struct {
	// Profile is the timing and failure behaviour. New clamps out-of-range
	// fields into range; Start rejects them (see Profile.Validate).
	Profile Profile
	// Seed seeds every random choice: the text (with a hash of the request
	// body) and the timing and faults (with the request's index).
	Seed int64
	// APIKey, if not empty, is required as "Authorization: Bearer <APIKey>";
	// requests without it get 401.
	APIKey string
	// MaxBodyBytes limits request bodies; larger ones get 413. Zero means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Models, if not empty, are the only model names accepted (others get
	// 404 model_not_found) and those listed by GET /v1/models. Empty means
	// DefaultModels are listed and any name is accepted.
	Models []string
	// Clock is the source of time and sleep. Nil means the real clock.
	Clock Clock
	// Addr is the address Start listens on. Empty means "127.0.0.1:0".
	Addr string
	// PromptTokens, if set, counts the prompt's tokens for usage (it receives
	// the model and the prompt text). Nil means an estimate (4 bytes per
	// token plus 3 per message and 3 for the reply); completion tokens are
	// always exact.
	PromptTokens func(model, prompt string) int
	// OnStream, if set, is called once per generation answered with 200, on
	// the handler's goroutine, after the last byte was written (or the
	// connection was cut). It must not block for long.
	OnStream func(StreamReport)
	// ErrorLog receives errors of the HTTP server started by Start. Nil means
	// they are discarded.
	ErrorLog func(msg string)
}

// Server is the simulated OpenAI-compatible server. It implements
// http.Handler, so it can be mounted in any mux or httptest.Server, or it can
// listen by itself with Start. All methods are safe for concurrent use.
type Server struct {
	cfg     Config
	profile Profile
	clock   Clock
	maxBody int64
	models  map[string]bool

	seq      atomic.Uint64
	st       counters
	lateness latencyHist

	// admission: slots, queue, cold starts
	amu          sync.Mutex
	busy         int
	waiters      []*waiter
	warmed       bool
	idleSince    time.Time
	loadingUntil time.Time

	// lifecycle
	baseCtx    context.Context
	cancelBase context.CancelFunc
	hmu        sync.Mutex
	closed     bool
	handlers   sync.WaitGroup
	httpSrv    *http.Server
	listener   net.Listener
	serveDone  chan struct{}
}

// New returns a Server for cfg. It does not listen: use it as an
// http.Handler, or call Start.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg, profile: cfg.Profile.normalized(), clock: cfg.Clock, maxBody: cfg.MaxBodyBytes}
	if s.clock == nil {
		s.clock = realClock{fine: func() bool { return s.st.generating.Load() <= fineMaxActive }}
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if len(cfg.Models) > 0 {
		s.models = make(map[string]bool, len(cfg.Models))
		for _, m := range cfg.Models {
			s.models[m] = true
		}
	}
	s.baseCtx, s.cancelBase = context.WithCancel(context.Background())
	s.idleSince = s.clock.Now()
	return s
}

// Start validates cfg.Profile, creates a Server and starts it listening on
// cfg.Addr (default 127.0.0.1 with a free port). Stop it with Shutdown or
// Close.
func Start(cfg Config) (*Server, error) {
	if err := cfg.Profile.Validate(); err != nil {
		return nil, err
	}
	s := New(cfg)
	if err := s.Start(); err != nil {
		return nil, err
	}
	return s, nil
}

// Start makes s listen on its Config.Addr (default 127.0.0.1:0) and serve in
// a background goroutine until Shutdown or Close.
func (s *Server) Start() error {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.httpSrv != nil {
		return ErrAlreadyStarted
	}
	addr := s.cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s.listener = ln
	s.httpSrv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return s.baseCtx },
		ErrorLog:          newErrorLog(s.cfg.ErrorLog),
	}
	s.serveDone = make(chan struct{})
	go func() {
		defer close(s.serveDone)
		_ = s.httpSrv.Serve(ln)
	}()
	return nil
}

// Addr returns the address s listens on, or "" if it was not started.
func (s *Server) Addr() string {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if s.listener == nil {
		return ""
	}
	return s.listener.Addr().String()
}

// URL returns the base URL of the API, "http://HOST:PORT/v1", usable with
// openai-go's option.WithBaseURL; "" if s was not started.
func (s *Server) URL() string {
	a := s.Addr()
	if a == "" {
		return ""
	}
	return "http://" + a + "/v1"
}

// Shutdown stops the server gracefully: it stops accepting requests (new
// ones get 503), lets in-flight streams finish, and returns when all handlers
// have returned. If ctx ends first, in-flight answers are cut (their
// connections are closed without ending the response, so a truncated answer
// never looks complete), queued requests get 503, and Shutdown returns
// ctx.Err() once every handler has returned. It works for a server used only
// as an http.Handler too.
func (s *Server) Shutdown(ctx context.Context) error {
	s.hmu.Lock()
	s.closed = true
	srv := s.httpSrv
	s.hmu.Unlock()

	var err error
	if srv != nil {
		err = srv.Shutdown(ctx)
	}
	done := make(chan struct{})
	go func() {
		s.handlers.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.cancelBase()
	if srv != nil {
		_ = srv.Close()
		<-s.serveDone
	}
	<-done
	return err
}

// Close stops the server at once: in-flight streams are cancelled and
// connections closed. It returns when every handler has returned.
func (s *Server) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// Lateness returns how late the server emitted its scheduled events so far.
func (s *Server) Lateness() LatenessStats { return s.lateness.snapshot() }

// ResetLateness forgets the lateness recorded so far (for example after a
// warm-up).
func (s *Server) ResetLateness() { s.lateness.reset() }

// Stats returns a snapshot of the server's counters.
func (s *Server) Stats() Stats { return s.st.snapshot() }

// Profile returns the (normalized) profile the server runs.
func (s *Server) Profile() Profile { return s.profile }

// ServeHTTP routes a request: POST /v1/chat/completions, POST /v1/responses,
// GET /v1/models, GET /v1/models/{id}, GET /llmsim/stats. The /v1 prefix is
// optional. Every error is answered in OpenAI's JSON shape.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.st.requests.Add(1)
	s.hmu.Lock()
	if s.closed {
		s.hmu.Unlock()
		writeAPIError(w, shuttingDown())
		return
	}
	s.handlers.Add(1)
	s.hmu.Unlock()
	defer s.handlers.Done()

	if e := s.authenticate(r); e != nil {
		s.st.unauthorized.Add(1)
		writeAPIError(w, e)
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	if strings.HasPrefix(path, "/v1/") {
		path = path[len("/v1"):]
	}
	switch {
	case path == "/chat/completions" && r.Method == http.MethodPost:
		s.serveGeneration(w, r, false)
	case path == "/responses" && r.Method == http.MethodPost:
		s.serveGeneration(w, r, true)
	case path == "/models" && r.Method == http.MethodGet:
		s.serveModels(w)
	case strings.HasPrefix(path, "/models/") && r.Method == http.MethodGet:
		s.serveModel(w, strings.TrimPrefix(path, "/models/"))
	case path == "/llmsim/stats" && r.Method == http.MethodGet:
		s.serveStats(w)
	default:
		s.st.badRequests.Add(1)
		writeAPIError(w, &apiError{status: http.StatusNotFound, typ: typeInvalidRequest,
			message: "Invalid URL (" + r.Method + " " + r.URL.Path + ")"})
	}
}

func shuttingDown() *apiError {
	return &apiError{status: http.StatusServiceUnavailable, typ: typeServer, message: "The server is shutting down."}
}

func (s *Server) authenticate(r *http.Request) *apiError {
	if s.cfg.APIKey == "" {
		return nil
	}
	h := r.Header.Get("Authorization")
	key, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || key == "" {
		return &apiError{status: http.StatusUnauthorized, typ: typeInvalidRequest,
			message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."}
	}
	if subtle.ConstantTimeCompare([]byte(key), []byte(s.cfg.APIKey)) != 1 {
		return &apiError{status: http.StatusUnauthorized, typ: typeInvalidRequest, code: "invalid_api_key",
			message: "Incorrect API key provided."}
	}
	return nil
}

// readBody reads the body within the limit.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &apiError{status: http.StatusRequestEntityTooLarge, typ: typeInvalidRequest, code: "request_too_large",
				message: "Request body too large: the limit is " + itoa64(s.maxBody) + " bytes."}
		}
		return nil, badRequest("", "", "Could not read the request body: "+err.Error())
	}
	return body, nil
}

func (s *Server) modelList() []string {
	if len(s.cfg.Models) > 0 {
		return s.cfg.Models
	}
	return DefaultModels
}

type modelJSON struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// modelsCreated is the fixed "created" time of every listed model
// (2024-01-01T00:00:00Z), so the listing is deterministic.
const modelsCreated = 1704067200

func (s *Server) serveModels(w http.ResponseWriter) {
	list := struct {
		Object string      `json:"object"`
		Data   []modelJSON `json:"data"`
	}{Object: "list"}
	for _, m := range s.modelList() {
		list.Data = append(list.Data, modelJSON{ID: m, Object: "model", Created: modelsCreated, OwnedBy: "llmsim"})
	}
	writeJSON(w, list)
}

func (s *Server) serveModel(w http.ResponseWriter, id string) {
	for _, m := range s.modelList() {
		if m == id {
			writeJSON(w, modelJSON{ID: m, Object: "model", Created: modelsCreated, OwnedBy: "llmsim"})
			return
		}
	}
	s.st.badRequests.Add(1)
	writeAPIError(w, modelNotFound(id))
}

func modelNotFound(id string) *apiError {
	return &apiError{status: http.StatusNotFound, typ: typeInvalidRequest, param: "model", code: "model_not_found",
		message: "The model `" + id + "` does not exist or you do not have access to it."}
}

func (s *Server) serveStats(w http.ResponseWriter) {
	l := s.Lateness()
	writeJSON(w, struct {
		Profile  Profile `json:"profile"`
		Stats    Stats   `json:"stats"`
		Lateness struct {
			Count                uint64
			MeanUs, P50Us, P90Us float64
			P99Us, MaxUs         float64
		} `json:"lateness"`
	}{Profile: s.profile, Stats: s.Stats(), Lateness: struct {
		Count                uint64
		MeanUs, P50Us, P90Us float64
		P99Us, MaxUs         float64
	}{l.Count, us(l.Mean), us(l.P50), us(l.P90), us(l.P99), us(l.Max)}})
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeAPIError(w, serverError())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}

// mix64 is splitmix64's finalizer: a good bijective mix of a 64-bit value.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func bodyHash(b []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}
