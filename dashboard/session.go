package dashboard

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"mime"
	"net"
	"net/http"

	"recon"
)

// Cookie names. Outside sandbox mode the cookies are Secure and carry the
// __Host- prefix, which browsers accept only from https, for the whole host
// (Path=/, no Domain): no sibling subdomain can set or shadow them.
const (
	sessionCookie = "recon_session"
	signinCookie  = "recon_signin" // the sign-in form's CSRF token, before any session
	langCookie    = "recon_lang"
)

func (h *Handler) cookieName(name string) string {
	if h.Sandbox {
		return name
	}
	return "__Host-" + name
}

func (h *Handler) setCookie(w http.ResponseWriter, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: h.cookieName(name), Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: !h.Sandbox, SameSite: http.SameSiteLaxMode})
}

func (h *Handler) cookie(r *http.Request, name string) string {
	c, err := r.Cookie(h.cookieName(name))
	if err != nil {
		return ""
	}
	return c.Value
}

// newToken returns 32 random bytes, base64url: session and sign-in tokens.
func newToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// tokenHash is what the store keeps of a session token.
func tokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// csrfToken is the session's CSRF token, derived from the session token
// (which only the cookie holds) so that nothing more is stored; forms carry
// it in the field "csrf".
func csrfToken(sessionToken string) string {
	h := sha256.Sum256([]byte("recon dashboard csrf\x00" + sessionToken))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

func sameToken(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// request is what every signed-in page knows: who, in which tenant.
type request struct {
	token   string
	session *recon.DashboardSession
	caller  *recon.Caller
	company *recon.Company
	lang    lang
}

// handlerFunc is a signed-in page or action.
type handlerFunc func(w http.ResponseWriter, r *http.Request, q *request) error

// public wraps a page that needs no session (limited per address).
func (h *Handler) public(fn func(w http.ResponseWriter, r *http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w)
		if h.allowAddress(w, r) {
			fn(w, r)
		}
	})
}

// page wraps a signed-in GET page that needs the action: without a session
// the browser is sent to sign in; a user who may not is answered 403.
func (h *Handler) page(a recon.Action, fn handlerFunc) http.Handler { return h.signedIn(a, false, fn) }

// form wraps a signed-in POST: the request must come from the dashboard's
// own pages (Sec-Fetch-Site and Origin, http.CrossOriginProtection) and
// carry the session's CSRF token, and the user must be allowed the action.
func (h *Handler) form(a recon.Action, fn handlerFunc) http.Handler { return h.signedIn(a, true, fn) }

func (h *Handler) signedIn(a recon.Action, isForm bool, fn handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w)
		if !h.allowAddress(w, r) { // before the session is read: a flood costs no query
			return
		}
		q, err := h.load(r)
		if err != nil {
			h.noSession(w, r, err)
			return
		}
		if !h.allowSession(w, r, q) {
			return
		}
		if isForm {
			err = h.checkForm(r, csrfToken(q.token))
		}
		if err == nil {
			err = q.caller.Authorize(a)
		}
		if err == nil {
			err = fn(w, r, q)
		}
		if err != nil {
			h.writeError(w, r, q, err)
		}
	})
}

// checkForm refuses a cross-origin POST and one without the right token.
func (h *Handler) checkForm(r *http.Request, want string) error {
	if err := h.csrf.Check(r); err != nil {
		return recon.Errorf(recon.EFORBIDDEN, "the form was sent from another site")
	}
	parse := r.ParseForm
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "multipart/form-data" {
		parse = func() error { return r.ParseMultipartForm(1 << 20) } // files over 1 MiB go to disk
	}
	if err := parse(); err != nil {
		return recon.Errorf(recon.EINVALID, "the form could not be read")
	}
	if !sameToken(r.PostForm.Get("csrf"), want) {
		return recon.Errorf(recon.EFORBIDDEN, "the form's security token is missing or wrong; reload the page and try again")
	}
	return nil
}

// load finds the request's session and loads its user and tenant fresh, so
// that a role change or a deactivated company applies at the next request.
func (h *Handler) load(r *http.Request) (*request, error) {
	ctx := r.Context()
	token := h.cookie(r, sessionCookie)
	if token == "" {
		return nil, recon.Errorf(recon.EUNAUTHORIZED, "sign in first")
	}
	s, err := h.Store.DashboardSession(ctx, tokenHash(token), h.now(), h.IdleTimeout)
	if err != nil {
		return nil, err
	}
	u, err := h.Store.User(ctx, s.UserID)
	if recon.ErrorCode(err) == recon.ENOTFOUND || err == nil && (u.Company != s.Company || !u.Active()) {
		return nil, recon.Errorf(recon.EUNAUTHORIZED, "the user no longer exists")
	} else if err != nil {
		return nil, err
	}
	t, err := h.Store.TenantOf(ctx, s.Company, s.Live)
	if err != nil {
		return nil, err
	}
	if err := t.CheckActive(); err != nil {
		return nil, err
	}
	c, err := h.Store.Company(ctx, s.Company)
	if err != nil {
		return nil, err
	}
	return &request{token: token, session: s, company: c, lang: h.langOf(r),
		caller: &recon.Caller{Tenant: t.ID, ClientID: "dashboard", User: u}}, nil
}

