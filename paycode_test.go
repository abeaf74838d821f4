package recon_test

import (
	"testing"

	"pgregory.net/rapid"

	"recon"
)

func good() recon.FormatInput {
	return recon.FormatInput{Prefix: "dh", SuffixFrom: 4, SuffixTo: 8, CharacterType: "NumberOnly", IsActive: 1, Bad: map[string]string{}}
}

func TestValidateFormats(t *testing.T) {
	with := func(f func(*recon.FormatInput)) recon.FormatInput { g := good(); f(&g); return g }
	tests := []struct {
		name string
		in   []recon.FormatInput
		want string // "" for valid
	}{
		{"valid", []recon.FormatInput{good()}, ""},
		{"empty list", nil, ""},
		{"max prefix", []recon.FormatInput{with(func(f *recon.FormatInput) { f.Prefix = "abc" })}, ""},
		{"unknown first", []recon.FormatInput{with(func(f *recon.FormatInput) { f.Unknown = "x"; f.SuffixFrom = 99 })}, `Format #1: unknown field "x"`},
		{"missing before range", []recon.FormatInput{with(func(f *recon.FormatInput) { f.Bad["suffix_to"] = "missing"; f.Prefix = "1" })}, "Format #1: suffix_to is required"},
		{"prefix before suffix", []recon.FormatInput{with(func(f *recon.FormatInput) { f.Prefix = "D"; f.SuffixFrom = 0 })}, "Format #1: prefix must be 2 to 3 letters long"},
		{"prefix letters", []recon.FormatInput{with(func(f *recon.FormatInput) { f.Prefix = "D-" })}, "Format #1: prefix must contain letters (A-Z) only"},
		{"prefix empty", []recon.FormatInput{with(func(f *recon.FormatInput) { f.Prefix = "" })}, "Format #1: prefix must be 2 to 3 letters long"},
		{"suffix order", []recon.FormatInput{good(), with(func(f *recon.FormatInput) { f.Prefix = "HD"; f.SuffixFrom = 9 })}, "Format #2: suffix_from must be less than or equal to suffix_to"},
		{"suffix type", []recon.FormatInput{with(func(f *recon.FormatInput) { f.Bad["suffix_from"] = "type" })}, "Format #1: suffix_from must be an integer from 1 to 30"},
		{"suffix_to range before order", []recon.FormatInput{with(func(f *recon.FormatInput) { f.SuffixTo = 31 })}, "Format #1: suffix_to must be an integer from 1 to 30"},
		{"character type", []recon.FormatInput{with(func(f *recon.FormatInput) { f.CharacterType = "Letter" })}, "Format #1: character_type must be one of NumberOnly, NumberAndLetter"},
		{"is_active", []recon.FormatInput{with(func(f *recon.FormatInput) { f.IsActive = -1 })}, "Format #1: is_active must be 0 or 1"},
		{"duplicate case-insensitive", []recon.FormatInput{good(), with(func(f *recon.FormatInput) { f.Prefix = "DH" })}, "Format #2: prefix DH is already used by format #1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := recon.ValidateFormats(tt.in, recon.DefaultPrefixMaxLen)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("ValidateFormats: %v", err)
				}
				if len(out) != len(tt.in) {
					t.Fatalf("got %d formats, want %d", len(out), len(tt.in))
				}
				return
			}
			if out != nil || recon.ErrorCode(err) != recon.EINVALID || recon.ErrorMessage(err) != tt.want {
				t.Fatalf("got %v, %v; want %q", out, err, tt.want)
			}
		})
	}
	many := make([]recon.FormatInput, recon.MaxPaymentCodeFormats+1)
	if _, err := recon.ValidateFormats(many, 3); recon.ErrorCode(err) != recon.EINVALID {
		t.Fatalf("too many formats: %v", err)
	}
}

// TestValidateFormatsProperty: whatever the input, the result is either an
// error naming a format number within the list, or formats that all satisfy
// the rules, prefixes upper-case and unique.
func TestValidateFormatsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 6).Draw(t, "n")
		in := make([]recon.FormatInput, n)
		for i := range in {
			in[i] = recon.FormatInput{
				Prefix:        rapid.StringMatching(`[A-Za-z0-9đ]{0,6}`).Draw(t, "prefix"),
				SuffixFrom:    rapid.Int64Range(-2, 33).Draw(t, "from"),
				SuffixTo:      rapid.Int64Range(-2, 33).Draw(t, "to"),
				CharacterType: rapid.SampledFrom([]string{"NumberOnly", "NumberAndLetter", "numberonly", ""}).Draw(t, "ct"),
				IsActive:      rapid.Int64Range(-1, 2).Draw(t, "active"),
			}
		}
		maxLen := rapid.IntRange(3, 5).Draw(t, "max")
		out, err := recon.ValidateFormats(in, maxLen)
		if err != nil {
			if recon.ErrorCode(err) != recon.EINVALID {
				t.Fatalf("error code %q", recon.ErrorCode(err))
			}
			return
		}
		seen := map[string]bool{}
		for i, f := range out {
			if recon.ValidPrefix(f.Prefix, maxLen) != "" || seen[f.Prefix] || f.Prefix != upper(in[i].Prefix) {
				t.Fatalf("format %d: bad prefix %q", i+1, f.Prefix)
			}
			seen[f.Prefix] = true
			if f.SuffixFrom < 1 || f.SuffixTo > 30 || f.SuffixFrom > f.SuffixTo || f.IsActive != (in[i].IsActive == 1) {
				t.Fatalf("format %d breaks a rule: %+v", i+1, f)
			}
		}
	})
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}

func TestDomainValidation(t *testing.T) {
	u := &recon.User{Email: "  Ke.Toan@HoaSen.VN ", Role: recon.RoleAccountant, Permissions: []string{"view_transactions"}}
	if err := u.Validate(); err != nil || u.Email != "ke.toan@hoasen.vn" {
		t.Fatalf("user: %v %q", err, u.Email)
	}
	for _, bad := range []*recon.User{
		{Email: "Name <a@b.vn>", Role: recon.RoleAdmin},
		{Email: "a@b.vn", Role: "admin"},
		{Email: "a@b.vn", Role: recon.RoleAdmin, Permissions: []string{"everything"}},
	} {
		if bad.Validate() == nil {
			t.Errorf("user %+v accepted", bad)
		}
	}
	for _, bad := range []*recon.Client{
		{Name: "", Scopes: []string{"company"}},
		{Name: "x"},
		{Name: "x", Scopes: []string{"root"}},
		{Name: "x", Scopes: []string{"company"}, RedirectURIs: []string{"javascript:alert(1)"}},
		{Name: "x", Scopes: []string{"company"}, RedirectURIs: []string{"https://a.vn/cb#frag"}},
	} {
		if bad.Validate() == nil {
			t.Errorf("client %+v accepted", bad)
		}
	}
	c := &recon.Company{FullName: "A", ShortName: "A", Status: recon.CompanyActive, BeginDate: "2026-02-01", EndDate: "2026-01-01"}
	if err := c.Validate(); recon.ErrorMessage(err) != "end_date must not be before begin_date" {
		t.Fatalf("company dates: %v", err)
	}
}
