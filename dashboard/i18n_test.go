package dashboard

import (
	"io/fs"
	"maps"
	"regexp"
	"slices"
	"testing"
)

// Every message exists in both languages, and every key the templates and
// the code name exists.
func TestMessagesComplete(t *testing.T) {
	en, vi := slices.Sorted(maps.Keys(messages["en"])), slices.Sorted(maps.Keys(messages["vi"]))
	if !slices.Equal(en, vi) {
		t.Fatalf("the languages differ in keys:\nen %v\nvi %v", en, vi)
	}
	used := regexp.MustCompile(`\.T "([a-z_]+)"|Plural [^"]+"([a-z_]+)"`)
	files, _ := fs.Glob(templateFS, "templates/*.html")
	for _, f := range files {
		b, _ := fs.ReadFile(templateFS, f)
		for _, m := range used.FindAllStringSubmatch(string(b), -1) {
			keys := []string{m[1]}
			if m[2] != "" {
				keys = []string{m[2] + "_1", m[2] + "_n"}
			}
			for _, k := range keys {
				if _, ok := messages["en"][k]; !ok {
					t.Errorf("%s uses the message %q, which does not exist", f, k)
				}
			}
		}
	}
	for _, k := range []string{"err_company_id", "err_password", "err_throttled", "money_in", "money_out", "match_rate", "rate_limited", "retry_after", "upload_busy"} {
		if _, ok := messages["en"][k]; !ok {
			t.Errorf("the code uses the message %q, which does not exist", k)
		}
	}
}

func TestFormats(t *testing.T) {
	for _, c := range []struct {
		l    lang
		n    int64
		want string
	}{{"en", 0, "0 VND"}, {"en", 1234567, "1,234,567 VND"}, {"vi", 1234567, "1.234.567 ₫"}, {"vi", -1000, "-1.000 ₫"}, {"en", 999, "999 VND"}} {
		if got := c.l.Money(c.n); got != c.want {
			t.Errorf("%s Money(%d) = %q, want %q", c.l, c.n, got, c.want)
		}
	}
	if got := lang("en").Plural(1, "transfers"); got != "1 transfer" {
		t.Errorf("Plural 1: %q", got)
	}
	for back, want := range map[string]string{"/dashboard/orders": "/dashboard/orders", "//evil.example/": "/dashboard/",
		"https://evil.example": "/dashboard/", "/dashboard/transactions/5": "/dashboard/", "": "/dashboard/"} {
		if got := localPath(back); got != want {
			t.Errorf("localPath(%q) = %q, want %q", back, got, want)
		}
	}
}
