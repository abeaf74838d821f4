package dashboard

import (
	"strings"
	"unicode"
)

// Words splits text into its words: runs of letters, lower-cased; a run
// that touches a digit (a payment code, an id) is no word.
func Words(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' }) {
		if strings.IndexFunc(f, func(r rune) bool { return unicode.IsDigit(r) || r == '_' }) >= 0 {
			continue
		}
		out = append(out, strings.ToLower(f))
	}
	return out
}

// EnglishWords are the words of the English catalogue that a Vietnamese
// page must not show: those no Vietnamese message uses too (brands and
// technical tokens such as IPN, URL, VietQR, CSV appear in both) and that
// allow does not name.
func EnglishWords(allow ...string) map[string]bool {
	vi := map[string]bool{}
	for _, m := range messages["vi"] {
		for _, w := range Words(m) {
			vi[w] = true
		}
	}
	for _, w := range allow {
		vi[strings.ToLower(w)] = true
	}
	en := map[string]bool{}
	for _, m := range messages["en"] {
		for _, w := range Words(m) {
			if len([]rune(w)) > 1 && !vi[w] {
				en[w] = true
			}
		}
	}
	return en
}
