package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/ory/fosite"

	"recon"
)

// handleToken is the token endpoint: authorization_code (with PKCE),
// refresh_token (rotating) and client_credentials.
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ar, err := s.provider.NewAccessRequest(ctx, r, new(session))
	if err != nil {
		s.writeAccessError(ctx, w, r, ar, err)
		return
	}
	// No token for a client of an inactive company, whatever the grant; a
	// code or refresh token is not used up by the refusal.
	if err := s.companyActive(ctx, ar.GetClient().(client).c.Company); err != nil {
		s.writeAccessError(ctx, w, r, ar, errCompanyInactive(err))
		return
	}
	if ar.GetGrantTypes().ExactOne("client_credentials") {
		// fosite checked the requested scopes against the client's and
		// set the token's expiry on the session passed above.
		c := ar.GetClient().(client)
		if len(ar.GetRequestedScopes()) == 0 {
			// No scope asked for: all the client is allowed (RFC 6749 §3.3 default).
			ar.SetRequestedScopes(fosite.Arguments(c.c.Scopes))
		}
		for _, scope := range ar.GetRequestedScopes() {
			ar.GrantScope(scope)
		}
		sess := ar.GetSession().(*session)
		*sess = *clientSession(c.c)
	}
	if err := s.narrowToRole(ctx, ar); err != nil {
		s.writeAccessError(ctx, w, r, ar, err)
		return
	}
	s.stampAccessRequest(ar)
	resp, err := s.provider.NewAccessResponse(ctx, ar)
	if err != nil {
		s.writeAccessError(ctx, w, r, ar, err)
		return
	}
	resp.SetExpiresIn(s.cfg.AccessTTL)
	s.provider.WriteAccessResponse(ctx, w, ar, resp)
}

// narrowToRole keeps, of the scopes a refresh is about to grant again,
// those the user's current role and permissions allow: a role lowered since
// consent lowers the next token too (docs/design.md, D9). A user who may no
// longer use any of them, or who is gone, gets invalid_grant. (A code
// exchange grants what consent granted minutes before; every endpoint
// checks the role again anyway.)
func (s *Server) narrowToRole(ctx context.Context, ar fosite.AccessRequester) error {
	sess, ok := ar.GetSession().(*session)
	req, isReq := ar.(*fosite.AccessRequest)
	if !ok || !isReq || sess.UserID == 0 || !ar.GetGrantTypes().ExactOne("refresh_token") {
		return nil
	}
	u, err := s.store.User(ctx, sess.UserID)
	if recon.ErrorCode(err) == recon.ENOTFOUND || (err == nil && (u.Company != sess.Company || !u.Active())) {
		return fosite.ErrInvalidGrant.WithHint("The user of this grant no longer exists or was deactivated.")
	} else if err != nil {
		return fosite.ErrServerError.WithWrap(err).WithDebug(err.Error())
	}
	granted := u.GrantableScopes(req.GrantedScope)
	if granted == nil {
		return fosite.ErrInvalidGrant.WithHintf("The user's role (%s) no longer allows any scope of this grant.", u.Role)
	}
	req.GrantedScope = fosite.Arguments(granted)
	return nil
}

// stampAccessRequest dates the request and the expiry of the tokens about
// to be issued by the server's clock: fosite stamps them with time.Now.
func (s *Server) stampAccessRequest(ar fosite.AccessRequester) {
	now := s.cfg.Clock.Now().UTC()
	if req, ok := ar.(*fosite.AccessRequest); ok {
		req.RequestedAt = now
	}
	sess := ar.GetSession()
	sess.SetExpiresAt(fosite.AccessToken, now.Add(s.cfg.AccessTTL))
	if !sess.GetExpiresAt(fosite.RefreshToken).IsZero() {
		sess.SetExpiresAt(fosite.RefreshToken, now.Add(s.cfg.RefreshTTL))
	}
}

func (s *Server) writeAccessError(ctx context.Context, w http.ResponseWriter, r *http.Request, ar fosite.AccessRequester, err error) {
	if errors.Is(err, fosite.ErrInvalidatedAuthorizeCode) {
		// The loser of concurrent exchanges of one code: fosite reports the
		// failed invalidation (see InvalidateAuthorizeCodeSession) as a server
		// error, but the client sent a code already used (RFC 6749 §5.2).
		err = fosite.ErrInvalidGrant.WithHint("The authorization code has already been used.")
	}
	err = temporarilyUnavailable(w, err)
	s.logServerError(ctx, "token", err)
	if _, _, basic := r.BasicAuth(); basic && errors.Is(err, fosite.ErrInvalidClient) {
		// RFC 6749 §5.2: a failed Basic authentication is a 401 with a challenge.
		w.Header().Set("WWW-Authenticate", `Basic realm="recon"`)
	}
	s.provider.WriteAccessError(ctx, w, ar, err)
}

// handleRevoke is the RFC 7009 revocation endpoint. Revoking an access or
// a refresh token revokes every access and refresh token of its grant
// (fosite's behaviour). Unknown tokens and tokens of other clients get 200,
// as RFC 7009 §2.2 asks for invalid tokens, so that nobody learns which
// tokens exist.
func (s *Server) handleRevoke(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	err := s.provider.NewRevocationRequest(ctx, r)
	s.logServerError(ctx, "revoke", err)
	if err != nil && (errors.Is(err, fosite.ErrTemporarilyUnavailable) || errors.Is(err, fosite.ErrServerError)) {
		// fosite would answer 200 although the token may still be valid.
		setRetryAfter(w)
		writeOAuthError(w, fosite.ErrTemporarilyUnavailable)
		return
	}
	s.provider.WriteRevocationResponse(ctx, w, err)
}

