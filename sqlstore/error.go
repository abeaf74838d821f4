package sqlstore

import (
	"fmt"

	"recon"
)

// notFound returns an ENOTFOUND error whose message is safe to show.
func notFound(err error, format string, args ...any) *recon.Error {
	return &recon.Error{Code: recon.ENOTFOUND, Message: fmt.Sprintf(format, args...), Err: err}
}

// conflict returns an ECONFLICT error whose message is safe to show.
func conflict(err error, format string, args ...any) *recon.Error {
	return &recon.Error{Code: recon.ECONFLICT, Message: fmt.Sprintf(format, args...), Err: err}
}

// internal wraps an unexpected driver error. recon.ErrorCode reports it as
// EINTERNAL and recon.ErrorMessage hides its text.
func internal(err error, op string) error {
	return fmt.Errorf("sqlstore: %s: %w", op, err)
}
