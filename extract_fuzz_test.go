package recon_test

import (
	"strings"
	"testing"

	"recon"
)

// FuzzExtract checks that Extract never panics, that what it returns is a
// code of an active format, and that it agrees with the reference. spec
// encodes up to eight formats (see fuzzFormats); an empty spec stands for
// shopFormats.
func FuzzExtract(f *testing.F) {
	for _, l := range readMemos(f) {
		f.Add(l.memo, []byte(nil))
	}
	seeds := []string{
		"", "DH1234", "ĐH12345", "D\u0323H12345", "DH12\u030134", "\xffDH1234", "DH12\xff34",
		"DHA12345", "dha1234 x", "a\u0301DH1234", "ÜDH1234", "SM8K2J9Ế", "\xe1\xbaDH1234",
	}
	for _, s := range seeds {
		f.Add(s, []byte(nil))
		f.Add(s, []byte{0x0e, 'D', 'H', 'A', 0x21, 0x06, 'D', 'H', 0, 0x0c, 0x01, 'A', 0, 0, 0x3f})
	}
	f.Fuzz(func(t *testing.T, memo string, spec []byte) {
		formats := fuzzFormats(spec)
		got := recon.NewExtractor(formats).Extract(memo)
		if want := refExtract(formats, memo); got != want {
			t.Fatalf("Extract(%q) = %q, reference %q (formats %+v)", memo, got, want, formats)
		}
		if got != "" && !isCodeOf(got, formats) {
			t.Fatalf("Extract(%q) = %q: no active format gives that code (formats %+v)", memo, got, formats)
		}
	})
}

// isCodeOf reports whether code is an upper-case prefix of an active format
// followed by suffix_from..suffix_to of its allowed characters.
func isCodeOf(code string, formats []recon.PaymentCodeFormat) bool {
	for _, f := range formats {
		prefix := strings.ToUpper(f.Prefix)
		if !refUsable(f) || !strings.HasPrefix(code, prefix) {
			continue
		}
		suffix := code[len(prefix):]
		if len(suffix) < f.SuffixFrom || len(suffix) > f.SuffixTo {
			continue
		}
		ok := true
		for _, r := range suffix {
			ok = ok && refAllowed(f.CharacterType, r)
		}
		if ok {
			return true
		}
	}
	return false
}

// fuzzFormats decodes spec, 5 bytes a format, into at most 8 formats:
// byte 0 holds inactive (bit 0), NumberAndLetter (bit 1), the prefix
// length 1..3 (bits 2-3) and an unusable suffix_from of 0 (bit 4); bytes
// 1-3 the prefix letters, from "DHA" (upper case unless bit 7); byte 4
// suffix_from 1..8 (bits 0-2) and the span to suffix_to, 0..7 (bits 3-5).
func fuzzFormats(spec []byte) []recon.PaymentCodeFormat {
	if len(spec) == 0 {
		return shopFormats
	}
	var out []recon.PaymentCodeFormat
	for ; len(spec) >= 5 && len(out) < 8; spec = spec[5:] {
		flags := spec[0]
		var prefix []byte
		for _, b := range spec[1 : 2+int(flags>>2&3)%3] {
			c := "DHA"[int(b&0x7f)%3]
			if b&0x80 != 0 {
				c |= 0x20
			}
			prefix = append(prefix, c)
		}
		from := 1 + int(spec[4]&7)
		if flags&0x10 != 0 {
			from = 0
		}
		ct := recon.NumberOnly
		if flags&2 != 0 {
			ct = recon.NumberAndLetter
		}
		out = append(out, recon.PaymentCodeFormat{
			Prefix: string(prefix), SuffixFrom: from, SuffixTo: from + int(spec[4]>>3&7),
			CharacterType: ct, IsActive: flags&1 == 0,
		})
	}
	return out
}
