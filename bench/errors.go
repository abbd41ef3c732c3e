package bench

import (
	"errors"
	"fmt"
)

var (
	// ErrConfig marks an invalid Config (no target, a negative count, an
	// unknown API, ...). Errors returned by NewRunner wrap it.
	ErrConfig = errors.New("bench: invalid configuration")
	// ErrWorkload marks a malformed prompt file or workload. A *LineError
	// names the offending line and wraps it too.
	ErrWorkload = errors.New("bench: invalid workload")
	// ErrUnauthorized means a target answered 401 or 403: the run stopped at
	// once (every further request would fail the same way). Results are
	// marked partial and Results.Aborted says which target and why.
	ErrUnauthorized = errors.New("bench: the endpoint refused the credentials")
	// ErrNotFound means a target answered 404 (a wrong base URL or model
	// name): the run stopped at once, as for ErrUnauthorized.
	ErrNotFound = errors.New("bench: the endpoint does not know the URL or model")
	// ErrNoSuccess means that at least one target completed none of its
	// measured requests (for example an unreachable endpoint): its numbers
	// are only errors.
	ErrNoSuccess = errors.New("bench: no request succeeded")
	// ErrInterrupted means the run's context ended before the run did (for
	// example Ctrl-C): the Results hold what finished and are marked partial.
	ErrInterrupted = errors.New("bench: run interrupted")
	// ErrSchema marks a results file of another schema or version.
	ErrSchema = errors.New("bench: unsupported results schema")
	// ErrIncompatible means results cannot be merged or compared (different
	// length buckets, sketch accuracies or schema versions).
	ErrIncompatible = errors.New("bench: incompatible results")
)

// LineError is a workload error on one line of a prompt file. It matches
// ErrWorkload with errors.Is.
type LineError struct {
	// Name is the file name (or the name given to ParseWorkload).
	Name string
	// Line counts from 1.
	Line int
	// Err says what is wrong.
	Err error
}

func (e *LineError) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("line %d: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.Name, e.Line, e.Err)
}

// Unwrap returns ErrWorkload and the underlying error.
func (e *LineError) Unwrap() []error { return []error{ErrWorkload, e.Err} }
