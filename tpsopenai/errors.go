package tpsopenai

import (
	"errors"
	"strconv"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// ClassifyError names openai-go's errors for Result.ErrorType: the HTTP
// status code of an *openai.Error ("429", "500"), "stream_error" for an
// error event inside a stream, "" for anything else (the meter's built-in
// rules then decide).
func ClassifyError(err error) string {
	var ae *openai.Error
	if errors.As(err, &ae) {
		return strconv.Itoa(ae.StatusCode)
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		return "stream_error"
	}
	var ee *EventError
	if errors.As(err, &ee) {
		return "stream_error"
	}
	return ""
}
