package oauth

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ory/fosite"

	"recon"
)

//go:embed templates/*.html
var templateFS embed.FS

// pages holds the parsed HTML templates.
type pages struct {
	authorize *template.Template
	error     *template.Template
}

func newPages() (*pages, error) {
	a, err := template.ParseFS(templateFS, "templates/authorize.html")
	if err != nil {
		return nil, err
	}
	e, err := template.ParseFS(templateFS, "templates/error.html")
	if err != nil {
		return nil, err
	}
	return &pages{authorize: a, error: e}, nil
}

// Form fields of the login and consent page itself; everything else in the
// form is the original authorization request, carried as hidden fields.
const (
	fieldEmail    = "email"
	fieldPassword = "password"
	fieldConsent  = "consent"
)

func isPageField(name string) bool {
	return name == fieldEmail || name == fieldPassword || name == fieldConsent
}

type consentView struct {
	L          lang
	ClientName string
	Intro      string
	Scopes     []scopeView
	Hidden     []hiddenField
	Email      string
	Error      string
	// OtherLang and OtherURL link to the page in the other language.
	OtherLang lang
	OtherURL  string
}

type scopeView struct{ Name, Description string }

type hiddenField struct{ Name, Value string }

type errorView struct {
	L                      lang
	Summary, Code, Details string
}

// setPageHeaders marks a page as private, not to be cached or framed.
func setPageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// handleAuthorizeGet validates the authorization request and shows the
// login and consent page.
func (s *Server) handleAuthorizeGet(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	setPageHeaders(w)
	ar, err := s.provider.NewAuthorizeRequest(ctx, r)
	if err == nil {
		err = checkAuthorizeRequest(ar)
	}
	if err == nil {
		if e := s.companyActive(ctx, ar.GetClient().(client).c.Company); e != nil {
			err = errCompanyInactive(e)
		}
	}
	if err != nil {
		s.writeAuthorizeError(ctx, w, langOf(r, r.Form), ar, err)
		return
	}
	s.renderConsent(ctx, w, r, http.StatusOK, ar, "", "")
}

