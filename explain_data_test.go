package recon_test

import (
	"testing"

	"recon"
)

// The memo tester's explanation carries its sentences as data (Why and
// its numbers), which the dashboard writes in the reader's language.
func TestExplainCodeData(t *testing.T) {
	formats := []recon.PaymentCodeFormat{{Prefix: "DH", SuffixFrom: 4, SuffixTo: 6, CharacterType: recon.NumberOnly, IsActive: true},
		{Prefix: "SP", SuffixFrom: 4, SuffixTo: 6, CharacterType: recon.NumberOnly},
		{Prefix: "X1", SuffixFrom: 4, SuffixTo: 6, CharacterType: recon.NumberOnly, IsActive: true}}
	e := recon.ExplainCode("XDH1234 DH12 DH1234567 DH5555 DH6666", formats)
	want := []recon.CodeCandidate{
		{Why: recon.CandidateInWord, After: "X", Text: "DH1234", Count: 4},
		{Why: recon.CandidateShort, Text: "DH12", Count: 2},
		{Why: recon.CandidateLong, Text: "DH1234567", Count: 7},
		{Why: recon.CandidateMatch, Text: "DH5555", Count: 4, Match: true},
		{Why: recon.CandidateLater, Text: "DH6666", Count: 4, First: "DH5555"},
	}
	if len(e.Candidates) != len(want) {
		t.Fatalf("candidates %+v", e.Candidates)
	}
	for i, w := range want {
		c := e.Candidates[i]
		if c.Why != w.Why || c.After != w.After || c.Text != w.Text || c.Count != w.Count || c.Match != w.Match || c.First != w.First ||
			c.Format != 1 || c.Prefix != "DH" || c.From != 4 || c.To != 6 || c.Letters {
			t.Errorf("candidate %d: %+v, want %+v", i, c, w)
		}
	}
	if len(e.IgnoredFormats) != 2 || e.IgnoredFormats[0] != (recon.IgnoredFormat{Format: 2, Prefix: "SP", Inactive: true}) ||
		e.IgnoredFormats[1] != (recon.IgnoredFormat{Format: 3, Prefix: "X1"}) {
		t.Errorf("ignored %+v", e.IgnoredFormats)
	}
}
