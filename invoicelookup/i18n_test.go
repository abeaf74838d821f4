package invoicelookup

import (
	"testing"

	"recon"
)

// Every word of the page exists in both languages, and every status has
// its words.
func TestMessagesSpeakBothLanguages(t *testing.T) {
	for _, s := range recon.InvoiceStatuses {
		if messages["vi"]["status_"+s] == "" {
			t.Errorf("status %s has no Vietnamese words", s)
		}
	}
	for key := range messages["vi"] {
		if messages["en"][key] == "" {
			t.Errorf("%q has no English", key)
		}
	}
	for key := range messages["en"] {
		if messages["vi"][key] == "" {
			t.Errorf("%q has no Vietnamese", key)
		}
	}
}
