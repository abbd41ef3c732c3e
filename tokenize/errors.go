package tokenize

import "errors"

// ErrUnknownEncoding is returned (wrapped, with the known names listed) by
// NewCounter for an encoding name it does not know. Test with errors.Is.
var ErrUnknownEncoding = errors.New("tokenize: unknown encoding")

// ErrEncodingData is returned (wrapped) by NewCounter if the embedded
// tokenizer data of an encoding cannot be parsed. It indicates a broken
// build, not bad input.
var ErrEncodingData = errors.New("tokenize: bad encoding data")
