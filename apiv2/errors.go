package apiv2

import (
	"errors"
	"net/http"
	"strconv"

	"recon"
	"recon/web"
)

// The v2 error envelope (docs/api-v2.md, Envelope and errors):
//
//	{"status":"error","error_code":CODE,"message":TEXT,"errors":{field:[TEXT]}}
//
// The status follows the recon.Error's Code (ErrorStatus); error_code
// is the error's Reason when it has one (a handler names the precise rule:
// recon.RuleError("amount_exceeds_refundable", ...), or
// recon.Errorf(recon.ECONFLICT, ...).WithReason("idempotency_key_reused")),
// else the code's generic name.

// ErrorStatus returns the HTTP status and error_code of err as API v2
// answers it: the statuses and names of every API family (web.ErrorStatus),
// but 422 for a business rule, which /api/v1 and the gateway answer as 400.
func ErrorStatus(err error) (status int, code string) {
	status, code = web.ErrorStatus(err)
	if recon.ErrorCode(err) == recon.EUNPROCESSABLE {
		status, code = http.StatusUnprocessableEntity, "unprocessable"
	}
	if reason := recon.ErrorReason(err); reason != "" && status != http.StatusInternalServerError {
		return status, reason
	}
	return status, code
}

type errorBody struct {
	Status    string              `json:"status"`
	ErrorCode string              `json:"error_code"`
	Message   string              `json:"message"`
	Errors    map[string][]string `json:"errors,omitempty"`
}

// errorAnswer renders err: its status and the envelope. Internal errors are
// logged with the request id and never shown.
func (h *Handler) errorAnswer(r *http.Request, err error) (int, errorBody) {
	status, name := ErrorStatus(err)
	if status >= 500 {
		h.cfg.Logger.ErrorContext(r.Context(), "internal error", "request_id", web.RequestID(r.Context()), "method", r.Method, "path", r.URL.Path, "err", err)
	}
	body := errorBody{Status: "error", ErrorCode: name, Message: recon.ErrorMessage(err)}
	var re *recon.Error
	if errors.As(err, &re) && len(re.Fields) > 0 && (re.Code == recon.EINVALID || re.Code == recon.EUNPROCESSABLE) {
		body.Errors = re.Fields
	}
	return status, body
}

// writeError writes err in the v2 envelope, with RFC 6750's WWW-Authenticate
// on 401 and on 403 for a missing scope.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	web.SetWWWAuthenticate(w.Header(), err)
	web.SetRetryAfter(w.Header(), err)
	status, body := h.errorAnswer(r, err)
	writeJSON(w, status, body)
}

// writeJSON writes v with status (web.WriteJSON: no HTML escaping, no-store).
func writeJSON(w http.ResponseWriter, status int, v any) { web.WriteJSON(w, status, v) }

// decode reads the JSON body of r into v strictly (web.DecodeJSON): an
// empty, oversized or malformed body, an unknown field or a wrong type is a
// 400 validation_error naming the field.
func decode(r *http.Request, v any) error { return web.DecodeJSON(r, v) }

// page is a list's page (docs/api-v2.md, Envelope and errors): page from 1,
// per_page from 1 to MaxPerPage (default DefaultPerPage).
type page struct {
	Page    int
	PerPage int
}

const (
	// DefaultPerPage is a list's page size when per_page is not given.
	DefaultPerPage = 20
	// MaxPerPage is the largest per_page.
	MaxPerPage = 100
)

// Offset is the number of items before the page.
func (p page) Offset() int { return (p.Page - 1) * p.PerPage }

// pageOf reads page and per_page from r's query: absent means page 1 and
// DefaultPerPage; anything but an integer in range is a 400 naming the
// parameter.
func pageOf(r *http.Request) (page, error) {
	p := page{Page: 1, PerPage: DefaultPerPage}
	q := r.URL.Query()
	read := func(name string, dst *int, lo, hi int) error {
		if !q.Has(name) {
			return nil
		}
		n, err := strconv.Atoi(q.Get(name))
		if err != nil || n < lo || n > hi {
			return recon.FieldError(name, "%s must be an integer from %d to %d, not %q", name, lo, hi, q.Get(name))
		}
		*dst = n
		return nil
	}
	// A page beyond 10^6 × 100 items is no listing anyone pages through.
	if err := read("page", &p.Page, 1, 1_000_000); err != nil {
		return p, err
	}
	if err := read("per_page", &p.PerPage, 1, MaxPerPage); err != nil {
		return p, err
	}
	return p, nil
}

// pageMeta is the meta of a list's answer.
type pageMeta struct {
	Page    int   `json:"page"`
	PerPage int   `json:"per_page"`
	Total   int64 `json:"total"`
}

// paged is a 200 answer of one page of a list of total items.
func paged(data any, p page, total int64) *Answer {
	return &Answer{Status: http.StatusOK, Data: data, Meta: pageMeta{Page: p.Page, PerPage: p.PerPage, Total: total}}
}