// noSession answers a request without a usable session: a GET goes to the
// sign-in page (which says why), a POST is refused.
func (h *Handler) noSession(w http.ResponseWriter, r *http.Request, err error) {
	code := recon.ErrorCode(err)
	if code == recon.EINTERNAL || code == recon.EUNAVAILABLE { // a 503: the database is away for a moment
		h.writeError(w, r, nil, err)
		return
	}
	if code == recon.EFORBIDDEN { // an inactive company
		h.setCookie(w, sessionCookie, "", -1)
		h.writeError(w, r, nil, err)
		return
	}
	if r.Method != http.MethodGet {
		h.writeError(w, r, nil, recon.Errorf(recon.EUNAUTHORIZED, "the session has ended; sign in again"))
		return
	}
	target := "/dashboard/signin"
	if h.cookie(r, sessionCookie) != "" {
		target += "?ended=1"
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

type signinView struct {
	CSRF, Email, Error string
	Ended              bool
	// Forgot links to the forgotten-password page: only with SMTP (without
	// it an Admin makes the link; docs/dashboard.md, Team).
	Forgot bool
}

func (h *Handler) signinPage(w http.ResponseWriter, r *http.Request) {
	h.renderSignin(w, r, http.StatusOK, signinView{Ended: r.URL.Query().Get("ended") == "1"})
}

func (h *Handler) renderSignin(w http.ResponseWriter, r *http.Request, status int, v signinView) {
	v.CSRF = newToken()
	v.Forgot = h.Team != nil && h.Team.Mail != nil
	h.setCookie(w, signinCookie, v.CSRF, 3600)
	h.render(w, r, status, "signin", &pageData{Lang: h.langOf(r), Path: r.URL.Path, Title: "signin", Data: v})
}

// signin checks the e-mail address and password through the
// PasswordVerifier (the OAuth login page's check and throttle) against
// every company's user of the address, and starts a live session in the
// first active company whose user has that password; when there are
// several, the person picks one next (GET /dashboard/companies), and may
// switch between them later (docs/dashboard.md, Team).
func (h *Handler) signin(w http.ResponseWriter, r *http.Request) {
	if err := h.checkForm(r, h.cookie(r, signinCookie)); err != nil {
		h.writeError(w, r, nil, err)
		return
	}
	f := r.PostForm
	v := signinView{Email: f.Get("email")}
	l := h.langOf(r)
	users, err := h.Passwords.VerifyEmailPassword(r.Context(), v.Email, f.Get("password"), clientAddress(r))
	switch recon.ErrorCode(err) {
	case "":
	case recon.EUNAUTHORIZED:
		v.Error = l.T("tm_err_signin")
		h.renderSignin(w, r, http.StatusUnauthorized, v)
		return
	case recon.ERATELIMITED:
		v.Error = l.T("err_throttled") + " (" + recon.ErrorMessage(err) + ")"
		h.renderSignin(w, r, http.StatusTooManyRequests, v)
		return
	default:
		h.writeError(w, r, nil, err)
		return
	}
	h.setCookie(w, signinCookie, "", -1)
	h.startSession(w, r, users)
}

func (h *Handler) signout(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := h.Store.DeleteDashboardSession(r.Context(), tokenHash(q.token)); err != nil {
		return err
	}
	h.setCookie(w, sessionCookie, "", -1)
	http.Redirect(w, r, "/dashboard/signin", http.StatusSeeOther)
	return nil
}

// switchMode moves the session to the company's live or test data (making
// the test tenant on first use) and goes back to the page it came from.
func (h *Handler) switchMode(w http.ResponseWriter, r *http.Request, q *request) error {
	live := r.PostForm.Get("mode") != "test"
	if !live {
		if _, err := h.Store.TestTenant(r.Context(), q.session.Company); err != nil {
			return err
		}
	}
	if err := h.Store.SetDashboardSessionMode(r.Context(), tokenHash(q.token), live); err != nil {
		return err
	}
	http.Redirect(w, r, localPath(r.PostForm.Get("back")), http.StatusSeeOther)
	return nil
}

// localPath is back when it is one of the dashboard's lists, else the home
// page: a redirect never leaves the dashboard, and a detail page of one mode
// has no counterpart in the other.
func localPath(back string) string {
	switch back {
	case "/dashboard/transactions", "/dashboard/orders", "/dashboard/exceptions", "/dashboard/notifications",
		"/dashboard/sandbox", "/dashboard/hub-companies":
		return back
	}
	return "/dashboard/"
}

// clientAddress is the peer address without its port (as the OAuth login
// page counts it).
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
