package snowid

import (
	"errors"
	"fmt"
	"time"
)

// Code is a stable error code. The numbers are the C++ library's snowid::Code
// and the names are what logs and the wire carry; neither ever changes.
type Code int

const (
	CodeOK                 Code = 0
	CodeSequenceExhausted  Code = 1
	CodeClockBehind        Code = 2
	CodeUnavailable        Code = 3
	CodeLeaseUncertain     Code = 4
	CodeClockMovedBack     Code = 10
	CodeUnhealthy          Code = 11
	CodeOutOfRange         Code = 12
	CodeInvalidArgument    Code = 13
	CodeFailedPrecondition Code = 14
	CodeDataLoss           Code = 15
	CodeNotFound           Code = 16
	CodeLeaseLost          Code = 17
	CodeResourceExhausted  Code = 18
	CodeAlreadyExists      Code = 19
)

var codeNames = map[Code]string{
	CodeOK:                 "OK",
	CodeSequenceExhausted:  "SEQUENCE_EXHAUSTED",
	CodeClockBehind:        "CLOCK_BEHIND",
	CodeUnavailable:        "UNAVAILABLE",
	CodeLeaseUncertain:     "LEASE_UNCERTAIN",
	CodeClockMovedBack:     "CLOCK_MOVED_BACK",
	CodeUnhealthy:          "UNHEALTHY",
	CodeOutOfRange:         "OUT_OF_RANGE",
	CodeInvalidArgument:    "INVALID_ARGUMENT",
	CodeFailedPrecondition: "FAILED_PRECONDITION",
	CodeDataLoss:           "DATA_LOSS",
	CodeNotFound:           "NOT_FOUND",
	CodeLeaseLost:          "LEASE_LOST",
	CodeResourceExhausted:  "RESOURCE_EXHAUSTED",
	CodeAlreadyExists:      "ALREADY_EXISTS",
}

// String is the stable name, for example "SEQUENCE_EXHAUSTED".
func (c Code) String() string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return fmt.Sprintf("CODE_%d", int(c))
}

// CodeByName is the code of a stable name; false for an unknown name.
func CodeByName(name string) (Code, bool) {
	for c, n := range codeNames {
		if n == name {
			return c, true
		}
	}
	return 0, false
}

// Retryable says whether the same call can succeed later without anyone
// fixing anything.
func (c Code) Retryable() bool {
	switch c {
	case CodeSequenceExhausted, CodeClockBehind, CodeUnavailable, CodeLeaseUncertain:
		return true
	}
	return false
}

// Error is every error this module returns on purpose. RetryAfter is the
// wait that helps, for retryable codes when it is known (0 otherwise).
type Error struct {
	Code       Code
	Message    string
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	s := e.Code.String()
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.RetryAfter > 0 && e.Code.Retryable() {
		ms := (e.RetryAfter + time.Millisecond/2) / time.Millisecond
		if ms < 1 {
			ms = 1
		}
		s += fmt.Sprintf("; retry after %dms", ms)
	}
	return s
}

// Is makes errors.Is(err, ErrX) true for every *Error of the sentinel's code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

// Sentinels, one per code, for errors.Is.
var (
	ErrSequenceExhausted  = &Error{Code: CodeSequenceExhausted}
	ErrClockBehind        = &Error{Code: CodeClockBehind}
	ErrUnavailable        = &Error{Code: CodeUnavailable}
	ErrLeaseUncertain     = &Error{Code: CodeLeaseUncertain}
	ErrClockMovedBack     = &Error{Code: CodeClockMovedBack}
	ErrUnhealthy          = &Error{Code: CodeUnhealthy}
	ErrOutOfRange         = &Error{Code: CodeOutOfRange}
	ErrInvalidArgument    = &Error{Code: CodeInvalidArgument}
	ErrFailedPrecondition = &Error{Code: CodeFailedPrecondition}
	ErrDataLoss           = &Error{Code: CodeDataLoss}
	ErrNotFound           = &Error{Code: CodeNotFound}
	ErrLeaseLost          = &Error{Code: CodeLeaseLost}
	ErrResourceExhausted  = &Error{Code: CodeResourceExhausted}
	ErrAlreadyExists      = &Error{Code: CodeAlreadyExists}
)

// IsRetryable says whether err (or an error it wraps) is an *Error of a
// retryable code.
func IsRetryable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code.Retryable()
}

// CodeOf is the code of err: CodeOK for nil, CodeFailedPrecondition for an
// error that is not (and wraps no) *Error.
func CodeOf(err error) Code {
	if err == nil {
		return CodeOK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeFailedPrecondition
}

func newError(c Code, format string, args ...any) *Error {
	return &Error{Code: c, Message: fmt.Sprintf(format, args...)}
}
