package sqlstore

import (
	"database/sql"
	"strings"
	"time"

	"recon"
)

// This file maps Go values to columns and back, the same way on both engines.

// storedTime returns t as both engines store it: UTC, truncated to the microsecond.
func storedTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// dateArg returns the argument for a DATE column: nil for "", the date text
// otherwise. A value that is not a YYYY-MM-DD date is EINVALID.
func dateArg(field, date string) (any, error) {
	if date == "" {
		return nil, nil
	}
	if _, err := time.Parse(recon.DateLayout, date); err != nil {
		return nil, recon.FieldError(field, "%s must be a date in the form YYYY-MM-DD", field)
	}
	return date, nil
}

// dateText renders a DATE column read into a sql.NullTime (both drivers return
// dates as midnight UTC) as YYYY-MM-DD, or "" for NULL.
func dateText(d sql.NullTime) string {
	if !d.Valid {
		return ""
	}
	return d.Time.UTC().Format(recon.DateLayout)
}

// idArg returns the argument for an optional reference: NULL for 0.
func idArg(id int64) sql.NullInt64 { return sql.NullInt64{Int64: id, Valid: id != 0} }

// joinList stores a list of tokens (scopes, permissions) as one
// space-separated text. A token must not be empty or contain a space, or the
// list would not read back the same; that is EINVALID.
func joinList(field string, list []string) (string, error) {
	return joinWith(field, list, " ")
}

// splitList reads a list stored by joinList; "" is an empty (nil) list.
func splitList(s string) []string { return splitWith(s, " ") }

// joinURIs stores redirect URIs newline-separated: a URI cannot hold a raw
// control character, but it may hold a space.
func joinURIs(field string, uris []string) (string, error) { return joinWith(field, uris, "\n") }

func splitURIs(s string) []string { return splitWith(s, "\n") }

func joinWith(field string, list []string, sep string) (string, error) {
	for _, s := range list {
		if s == "" || strings.Contains(s, sep) || strings.ContainsAny(s, "\r\n") {
			return "", recon.FieldError(field, "%s holds an empty value or one with a space or line break: %q", field, s)
		}
	}
	return strings.Join(list, sep), nil
}

func splitWith(s, sep string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, sep)
}
