package recon

import (
	"slices"
	"testing"
)

func TestReferenceKeys(t *testing.T) {
	for _, c := range []struct {
		refs []string
		want []string
	}{
		{[]string{"FT26260987654321-FEED"}, []string{"FT26260987654321"}},
		{[]string{"ft26260987654321"}, []string{"FT26260987654321"}},
		{[]string{"VCB/FT26260987654321", " FT26260987654321 "}, []string{"FT26260987654321"}},
		{[]string{"NOTPROVIDED", "NONREF", "FEED", "12345", "ABCDEFGH"}, nil},
		{[]string{"E2E-2026-000123", "SIM0011223344556677"}, []string{"000123", "SIM0011223344556677"}},
		{[]string{"mã GD 123456"}, []string{"123456"}},
		{nil, nil},
	} {
		if got := ReferenceKeys(c.refs...); !slices.Equal(got, c.want) {
			t.Errorf("ReferenceKeys(%q) = %q, want %q", c.refs, got, c.want)
		}
	}
}

func TestSharesReference(t *testing.T) {
	a := ReferenceKeys("FT26260987654321-FEED")
	for _, c := range []struct {
		b    []string
		want bool
	}{
		{ReferenceKeys("FT26260987654321"), true},
		{ReferenceKeys("E2E999999", "X/FT26260987654321/Y"), true},
		{ReferenceKeys("FT26260987654322"), false},
		{nil, false},
	} {
		if got := SharesReference(a, c.b); got != c.want {
			t.Errorf("SharesReference(%q, %q) = %v", a, c.b, got)
		}
	}
}

func TestCleanReferences(t *testing.T) {
	got := CleanReferences("FT1", []string{" E2E1 ", "", "FT1", "E2E1", "TX9"})
	if want := []string{"E2E1", "TX9"}; !slices.Equal(got, want) {
		t.Fatalf("CleanReferences = %q, want %q", got, want)
	}
}
