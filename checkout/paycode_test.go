package checkout

import (
	"bytes"
	"crypto/rand"
	"strconv"
	"testing"

	"recon"
)

func TestCodeGenerator(t *testing.T) {
	for _, tt := range []struct {
		formats []recon.PaymentCodeFormat
		prefix  string
		digits  int
	}{
		{nil, "DH", 8},
		{[]recon.PaymentCodeFormat{{Prefix: "OFF", SuffixFrom: 3, SuffixTo: 4, IsActive: false}, {Prefix: "HD", SuffixFrom: 4, SuffixTo: 6, CharacterType: recon.NumberOnly, IsActive: true}}, "HD", 6},
		{[]recon.PaymentCodeFormat{{Prefix: "SEP", SuffixFrom: 1, SuffixTo: 30, CharacterType: recon.NumberAndLetter, IsActive: true}}, "SEP", 10},
		{[]recon.PaymentCodeFormat{{Prefix: "AB", SuffixFrom: 12, SuffixTo: 20, CharacterType: recon.NumberOnly, IsActive: true}}, "AB", 12},
	} {
		code := defaultCodeFormat(tt.formats).random(rand.Reader)
		if len(code) != len(tt.prefix)+tt.digits || code[:len(tt.prefix)] != tt.prefix {
			t.Errorf("%v: code %q, want %s + %d digits", tt.formats, code, tt.prefix, tt.digits)
		}
		if _, err := strconv.ParseUint(code[len(tt.prefix):], 10, 64); err != nil {
			t.Errorf("code %q: suffix not digits", code)
		}
		// The code is what extraction finds in a memo.
		if len(tt.formats) > 0 {
			if got := recon.NewExtractor(tt.formats).Extract("chuyen tien " + code + " cam on"); got != code {
				t.Errorf("extracted %q from a memo with %q", got, code)
			}
		}
	}
}

// TestCodeGeneratorReadsItsSource: the digits come from the reader the
// service is given (Service.Rand), so a test can fix them.
func TestCodeGeneratorReadsItsSource(t *testing.T) {
	f := defaultCodeFormat(nil)
	if got := f.random(bytes.NewReader(make([]byte, 64))); got != "DH00000000" {
		t.Errorf("zero bytes: %q, want DH00000000", got)
	}
	seq := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 0}
	if got := f.random(bytes.NewReader(seq)); got != "DH12345678" {
		t.Errorf("bytes 1..8: %q, want DH12345678", got)
	}
}
