package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

const (
	testPassword = "correct horse battery staple"
	testEmail    = "ana@example.com"
	otherEmail   = "bea@example.com"
	redirectURI  = "http://127.0.0.1:9/callback"
)

// bundle is one authorization server on a real database and a loopback
// HTTP server, with two companies, their users and clients.
type bundle struct {
	db     *sqlstore.DB
	server *Server
	srv    *httptest.Server
	http   *http.Client
	// clock is the wall clock moved by Advance: fosite stamps issue and
	// expiry times with the wall clock, the server judges expiry by this
	// clock.
	clock *testkit.Clock

	company, otherCompany *recon.Company
	// user has testEmail and testPassword in company; otherUser has
	// otherEmail and testPassword in otherCompany; noPassword (in company)
	// cannot log in.
	user, otherUser, noPassword *recon.User
	// conf is a confidential client of company, pub a public one, otherConf a
	// confidential client of otherCompany.
	conf, pub, otherConf        *recon.Client
	confSecret, otherConfSecret string
	// all is a confidential client allowed every scope, made by tests that need it.
	all       *recon.Client
	allSecret string
}

// forEachEngine runs fn in parallel subtests, one per database engine,
// each with its own bundle.
func forEachEngine(t *testing.T, fn func(t *testing.T, b *bundle)) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			fn(t, setup(t, engine))
		})
	}
}

func setup(t *testing.T, engine string) *bundle {
	t.Helper()
	return setupOn(t, dbtest.OpenStore(t, engine))
}

// setupOn makes the bundle on db.
func setupOn(t *testing.T, db *sqlstore.DB) *bundle {
	t.Helper()
	b := &bundle{db: db, clock: testkit.WallClock()}

	mux := http.NewServeMux()
	b.srv = httptest.NewServer(mux)
	t.Cleanup(b.srv.Close)
	s, err := New(Config{
		Issuer: b.srv.URL,
		Secret: []byte("0123456789abcdef0123456789abcdef"),
		Clock:  b.clock,
		Logger: slog.New(slog.NewTextHandler(t.Output(), nil)),
	}, b.db)
	if err != nil {
		t.Fatal(err)
	}
	s.Register(mux)
	b.server = s
	b.http = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	b.company = b.createCompany(t, "Alpha")
	b.otherCompany = b.createCompany(t, "Beta")
	b.user = b.createUser(t, b.company.ID, testEmail, testPassword)
	b.otherUser = b.createUser(t, b.otherCompany.ID, otherEmail, testPassword)
	b.noPassword = b.createUser(t, b.company.ID, "nopw@example.com", "")

	b.conf, b.confSecret = b.createClient(t, "conf", b.company.ID, true,
		[]string{recon.ScopeCompany, recon.ScopeTransactionRead, recon.ScopeOfflineAccess})
	b.pub, _ = b.createClient(t, "pub", b.company.ID, false, []string{recon.ScopeTransactionRead})
	b.otherConf, b.otherConfSecret = b.createClient(t, "other", b.otherCompany.ID, true, []string{recon.ScopeCompany})
	return b
}

