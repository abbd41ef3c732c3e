package tpsmeter

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
)

var (
	// ErrTruncated marks a stream that ended (EOF) without its terminal
	// event: no finish reason, no [DONE], no response.completed. The wrapped
	// stream's own Err stays what the client said (often nil); the Result
	// records ErrTruncated.
	ErrTruncated = errors.New("tpsmeter: stream ended without a terminal event")
	// ErrClosedEarly marks a stream that the caller closed, or stopped
	// iterating, before it ended.
	ErrClosedEarly = errors.New("tpsmeter: stream closed before it ended")
	// ErrAlreadyFinished is returned by Recorder methods called after End.
	ErrAlreadyFinished = errors.New("tpsmeter: request already finished")
)

// Error types reported in Result.ErrorType and the error.type attribute.
// They form a small fixed set so that telemetry cardinality stays bounded;
// an ErrorClassifier may add its own short names.
const (
	ErrorTypeCanceled    = "canceled"
	ErrorTypeDeadline    = "deadline_exceeded"
	ErrorTypeTruncated   = "truncated"
	ErrorTypeClosedEarly = "closed_early"
	ErrorTypeConnection  = "connection"
	ErrorTypeOther       = "_OTHER"
)

// ErrorClassifier names an error for Result.ErrorType. It returns "" when it
// does not know the error, to let the built-in rules decide.
type ErrorClassifier func(err error) string

// errorType names err with the request's classifiers. A classifier is user
// code: a panic in it is recovered and counted like a hook's, and the
// built-in rules name the error.
func (r *Recorder) errorType(err error) (name string) {
	defer func() {
		if p := recover(); p != nil {
			r.m.hookPanic(p)
			name = classify(err, nil)
		}
	}()
	return classify(err, r.classifier)
}

// classify names err; extra (may be nil) is consulted first.
func classify(err error, extra ErrorClassifier) string {
	if err == nil {
		return ""
	}
	if extra != nil {
		if s := extra(err); s != "" {
			return s
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		return ErrorTypeCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return ErrorTypeDeadline
	case errors.Is(err, ErrTruncated), errors.Is(err, io.ErrUnexpectedEOF):
		return ErrorTypeTruncated
	case errors.Is(err, ErrClosedEarly):
		return ErrorTypeClosedEarly
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE):
		return ErrorTypeConnection
	}
	var ne net.Error
	if errors.As(err, &ne) {
		if ne.Timeout() {
			return ErrorTypeDeadline
		}
		return ErrorTypeConnection
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return ErrorTypeConnection
	}
	return ErrorTypeOther
}
