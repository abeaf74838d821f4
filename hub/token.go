package hub

import (
	"net/http"

	"recon"
	"recon/web"
)

// tokenBody is the answer of POST /v1/token.
type tokenBody struct {
	Code        int    `json:"code"`
	AccessToken string `json:"access_token"`
	TTL         int64  `json:"ttl"`
}

// token serves POST /v1/token: Basic client_id:client_secret of an OAuth2
// client holding the hub scope → 201 with a bearer token and its lifetime
// in seconds. The body is ignored (SePay sends none). Anything wrong → 401
// {"code":401,"message":"Unauthenticated"}.
func (h *Handler) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok || id == "" || secret == "" {
		h.writeError(w, r, recon.Errorf(recon.EUNAUTHORIZED, "Unauthenticated"), false)
		return
	}
	tok, ttl, err := h.Tokens.IssueHubToken(r.Context(), id, secret)
	if err == nil && !h.Limiter.Allow(w.Header(), "client:"+id) {
		err = recon.Errorf(recon.ERATELIMITED, "too many requests from client %s: retry after %s s", id, w.Header().Get("Retry-After"))
	}
	if err != nil {
		h.writeError(w, r, err, false)
		return
	}
	web.WriteJSON(w, http.StatusCreated, tokenBody{Code: http.StatusCreated, AccessToken: tok, TTL: int64(ttl.Seconds())})
}