// introspection is the RFC 7662 response, with the company_id extension.
type introspection struct {
	Active    bool   `json:"active"`
	Scope     string `json:"scope,omitempty"`
	ClientID  string `json:"client_id,omitempty"`
	Sub       string `json:"sub,omitempty"`
	Exp       int64  `json:"exp,omitempty"`
	Iat       int64  `json:"iat,omitempty"`
	Iss       string `json:"iss,omitempty"`
	TokenType string `json:"token_type,omitempty"`
	TokenUse  string `json:"token_use,omitempty"`
	CompanyID int64  `json:"company_id,omitempty"`
}

// handleIntrospect is the RFC 7662 introspection endpoint. The caller must
// authenticate as a confidential client with HTTP Basic; it learns about
// tokens of its own company only: any other token is {"active":false}.
func (s *Server) handleIntrospect(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	id, _, ok := r.BasicAuth()
	if !ok {
		w.Header().Set("WWW-Authenticate", `Basic realm="recon"`)
		writeOAuthError(w, fosite.ErrInvalidClient.WithHint("Authenticate with HTTP Basic (client_secret_basic)."))
		return
	}
	if err := r.ParseForm(); err != nil {
		writeOAuthError(w, fosite.ErrInvalidRequest.WithHint("The form could not be read."))
		return
	}
	if r.Form.Has("access_token") {
		// fosite would authenticate the caller by this bearer token instead
		// of the Basic credentials.
		writeOAuthError(w, fosite.ErrInvalidRequest.WithHint("The access_token parameter is not accepted; authenticate with HTTP Basic."))
		return
	}
	clientID, err := url.QueryUnescape(id)
	if err != nil {
		writeOAuthError(w, fosite.ErrInvalidRequest.WithHint("The client id could not be decoded."))
		return
	}

	ir, err := s.provider.NewIntrospectionRequest(ctx, r, new(session))
	if err != nil {
		err = temporarilyUnavailable(w, err)
		s.logServerError(ctx, "introspect", err)
		s.provider.WriteIntrospectionError(ctx, w, err)
		return
	}
	// fosite has checked clientID's secret.
	caller, err := s.store.Client(ctx, clientID)
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		// Revoked since fosite read it: the answer fosite gives an unknown client.
		s.provider.WriteIntrospectionError(ctx, w, fosite.ErrRequestUnauthorized.WithHint("Unable to find OAuth 2.0 Client from HTTP basic authorization header."))
		return
	} else if err != nil {
		s.logError(ctx, "oauth: introspect: load client", err)
		writeOAuthError(w, fosite.ErrorToRFC6749Error(temporarilyUnavailable(w, fosite.ErrServerError.WithWrap(err))))
		return
	}
	ar := ir.GetAccessRequester()
	sess, ok := ar.GetSession().(*session)
	if ok && sess.Company == caller.Company {
		// A token of an inactive company authenticates nothing: not active.
		if err := s.companyActive(ctx, sess.Company); recon.ErrorCode(err) == recon.EFORBIDDEN || recon.ErrorCode(err) == recon.ENOTFOUND {
			ok = false
		} else if err != nil {
			s.logError(ctx, "oauth: introspect: company status", err)
			writeOAuthError(w, fosite.ErrServerError)
			return
		}
	}
	if !ok || sess.Company != caller.Company {
		writeJSON(w, http.StatusOK, introspection{Active: false})
		return
	}
	res := introspection{
		Active:    true,
		Scope:     strings.Join(ar.GetGrantedScopes(), " "),
		ClientID:  ar.GetClient().GetID(),
		Sub:       sess.Subject,
		Iat:       ar.GetRequestedAt().Unix(),
		Iss:       s.issuer,
		TokenUse:  string(ir.GetTokenUse()),
		CompanyID: sess.Company,
	}
	switch ir.GetTokenUse() {
	case fosite.AccessToken:
		res.TokenType = "Bearer"
		res.Exp = sess.GetExpiresAt(fosite.AccessToken).Unix()
	case fosite.RefreshToken:
		res.Exp = sess.GetExpiresAt(fosite.RefreshToken).Unix()
	}
	writeJSON(w, http.StatusOK, res)
}

// writeOAuthError writes an RFC 6749 §5.2 error body.
// retryAfterUnavailable is the Retry-After, in seconds, of a 503: the one
// of every surface (web.RetryAfterUnavailable; docs/design.md, Losing the
// primary).
const retryAfterUnavailable = "5"

// temporarilyUnavailable returns err as temporarily_unavailable (503, RFC
// 6749 §4.1.2.1) with the store's message as its hint, and sets Retry-After
// on w, when a store error in its chain says the database is away for a
// moment (recon.EUNAVAILABLE); err itself otherwise. fosite would answer
// such an error as server_error (500), or as invalid_client when it met it
// loading the client.
func temporarilyUnavailable(w http.ResponseWriter, err error) error {
	var re *recon.Error
	if err == nil || !errors.As(err, &re) || recon.ErrorCode(err) != recon.EUNAVAILABLE {
		return err
	}
	setRetryAfter(w)
	return fosite.ErrTemporarilyUnavailable.WithWrap(err).WithHint(recon.ErrorMessage(err))
}

func setRetryAfter(w http.ResponseWriter) {
	if w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", retryAfterUnavailable)
	}
}

func writeOAuthError(w http.ResponseWriter, e *fosite.RFC6749Error) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, e.CodeField, struct {
		Error       string `json:"error"`
		Description string `json:"error_description,omitempty"`
	}{e.ErrorField, e.GetDescription()})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, `{"error":"server_error"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
