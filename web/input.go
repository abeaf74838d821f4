package web

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"recon"
)

// CheckInput refuses, before any handler runs, text that no field of any API
// can hold: a NUL or another control character, or bytes that are not UTF-8,
// in the path, the query, Basic credentials, a JSON body (also written as a
// \u0000 escape) or a form body. PostgreSQL cannot store a NUL in text at all
// and rejects invalid UTF-8, so without this guard such input would reach the
// database and fail there. Tab, line feed and carriage return are allowed in
// bodies (a description may span lines), nowhere else. It returns an EINVALID
// error naming where the character is, or nil.
//
// JSON and form bodies are read (within the body limit the Mux set) and
// handed on unchanged; other bodies (multipart) are left to their readers,
// and so is every body when files is set: a route that takes a file as its
// body (statement uploads) reads and checks it itself, streaming, whatever
// Content-Type a client sends with it (curl's --data-binary says form).
func CheckInput(r *http.Request, files bool) error {
	if where := recon.BadText(r.URL.Path, false); where != "" {
		return recon.Errorf(recon.EINVALID, "the URL path %s", where)
	}
	if r.URL.RawQuery != "" {
		// A malformed pair is left out, as r.URL.Query() leaves it out.
		q, _ := url.ParseQuery(r.URL.RawQuery)
		if err := checkValues(q, "query", "query parameter", false); err != nil {
			return err
		}
	}
	if user, pass, ok := r.BasicAuth(); ok {
		if where := recon.BadText(user, false); where != "" {
			return recon.Errorf(recon.EINVALID, "the user name of the Basic credentials %s", where)
		}
		if where := recon.BadText(pass, false); where != "" {
			return recon.Errorf(recon.EINVALID, "the password of the Basic credentials %s", where)
		}
	} else if h := r.Header.Get("Authorization"); recon.BadText(h, false) != "" {
		return recon.Errorf(recon.EINVALID, "the Authorization header holds bytes that are not UTF-8")
	}
	if files || r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	isForm := mt == "application/x-www-form-urlencoded"
	if !isForm && mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return nil
	}
	b, err := io.ReadAll(r.Body)
	// Hand the body on as it came, an error of the read included (the
	// handler reports a body over the limit in its own words).
	if err != nil {
		r.Body = readCloser{io.MultiReader(bytes.NewReader(b), errReader{err}), r.Body}
		return nil
	}
	r.Body = readCloser{bytes.NewReader(b), r.Body}
	if isForm {
		form, _ := url.ParseQuery(string(b)) // the handler reports a malformed form
		return checkValues(form, "form", "form field", true)
	}
	if where := jsonControl(b); where != "" {
		return recon.Errorf(recon.EINVALID, "the JSON body %s", where)
	}
	return nil
}

// checkValues checks the names and values of a query or a form (what names
// one, e.g. "query parameter"); line breaks are allowed in values when
// breaks is set.
func checkValues(vals url.Values, field, what string, breaks bool) error {
	for name, values := range vals {
		if where := recon.BadText(name, false); where != "" {
			return recon.FieldError(field, "a %s name %s", what, where)
		}
		for _, v := range values {
			if where := recon.BadText(v, breaks); where != "" {
				return recon.FieldError(name, "%s %q %s", what, name, where)
			}
		}
	}
	return nil
}

// jsonControl finds a control character written as a \u escape inside a
// JSON string (a raw one is a syntax error the decoder reports), other than
// tab, line feed and carriage return, and describes it; "" when none.
func jsonControl(b []byte) string {
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case !in:
			if c == '"' {
				in = true
			}
		case c == '"':
			in = false
		case c == '\\' && i+1 < len(b):
			if b[i+1] == 'u' && i+5 < len(b) {
				var v int
				for _, h := range b[i+2 : i+6] {
					v <<= 4
					switch {
					case '0' <= h && h <= '9':
						v |= int(h - '0')
					case 'a' <= h && h <= 'f':
						v |= int(h-'a') + 10
					case 'A' <= h && h <= 'F':
						v |= int(h-'A') + 10
					default:
						v = 1 << 20 // not an escape: the decoder reports it
					}
				}
				if (v < 0x20 && v != '\t' && v != '\n' && v != '\r') || v == 0x7f {
					return fmt.Sprintf("holds the control character U+%04X (\\u%s) at byte %d", v, b[i+2:i+6], i)
				}
			}
			i++ // skip the escaped character
		}
	}
	return ""
}

type readCloser struct {
	io.Reader
	io.Closer
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
