package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"recon"
)

// ReadBody reads the whole request body, enforcing the limit set by the
// Middleware. It returns an EINVALID error for an empty or oversized body, or
// one that is not valid UTF-8.
func ReadBody(r *http.Request) ([]byte, error) {
	b, err := ReadBodyOrEmpty(r)
	switch {
	case err != nil:
		return nil, err
	case len(bytes.TrimSpace(b)) == 0:
		return nil, recon.Errorf(recon.EINVALID, "request body is empty: a JSON object is required")
	case !utf8.Valid(b):
		return nil, recon.Errorf(recon.EINVALID, "request body is not valid UTF-8")
	}
	return b, nil
}

// ReadBodyOrEmpty reads the whole request body as ReadBody, within the
// limit, but takes an empty or missing one (nil) and leaves the checking
// of what it holds to the caller.
func ReadBodyOrEmpty(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(r.Body)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, recon.Errorf(recon.EINVALID, "request body is larger than the limit of %d bytes", tooLarge.Limit)
	case err != nil:
		return nil, recon.Errorf(recon.EINVALID, "request body could not be read")
	}
	return b, nil
}

// DecodeJSON reads the request body into v strictly: unknown fields, wrong
// types, trailing data, invalid UTF-8 and oversized bodies are EINVALID errors
// whose message names the problem.
func DecodeJSON(r *http.Request, v any) error {
	b, err := ReadBody(r)
	if err != nil {
		return err
	}
	return Unmarshal(b, v)
}

// Unmarshal decodes one JSON value from b into v with the rules of DecodeJSON.
func Unmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return JSONError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return recon.Errorf(recon.EINVALID, "malformed JSON: unexpected data after the top-level value")
	}
	return nil
}

// JSONError turns an encoding/json error into an EINVALID error with a clear message.
func JSONError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return recon.Errorf(recon.EINVALID, "malformed JSON at byte %d: %s", syntax.Offset, syntax.Error())
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return recon.Errorf(recon.EINVALID, "malformed JSON: the body ends early")
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return recon.Errorf(recon.EINVALID, "request body must be %s, not %s", jsonKind(typ.Type.Kind().String()), typ.Value)
		}
		return recon.FieldError(field, "%s must be %s, not %s", field, jsonKind(typ.Type.Kind().String()), typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return recon.FieldError(strings.Trim(name, `"`), "unknown field %s", name)
	}
	return recon.Errorf(recon.EINVALID, "malformed JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
}

func jsonKind(goKind string) string {
	switch goKind {
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	}
	return fmt.Sprintf("of type %s", goKind)
}

// WriteJSON writes v as a JSON response with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	WriteEncoded(w, status, EncodeJSON(v))
}

// EncodeJSON is the body WriteJSON writes for v: JSON without HTML
// escaping, ending in a newline.
func EncodeJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return b.Bytes()
}

// WriteEncoded writes body, from EncodeJSON, as WriteJSON does: a response
// kept encoded is written with the same headers as one encoded now.
func WriteEncoded(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	writeWhole(w, status, body)
}
