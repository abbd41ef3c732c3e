package llmsim

import (
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"
)

// apiError is one error answer in OpenAI's shape:
// {"error":{"message":...,"type":...,"param":...,"code":...}}; an empty param
// or code is written as null.
type apiError struct {
	status     int
	message    string
	typ        string
	param      string
	code       string
	retryAfter time.Duration // 429 only
}

func (e *apiError) Error() string { return strconv.Itoa(e.status) + " " + e.typ + ": " + e.message }

// OpenAI's error types.
const (
	typeInvalidRequest = "invalid_request_error"
	typeServer         = "server_error"
	typeRateLimit      = "requests"
)

func badRequest(param, code, msg string) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: typeInvalidRequest, param: param, code: code, message: msg}
}

func serverError() *apiError {
	return &apiError{status: http.StatusInternalServerError, typ: typeServer,
		message: "The server had an error while processing your request. Sorry about that!"}
}

// appendJSON appends the error object {"error":{...}}.
func (e *apiError) appendJSON(b []byte) []byte {
	b = append(b, `{"error":{"message":`...)
	b = appendJSONString(b, e.message)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, e.typ)
	b = append(b, `,"param":`...)
	b = appendNullableString(b, e.param)
	b = append(b, `,"code":`...)
	b = appendNullableString(b, e.code)
	return append(b, "}}"...)
}

func writeAPIError(w http.ResponseWriter, e *apiError) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if e.status == http.StatusTooManyRequests {
		ra := e.retryAfter
		if ra <= 0 {
			ra = time.Second
		}
		secs := (ra + time.Second - 1) / time.Second
		h.Set("Retry-After", strconv.FormatInt(int64(secs), 10))
		h.Set("Retry-After-Ms", strconv.FormatInt(ra.Milliseconds(), 10))
	}
	w.WriteHeader(e.status)
	_, _ = w.Write(append(e.appendJSON(nil), '\n'))
}

func appendNullableString(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return appendJSONString(b, s)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendEscaped(b, s)
	return append(b, '"')
}

// appendEscaped appends the JSON string escape of s, without quotes.
func appendEscaped(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, `\u202`...)
			b = append(b, hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}