// handleAuthorizePost authenticates the user and records the decision:
// Deny redirects with access_denied, Allow with a code for the requested
// scopes. A failed login shows the page again with an error.
func (s *Server) handleAuthorizePost(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	setPageHeaders(w)
	if err := r.ParseForm(); err != nil {
		s.renderError(ctx, w, langOf(r, nil), http.StatusBadRequest, fosite.ErrInvalidRequest.WithHint("The form could not be read."))
		return
	}
	l := langOf(r, r.Form)
	email := r.PostForm.Get(fieldEmail)
	password := r.PostForm.Get(fieldPassword)
	decision := r.PostForm.Get(fieldConsent)
	// fosite sees only the authorization request, never the password.
	for _, f := range []string{fieldEmail, fieldPassword, fieldConsent} {
		r.Form.Del(f)
		r.PostForm.Del(f)
	}

	ar, err := s.provider.NewAuthorizeRequest(ctx, r)
	if err == nil {
		err = checkAuthorizeRequest(ar)
	}
	if err == nil {
		if e := s.companyActive(ctx, ar.GetClient().(client).c.Company); e != nil {
			err = errCompanyInactive(e)
		}
	}
	if err != nil {
		s.writeAuthorizeError(ctx, w, l, ar, err)
		return
	}
	c := ar.GetClient().(client)

	switch decision {
	case "deny":
		s.provider.WriteAuthorizeError(ctx, w, ar, fosite.ErrAccessDenied.WithHint("The user denied the request."))
		return
	case "allow":
	default:
		s.renderConsent(ctx, w, r, http.StatusBadRequest, ar, email, l.T("choose"))
		return
	}

	user, err := s.throttledLogin(ctx, c.c, email, password, clientAddress(r))
	if wait, ok := err.(errThrottled); ok {
		secs := int64((time.Duration(wait) + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
		s.renderConsent(ctx, w, r, http.StatusTooManyRequests, ar, email, fmt.Sprintf(l.T("throttled"), secs))
		return
	} else if recon.ErrorCode(err) == recon.EUNAUTHORIZED {
		s.renderConsent(ctx, w, r, http.StatusOK, ar, email, l.T("wrong_login"))
		return
	} else if err != nil {
		s.writeAuthorizeError(ctx, w, l, ar, fosite.ErrServerError.WithWrap(err).WithDebug(err.Error()))
		return
	}

	// The requested scopes were checked against the client's by fosite; the
	// user's role and permissions decide which of them are granted
	// (docs/design.md, D9).
	granted := user.GrantableScopes(ar.GetRequestedScopes())
	if granted == nil {
		s.cfg.Logger.InfoContext(ctx, "oauth: consent refused: no requested scope allowed for the role",
			"client_id", c.c.ID, "user_id", user.ID, "role", user.Role, "scopes", strings.Join(ar.GetRequestedScopes(), " "))
		s.provider.WriteAuthorizeError(ctx, w, ar, fosite.ErrAccessDenied.WithHintf(
			"Your role (%s) and permissions allow none of the requested scopes.", user.Role))
		return
	}
	for _, scope := range granted {
		ar.GrantScope(scope)
	}
	// Date the request by the server's clock; storage derives the code's
	// expiry from it (fosite stamps both with time.Now).
	if req, ok := ar.(*fosite.AuthorizeRequest); ok {
		req.RequestedAt = s.cfg.Clock.Now().UTC()
	}
	resp, err := s.provider.NewAuthorizeResponse(ctx, ar, userSession(c.c, user.ID))
	if err != nil {
		s.writeAuthorizeError(ctx, w, l, ar, err)
		return
	}
	s.provider.WriteAuthorizeResponse(ctx, w, ar, resp)
}

// checkAuthorizeRequest applies the server's policy before the page is
// shown: PKCE with S256 for every client, at least one scope, query
// response mode. fosite checks PKCE again when it issues the code.
func checkAuthorizeRequest(ar fosite.AuthorizeRequester) error {
	form := ar.GetRequestForm()
	switch {
	case form.Get("code_challenge") == "":
		return fosite.ErrInvalidRequest.WithHint("Clients must use PKCE: the code_challenge parameter is missing.")
	case form.Get("code_challenge_method") != "S256":
		return fosite.ErrInvalidRequest.WithHint("Clients must use code_challenge_method=S256.")
	case len(ar.GetRequestedScopes()) == 0:
		return fosite.ErrInvalidScope.WithHint("The scope parameter is required.")
	case ar.GetResponseMode() != fosite.ResponseModeDefault && ar.GetResponseMode() != fosite.ResponseModeQuery:
		return fosite.ErrUnsupportedResponseMode.WithHint("Only response_mode=query is supported.")
	}
	return nil
}

func errLogin() error {
	return &recon.Error{Code: recon.EUNAUTHORIZED, Message: "wrong e-mail address or password"}
}

// errThrottled refuses a login attempt made too soon after failures, for
// as long as it holds, without checking the password.
type errThrottled time.Duration

func (e errThrottled) Error() string { return "login throttled for " + time.Duration(e).String() }

// clientAddress is the request's peer address without its port. (Recon
// trusts no forwarding header: behind a proxy every client shares the
// proxy's address, which its larger budget allows for.)
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// throttledLogin is login behind the throttle of docs/api.md (Login
// throttling): failures per pair of account and address lock the pair after
// a growing wait; per account (whether or not it exists, so the answer
// reveals nothing) they only make attempts from anywhere wait a few
// seconds, so that nobody can lock a user out from elsewhere; per address
// they lock the address. Every attempt is logged with its outcome, never
// the password; every lock is logged and counted (recon_login_lockouts_total).
func (s *Server) throttledLogin(ctx context.Context, c *recon.Client, email, password, addr string) (*recon.User, error) {
	return s.throttled(ctx, c, email, addr, func() (*recon.User, error) { return s.login(ctx, c.Company, email, password) })
}

// throttled is throttledLogin's throttle around check, the password check
// (EUNAUTHORIZED when it fails).
func (s *Server) throttled(ctx context.Context, c *recon.Client, email, addr string, check func() (*recon.User, error)) (*recon.User, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	account := fmt.Sprintf("account:%d:%s", c.Company, email)
	pair := fmt.Sprintf("pair:%d:%s|%s", c.Company, email, addr)
	address := "address:" + addr
	now := s.cfg.Clock.Now()
	log := func(outcome string, extra ...any) {
		s.cfg.Logger.InfoContext(ctx, "oauth: login attempt", append([]any{"outcome", outcome,
			"company_id", c.Company, "client_id", c.ID, "email", email, "address", addr}, extra...)...)
	}
	// The attempt is charged as a failure before the password is checked
	// (a bcrypt comparison takes a while), so that attempts sent at once
	// cannot all pass the check before any is counted; a success refunds it.
	wait, refund, locks := s.throttle.attempt(now,
		throttleKey{"pair", pair, s.cfg.PairThrottle},
		throttleKey{"account", account, s.cfg.AccountThrottle},
		throttleKey{"address", address, s.cfg.AddressThrottle})
	if wait > 0 {
		log("throttled", "retry_after", wait.String())
		return nil, errThrottled(wait)
	}
	u, err := check()
	switch {
	case recon.ErrorCode(err) == recon.EUNAUTHORIZED:
		log("failed")
		for _, kind := range locks {
			lock := s.cfg.PairThrottle.Lock
			if kind == "address" {
				lock = s.cfg.AddressThrottle.Lock
			}
			s.cfg.Logger.WarnContext(ctx, "oauth: login locked", "key", kind, "company_id", c.Company,
				"email", email, "address", addr, "for", lock.String())
			s.cfg.Metrics.locked(kind)
		}
	case err != nil:
		refund()
		log("error")
	default:
		refund()
		s.throttle.forget(pair)
		log("success", "user_id", u.ID)
	}
	return u, err
}

// login authenticates a user of the company by e-mail and password. Users
// of other companies, unknown addresses, users without a password and
// wrong passwords are all EUNAUTHORIZED.
func (s *Server) login(ctx context.Context, companyID int64, email, password string) (*recon.User, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	if email == "" || password == "" {
		return nil, errLogin()
	}
	u, err := s.store.UserByEmail(ctx, companyID, email)
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		checkPassword("", password)
		return nil, errLogin()
	} else if err != nil {
		return nil, err
	}
	if !checkPassword(u.PasswordHash, password) || u.Company != companyID || !u.Active() {
		return nil, errLogin()
	}
	return u, nil
}

// renderConsent shows the login and consent page for ar, in the language
// of the request (langOf).
func (s *Server) renderConsent(ctx context.Context, w http.ResponseWriter, r *http.Request, status int, ar fosite.AuthorizeRequester, email, msg string) {
	c := ar.GetClient().(client)
	form := ar.GetRequestForm()
	l := langOf(r, form)
	v := consentView{L: l, ClientName: c.c.Name, Intro: fmt.Sprintf(l.T("intro"), c.c.Name), Email: email, Error: msg}
	for _, scope := range ar.GetRequestedScopes() {
		v.Scopes = append(v.Scopes, scopeView{Name: scope, Description: l.scopeDescription(scope)})
	}
	names := make([]string, 0, len(form))
	for name := range form {
		if !isPageField(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	other := url.Values{}
	for _, name := range names {
		for _, value := range form[name] {
			v.Hidden = append(v.Hidden, hiddenField{Name: name, Value: value})
			other.Add(name, value)
		}
	}
	v.OtherLang = "en"
	if l == "en" {
		v.OtherLang = "vi"
	}
	other.Set("ui_locales", string(v.OtherLang))
	v.OtherURL = "authorize?" + other.Encode()
	s.render(ctx, w, status, s.pages.authorize, v)
}

// writeAuthorizeError answers a failed authorization request: by redirect
// to the client when its redirect URI is known to be good, otherwise with
// an error page (never a redirect to an unchecked URI).
func (s *Server) writeAuthorizeError(ctx context.Context, w http.ResponseWriter, l lang, ar fosite.AuthorizeRequester, err error) {
	err = temporarilyUnavailable(w, err)
	s.logServerError(ctx, "authorize", err)
	if ar != nil && ar.IsRedirectURIValid() {
		s.provider.WriteAuthorizeError(ctx, w, ar, err)
		return
	}
	rfc := fosite.ErrorToRFC6749Error(err)
	status := rfc.CodeField
	if status == 0 {
		status = http.StatusBadRequest
	}
	s.renderError(ctx, w, l, status, rfc)
}

// renderError shows the error page in the language: what the error means,
// and fosite's description as technical detail (none for a server error).
func (s *Server) renderError(ctx context.Context, w http.ResponseWriter, l lang, status int, rfc *fosite.RFC6749Error) {
	v := errorView{L: l, Summary: l.errorSummary(rfc), Code: rfc.ErrorField, Details: rfc.GetDescription()}
	if rfc.CodeField >= 500 {
		v.Summary, v.Details = l.T("server_error"), ""
	}
	s.render(ctx, w, status, s.pages.error, v)
}

func (s *Server) render(ctx context.Context, w http.ResponseWriter, status int, t *template.Template, data any) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		s.logError(ctx, "oauth: render page", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// logServerError logs err when it is a server error (status 500 and up),
// with fosite's debug detail, which clients never see.
func (s *Server) logServerError(ctx context.Context, endpoint string, err error) {
	if err == nil {
		return
	}
	rfc := fosite.ErrorToRFC6749Error(err)
	if rfc.CodeField < 500 {
		return
	}
	s.cfg.Logger.ErrorContext(ctx, "oauth: "+endpoint, "err", rfc.ErrorField, "debug", rfc.DebugField, "cause", errors.Unwrap(rfc))
}