func (b *bundle) createCompany(t *testing.T, name string) *recon.Company {
	t.Helper()
	c := &recon.Company{FullName: name + " Ltd", ShortName: name, Status: recon.CompanyActive}
	if err := b.db.CreateCompany(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return c
}

func (b *bundle) createUser(t *testing.T, companyID int64, email, password string) *recon.User {
	t.Helper()
	u := &recon.User{Company: companyID, Email: email, Role: recon.RoleAdmin}
	if password != "" {
		h, err := hashPassword(password, bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		u.PasswordHash = h
	}
	if err := b.db.CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	return u
}

func (b *bundle) createClient(t *testing.T, id string, companyID int64, confidential bool, scopes []string) (*recon.Client, string) {
	t.Helper()
	c := &recon.Client{ID: id, Company: companyID, Name: "App " + id, Scopes: scopes, RedirectURIs: []string{redirectURI}}
	var secret string
	if confidential {
		var err error
		secret, c.SecretHash, err = NewClientSecret()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := b.db.CreateClient(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return c, secret
}

// newPKCE returns a code verifier and its S256 challenge.
func newPKCE() (verifier, challenge string) {
	verifier = rand.Text() + rand.Text()
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// authorizeParams are the parameters of an authorization request.
func authorizeParams(clientID, challenge, scope string) url.Values {
	return url.Values{
		"response_type":         {"code"},
		"client_id":             {clientID},
		"redirect_uri":          {redirectURI},
		"scope":                 {scope},
		"state":                 {"state-" + rand.Text()},
		"code_challenge":        {challenge},
		"code_challenge_method": {"S256"},
	}
}

// page is a response of the authorization endpoint.
type page struct {
	status   int
	header   http.Header
	body     string
	hidden   url.Values // the page's hidden form fields
	location *url.URL   // the redirect, if any
}

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`)

func (b *bundle) do(t *testing.T, req *http.Request) page {
	t.Helper()
	if req.Header.Get("Accept-Language") == "" {
		// The tests read the English page unless they ask for another
		// (the page's default is Vietnamese: TestConsentPageSpeaksBothLanguages).
		req.Header.Set("Accept-Language", "en")
	}
	resp, err := b.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	p := page{status: resp.StatusCode, header: resp.Header, body: string(body), hidden: url.Values{}}
	for _, m := range hiddenInput.FindAllStringSubmatch(p.body, -1) {
		p.hidden.Add(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		if p.location, err = url.Parse(loc); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// authorizePage GETs the authorization endpoint.
func (b *bundle) authorizePage(t *testing.T, params url.Values) page {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.srv.URL+"/oauth/authorize?"+params.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return b.do(t, req)
}

// submit posts the page's form back with the credentials and decision.
func (b *bundle) submit(t *testing.T, hidden url.Values, email, password, decision string) page {
	t.Helper()
	form := url.Values{}
	for k, v := range hidden {
		form[k] = v
	}
	form.Set("email", email)
	form.Set("password", password)
	form.Set("consent", decision)
	req, err := http.NewRequest(http.MethodPost, b.srv.URL+"/oauth/authorize", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(t, req)
}

// authorize runs the browser part of the flow for the user and returns the
// authorization code and the PKCE verifier.
func (b *bundle) authorize(t *testing.T, c *recon.Client, scope string) (code, verifier string) {
	t.Helper()
	verifier, challenge := newPKCE()
	params := authorizeParams(c.ID, challenge, scope)
	p := b.authorizePage(t, params)
	if p.status != http.StatusOK {
		t.Fatalf("authorize page: status %d: %s", p.status, p.body)
	}
	p = b.submit(t, p.hidden, testEmail, testPassword, "allow")
	if p.status != http.StatusSeeOther || p.location == nil {
		t.Fatalf("consent: status %d, want a 303 redirect: %s", p.status, p.body)
	}
	q := p.location.Query()
	if q.Get("state") != params.Get("state") || q.Get("code") == "" {
		t.Fatalf("redirect %s: want the state and a code", p.location)
	}
	return q.Get("code"), verifier
}

// tokenResponse is a response of the token, revocation or introspection endpoint.
type tokenResponse struct {
	status int
	header http.Header
	json   map[string]any
}

func (r tokenResponse) str(key string) string { s, _ := r.json[key].(string); return s }

// post posts a form to an endpoint, authenticating with HTTP Basic when
// id is not empty.
func (b *bundle) post(t *testing.T, path string, form url.Values, id, secret string) tokenResponse {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if id != "" {
		req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	}
	resp, err := b.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := tokenResponse{status: resp.StatusCode, header: resp.Header}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &r.json); err != nil {
			t.Fatalf("POST %s: status %d, body not JSON: %q", path, resp.StatusCode, body)
		}
	}
	return r
}

// exchange trades a code for tokens as the confidential client (secret
// set) or the public client.
func (b *bundle) exchange(t *testing.T, c *recon.Client, secret, code, verifier string) tokenResponse {
	t.Helper()
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {redirectURI},
		"code_verifier": {verifier},
	}
	if secret == "" {
		form.Set("client_id", c.ID)
		return b.post(t, "/oauth/token", form, "", "")
	}
	return b.post(t, "/oauth/token", form, c.ID, secret)
}

func (b *bundle) refresh(t *testing.T, refreshToken string) tokenResponse {
	t.Helper()
	return b.post(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refreshToken}}, b.conf.ID, b.confSecret)
}

func (b *bundle) introspect(t *testing.T, id, secret, token string) tokenResponse {
	t.Helper()
	return b.post(t, "/oauth/introspect", url.Values{"token": {token}}, id, secret)
}

// tokens runs the whole flow for the confidential client and returns its
// access and refresh tokens.
func (b *bundle) tokens(t *testing.T, scope string) (access, refresh string) {
	t.Helper()
	code, verifier := b.authorize(t, b.conf, scope)
	r := b.exchange(t, b.conf, b.confSecret, code, verifier)
	if r.status != http.StatusOK {
		t.Fatalf("exchange: status %d: %v", r.status, r.json)
	}
	return r.str("access_token"), r.str("refresh_token")
}

// wantUnauthorized checks that Authenticate refuses token.
func (b *bundle) wantUnauthorized(t *testing.T, token string) {
	t.Helper()
	c, err := b.server.Authenticate(context.Background(), token)
	if c != nil || recon.ErrorCode(err) != recon.EUNAUTHORIZED {
		t.Fatalf("Authenticate = %+v, %v; want EUNAUTHORIZED", c, err)
	}
	if msg := recon.ErrorMessage(err); msg != "the access token is invalid, expired or revoked" {
		t.Errorf("message %q", msg)
	}
}

// wantError checks an OAuth2 error response.
func wantError(t *testing.T, r tokenResponse, status int, code string) {
	t.Helper()
	if r.status != status || r.str("error") != code {
		t.Fatalf("got status %d %v, want %d %q", r.status, r.json, status, code)
	}
}
