package dashboard

import "strings"

// ExcEnglish lists, as RefundEnglish, the English phrases of the
// exceptions' new messages (i18n_exc.go): a Vietnamese page shows none.
func ExcEnglish() []string {
	var out []string
	for _, m := range excMessages {
		if m.en != m.vi && strings.Contains(m.en, " ") {
			out = append(out, m.en)
		}
	}
	return out
}
