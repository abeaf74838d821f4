package apiv2

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"recon"
	"recon/web"
)

// Idempotency (docs/api-v2.md, Idempotency). A route registered with
// KeyOptional or KeyRequired reads X-Idempotency-Key. With a key, the
// request claims it in the store (recon.IdempotencyStore: a row insert
// under the unique (tenant, key), so that of concurrent requests on any
// node exactly one runs) before the handler runs, and records the answer
// after; a repeat with the same route and canonical body gets the recorded
// answer with Idempotent-Replayed: true, without running the handler.
//
// What is recorded: the answers of a handler that acted or decided: 2xx,
// 409 and 422. A 400 (the request was malformed: nothing happened), a 404
// and a 5xx release the key instead, so that the corrected or retried
// request runs. A claim whose node died keeps the key busy (409
// idempotency_key_in_use) until its lease (recon.IdempotencyLease) has
// passed; then the next request with the key takes it over and runs.

// IdempotencyHeader is the request header of the key; ReplayedHeader marks
// a replayed answer.
const (
	IdempotencyHeader = "X-Idempotency-Key"
	ReplayedHeader    = "Idempotent-Replayed"
)

func (h *Handler) idempotent(w http.ResponseWriter, r *http.Request, c *recon.Caller, rt Route, fn handlerFunc) {
	key, sent := r.Header[http.CanonicalHeaderKey(IdempotencyHeader)]
	if !sent {
		if rt.Idempotency == KeyRequired {
			h.writeError(w, r, &recon.Error{Code: recon.EUNPROCESSABLE, Reason: "idempotency_key_required",
				Message: "this request needs an X-Idempotency-Key header (1 to 255 visible ASCII characters), so that a retry never acts twice",
				Fields:  map[string][]string{IdempotencyHeader: {"required"}}})
			return
		}
		h.run(w, r, c, fn)
		return
	}
	if len(key) != 1 {
		h.writeError(w, r, recon.FieldError(IdempotencyHeader, "send one X-Idempotency-Key header, not %d", len(key)))
		return
	}
	if err := recon.CheckIdempotencyKey(key[0]); err != nil {
		h.writeError(w, r, err)
		return
	}
	body, err := readBody(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	// The route is the request's method and path, not its pattern: the same
	// key and body sent for another order or refund is another request.
	claim := recon.IdempotencyClaim{Key: key[0], Route: r.Method + " " + r.URL.EscapedPath(), BodyHash: canonicalHash(body), Token: claimToken()}
	ctx := context.WithoutCancel(r.Context()) // the record outlives a client that hangs up
	state, answer, err := h.cfg.Store.ClaimIdempotencyKey(ctx, c.Tenant, claim, h.now(), recon.IdempotencyLease)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	switch state {
	case recon.IdempotencyDone:
		w.Header().Set(ReplayedHeader, "true")
		web.WriteEncoded(w, answer.Status, answer.Body)
		return
	case recon.IdempotencyRunning:
		h.writeError(w, r, recon.Errorf(recon.ECONFLICT, "a request with the X-Idempotency-Key %q is still running: retry later", claim.Key).WithReason("idempotency_key_in_use"))
		return
	case recon.IdempotencyMismatch:
		h.writeError(w, r, recon.Errorf(recon.ECONFLICT, "the X-Idempotency-Key %q was used with another request (route or body): use a new key for a new request", claim.Key).WithReason("idempotency_key_reused"))
		return
	}
	released := false
	defer func() {
		// A panic (web.Middleware answers 500) leaves nothing to replay.
		if !released {
			if err := h.cfg.Store.ReleaseIdempotencyKey(ctx, c.Tenant, claim); err != nil {
				h.cfg.Logger.WarnContext(ctx, "releasing an idempotency key", "err", err)
			}
		}
	}()
	a, err := fn(r, c)
	if code := recon.ErrorCode(err); code == recon.EUNAUTHORIZED || code == recon.EFORBIDDEN {
		h.writeError(w, r, err) // with its WWW-Authenticate; never recorded
		return
	}
	var status int
	var out []byte
	var expires *time.Time
	if err != nil {
		var eb errorBody
		status, eb = h.errorAnswer(r, err)
		out = web.EncodeJSON(eb)
	} else {
		status, out = a.status(), web.EncodeJSON(a.envelope())
	}
	if err != nil || !a.KeepKey {
		t := h.now().Add(recon.IdempotencyKeyTTL)
		expires = &t
	}
	if recordable(status) {
		if err := h.cfg.Store.FinishIdempotencyKey(ctx, c.Tenant, claim, recon.IdempotentAnswer{Status: status, Body: out}, expires); err != nil {
			h.cfg.Logger.WarnContext(ctx, "recording an idempotent answer", "request_id", web.RequestID(ctx), "err", err)
		}
		released = true
	}
	web.WriteEncoded(w, status, out)
}

// recordable says whether an answer of status is kept for replays: what a
// handler acted on or decided (2xx, 409, 422), not a malformed request, a
// missing resource or a failure.
func recordable(status int) bool {
	return status < 400 || status == http.StatusConflict || status == http.StatusUnprocessableEntity
}

// readBody reads r's body (within the route's limit) and puts it back for
// the handler's decode.
func readBody(r *http.Request) ([]byte, error) {
	b, err := web.ReadBodyOrEmpty(r)
	if err != nil || r.Body == nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b, nil
}

// canonicalHash is the hex SHA-256 of body's canonical JSON: the value
// re-encoded with object keys sorted, no insignificant space, numbers as
// written, so that the same request sent twice with its fields in another
// order or spacing is the same request. A body that is no JSON (the handler
// will refuse it) hashes as sent; an empty one as "".
func canonicalHash(body []byte) string {
	canon := bytes.TrimSpace(body)
	if len(canon) > 0 {
		dec := json.NewDecoder(bytes.NewReader(canon))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err == nil && !dec.More() {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if enc.Encode(v) == nil {
				canon = bytes.TrimSuffix(b.Bytes(), []byte("\n"))
			}
		}
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// claimToken names one claim of a key (a nonce: crypto/rand).
func claimToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
