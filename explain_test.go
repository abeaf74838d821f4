package recon_test

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"recon"
)

// The explanation's code is the extractor's, whatever the formats and memo.
func TestExplainCodeAgreesWithExtract(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		formats := genFormats().Draw(t, "formats")
		memo := genMemo(formats).Draw(t, "memo")
		e := recon.ExplainCode(memo, formats)
		if want := recon.NewExtractor(formats).Extract(memo); e.Code != want {
			t.Fatalf("ExplainCode(%q).Code = %q, Extract %q\n%+v", memo, e.Code, want, e)
		}
		matches := 0
		for _, c := range e.Candidates {
			if c.Match {
				matches++
				if c.Text != e.Code {
					t.Fatalf("the matching candidate %q is not the code %q", c.Text, e.Code)
				}
			}
			if c.Reason == "" {
				t.Fatalf("a candidate without a reason: %+v", c)
			}
		}
		if matches != map[bool]int{true: 1, false: 0}[e.Code != ""] {
			t.Fatalf("%d matching candidates for code %q", matches, e.Code)
		}
	})
}

func TestExplainCodeSentences(t *testing.T) {
	formats := []recon.PaymentCodeFormat{
		{Prefix: "DH", SuffixFrom: 4, SuffixTo: 8, CharacterType: recon.NumberOnly, IsActive: true},
		{Prefix: "SP", SuffixFrom: 3, SuffixTo: 5, CharacterType: recon.NumberAndLetter, IsActive: false},
	}
	for _, c := range []struct{ memo, code, summary string }{
		{"Thanh toán đơn hàng dh1709 cảm ơn", "DH1709", "Found DH1709: prefix DH at a word start and 4 digits (format #1: 4 to 8)"},
		{"chuyen tien DH123", "", "No payment code: DH123 has 3 digits after DH; format #1 needs 4 to 8"},
		{"ADH12345 DH123456789", "", `No payment code: DH is inside a word (after 'A'): a code starts a word`},
		{"DH123456789", "", "No payment code: DH123456789 has 9 digits after DH, more than format #1's 8: a longer run is not a code"},
		{"ĐH5555 rồi DH6666", "DH5555", "Found DH5555: prefix DH at a word start and 4 digits (format #1: 4 to 8)"},
		{"tien hang", "", "No payment code: no active format's prefix appears in the memo"},
	} {
		e := recon.ExplainCode(c.memo, formats)
		if e.Code != c.code || e.Summary() != c.summary {
			t.Errorf("%q: code %q, %q\nwant %q, %q", c.memo, e.Code, e.Summary(), c.code, c.summary)
		}
		if len(e.Ignored) != 1 || !strings.Contains(e.Ignored[0], "format #2 (SP) is inactive") {
			t.Errorf("ignored: %v", e.Ignored)
		}
	}
	if e := recon.ExplainCode("ĐH5555 rồi DH6666", formats); len(e.Candidates) != 2 || !strings.Contains(e.Candidates[1].Reason, "DH5555 comes first") {
		t.Errorf("the second code: %+v", e.Candidates)
	}
}
