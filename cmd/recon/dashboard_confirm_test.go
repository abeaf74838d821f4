package main

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
)

var (
	confirmForm   = regexp.MustCompile(`<form method="post" action="([^"]+)" class="actions">`)
	confirmHidden = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
)

// confirm opens the confirmation page at path (GET, as the action's button
// does), checks it is one, and sends its form as the browser would: what
// the page says is what is posted.
func (b *browser) confirm(path string) (int, string, string) {
	b.t.Helper()
	status, page := b.get(path)
	form := confirmForm.FindStringSubmatch(page)
	if status != http.StatusOK || form == nil {
		b.t.Fatalf("GET %s: %d, no confirmation form in %s", path, status, page)
	}
	fields := url.Values{}
	for _, m := range confirmHidden.FindAllStringSubmatch(page[confirmForm.FindStringIndex(page)[0]:], -1) {
		fields.Add(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	if fields.Get("confirm") != "yes" || fields.Get("csrf") == "" {
		b.t.Fatalf("the confirmation form of %s lacks its fields: %v", path, fields)
	}
	return b.post(html.UnescapeString(form[1]), fields)
}

// withQuery is path?fields.
func withQuery(path string, fields url.Values) string { return path + "?" + fields.Encode() }

