package testkit

import (
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// Browser is a browser of a test server's dashboard pages (docs/dashboard.md)
// without a script engine: a cookie jar, a language, no redirect followed,
// forms sent with their CSRF token and the headers a browser adds.
type Browser struct {
	T      testing.TB
	Base   string       // the server's URL
	Lang   string       // Accept-Language of every request
	Client *http.Client // with the cookie jar; it follows no redirect
}

// NewBrowser is a browser of the server at base, in English, with no cookie.
func NewBrowser(t testing.TB, base string) *Browser {
	jar, _ := cookiejar.New(nil)
	return &Browser{T: t, Base: base, Lang: "en", Client: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Do sends a request to path, with the form (url-encoded) when it is not
// nil, and the headers; it returns the answer and its body.
func (b *Browser) Do(method, path string, form url.Values, header map[string]string) (*http.Response, string) {
	b.T.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.Base+path, body)
	if err != nil {
		b.T.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Accept-Language", b.Lang)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := b.Client.Do(req)
	if err != nil {
		b.T.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(raw)
}

// Get returns the status and the page at path.
func (b *Browser) Get(path string) (int, string) {
	b.T.Helper()
	resp, body := b.Do("GET", path, nil, nil)
	return resp.StatusCode, body
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// CSRF reads the CSRF token of a form on the page at path.
func (b *Browser) CSRF(path string) string {
	b.T.Helper()
	status, body := b.Get(path)
	m := csrfField.FindStringSubmatch(body)
	if status != 200 || m == nil {
		b.T.Fatalf("GET %s: %d, no CSRF token in %q", path, status, body)
	}
	return m[1]
}

// Post sends a form from the server's own pages (Origin and
// Sec-Fetch-Site as a browser sets them) and returns the status, the
// Location and the body.
func (b *Browser) Post(path string, form url.Values) (int, string, string) {
	b.T.Helper()
	resp, body := b.Do("POST", path, form, map[string]string{"Origin": b.Base, "Sec-Fetch-Site": "same-origin"})
	return resp.StatusCode, resp.Header.Get("Location"), body
}

// PostFrom posts the fields to action with the CSRF token of the form on
// page.
func (b *Browser) PostFrom(page, action string, fields url.Values) (int, string, string) {
	b.T.Helper()
	fields.Set("csrf", b.CSRF(page))
	return b.Post(action, fields)
}

// SignIn signs in to the dashboard through its sign-in form (e-mail and
// password) and returns the status and the body of the answer. When the
// address has that password in several companies, the dashboard asks which
// one: SignIn picks company (its id) there, and returns the pick's answer.
func (b *Browser) SignIn(company, email, password string) (int, string) {
	b.T.Helper()
	token := b.CSRF("/dashboard/signin")
	status, loc, body := b.Post("/dashboard/signin", url.Values{"csrf": {token}, "email": {email}, "password": {password}})
	if status != http.StatusSeeOther || !strings.HasPrefix(loc, "/dashboard/companies") {
		return status, body
	}
	_, page := b.Get(loc)
	for _, m := range pickForm.FindAllStringSubmatch(page, -1) {
		if m[2] == company {
			status, _, body = b.PostFrom(loc, "/dashboard/companies", url.Values{"user": {m[1]}})
			return status, body
		}
	}
	b.T.Fatalf("sign in as %s: company %s is not among the choices: %s", email, company, page)
	return 0, ""
}

var pickForm = regexp.MustCompile(`name="user" value="(\d+)">\s*<button type="submit" id="pick-\d+" data-company="(\d+)"`)

// SignedIn signs in (SignIn) and fails the test unless the dashboard
// answers with its redirect to the home; it returns b.
func (b *Browser) SignedIn(company, email, password string) *Browser {
	b.T.Helper()
	if status, body := b.SignIn(company, email, password); status != http.StatusSeeOther {
		b.T.Fatalf("sign in as %s: %d %s", email, status, body)
	}
	return b
}

var (
	confirmForm   = regexp.MustCompile(`<form method="post" action="([^"]+)" class="actions">`)
	confirmHidden = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
)

// Confirm opens the confirmation page at path (GET, as the action's button
// does), checks it is one, and sends its form as the browser would: what
// the page says is what is posted.
func (b *Browser) Confirm(path string) (int, string, string) {
	b.T.Helper()
	status, page := b.Get(path)
	form := confirmForm.FindStringSubmatch(page)
	if status != http.StatusOK || form == nil {
		b.T.Fatalf("GET %s: %d, no confirmation form in %s", path, status, page)
	}
	fields := url.Values{}
	for _, m := range confirmHidden.FindAllStringSubmatch(page[confirmForm.FindStringIndex(page)[0]:], -1) {
		fields.Add(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	if fields.Get("confirm") != "yes" || fields.Get("csrf") == "" {
		b.T.Fatalf("the confirmation form of %s lacks its fields: %v", path, fields)
	}
	return b.Post(html.UnescapeString(form[1]), fields)
}
