package recon_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"recon"
)

// benchFormats is a busy company's list: 20 active formats, prefixes of 2
// and 3 letters (some sharing first letters, DH and DHA overlapping), both
// character types.
func benchFormats() []recon.PaymentCodeFormat {
	n, l := recon.NumberOnly, recon.NumberAndLetter
	return []recon.PaymentCodeFormat{
		format("DH", 4, 8, n), format("DHA", 5, 7, n), format("HD", 5, 10, n), format("SM", 6, 8, l),
		format("TT", 6, 6, n), format("NAP", 4, 9, n), format("DON", 5, 8, l), format("KH", 3, 7, n),
		format("MA", 4, 10, l), format("ORD", 6, 12, n), format("INV", 6, 10, l), format("PAY", 8, 12, l),
		format("GD", 6, 9, n), format("VE", 5, 7, n), format("BK", 5, 7, l), format("HV", 4, 6, n),
		format("LOP", 3, 5, n), format("PHI", 4, 8, n), format("SP", 6, 9, l), format("TK", 6, 8, n),
	}
}

// benchMemos returns n realistic transfer memos, the same ones on every
// call: bank-generated envelopes, payer names with and without diacritics
// (some decomposed), the usual phrases, and in about 60% of them a code of
// one of benchFormats; 20 to 160 bytes long.
func benchMemos(n int) []string {
	rng := rand.New(rand.NewPCG(1709, 2024))
	formats := benchFormats()
	names := []string{
		"NGUYEN VAN AN", "TRAN THI BICH NGOC", "LE HOANG PHUC", "PHAM MINH DUC", "DANG THU HA",
		"Nguyễn Văn An", "Trần Thị Bích Ngọc", "Lê Hoàng Phúc", "Phạm Minh Đức", "Đặng Thu Hà",
		"Võ Thanh Tùng", "Huỳnh Mỹ Duyên", "Bùi Quốc Việt", "Nguye\u0302\u0303n Va\u0306n An", "VO THANH TUNG",
	}
	phrases := []string{
		"chuyen khoan", "thanh toan don hang", "thanh toán đơn hàng", "chuyển tiền", "tra tien hang",
		"dat coc", "ung ho", "CK", "thanh toan hoa don", "nop hoc phi", "mua hang", "Chuyển khoản",
	}
	code := func() string {
		f := formats[rng.IntN(len(formats))]
		n := f.SuffixFrom + rng.IntN(f.SuffixTo-f.SuffixFrom+1)
		var b strings.Builder
		b.WriteString(f.Prefix)
		for range n {
			if f.CharacterType == recon.NumberAndLetter && rng.IntN(3) == 0 {
				b.WriteByte(byte('A' + rng.IntN(26)))
			} else {
				b.WriteByte(byte('0' + rng.IntN(10)))
			}
		}
		if rng.IntN(8) == 0 {
			return strings.ToLower(b.String())
		}
		return b.String()
	}
	// nearMiss looks like a code but is none: a space after the prefix, a
	// run too long, or a prefix glued to digits.
	nearMiss := func() string {
		switch rng.IntN(3) {
		case 0:
			return "DH " + fmt.Sprint(1000+rng.IntN(9000))
		case 1:
			return "DH" + fmt.Sprint(1_000_000_000+rng.IntN(1_000_000_000))
		default:
			return fmt.Sprint(rng.IntN(1000)) + "TT" + fmt.Sprint(100000+rng.IntN(900000))
		}
	}
	pick := func(list []string) string { return list[rng.IntN(len(list))] }
	digits := func(k int) string {
		b := make([]byte, k)
		for i := range b {
			b[i] = byte('0' + rng.IntN(10))
		}
		return string(b)
	}
	memos := make([]string, 0, n)
	for len(memos) < n {
		var body string
		withCode := rng.IntN(10) < 6
		c := ""
		if withCode {
			c = code()
		} else if rng.IntN(2) == 0 {
			c = nearMiss()
		}
		switch rng.IntN(7) {
		case 0:
			body = fmt.Sprintf("MBVCB.%s.%s %s.CT tu %s %s toi %s", digits(7), c, pick(phrases), digits(10), pick(names), digits(13))
		case 1:
			body = fmt.Sprintf("IBFT %s %s %s", pick(names), pick(phrases), c)
		case 2:
			body = fmt.Sprintf("TKThe :%s, tai VCB. %s %s", digits(4), c, pick(phrases))
		case 3:
			body = fmt.Sprintf("%s %s %s", pick(names), pick(phrases), c)
		case 4:
			body = fmt.Sprintf("REM Tfr Ac: %s O@L %s %s-%s", digits(10), pick(names), c, digits(6))
		case 5:
			body = fmt.Sprintf("%s.%s.%s.%s", digits(6), c, strings.ReplaceAll(pick(names), " ", ""), digits(8))
		default:
			body = fmt.Sprintf("%s %s GD %s-%s 10:%02d:%02d", c, pick(phrases), digits(6), digits(6), rng.IntN(60), rng.IntN(60))
		}
		if len(body) < 20 || len(body) > 160 {
			continue
		}
		memos = append(memos, body)
	}
	return memos
}

// BenchmarkExtract measures Extractor.Extract over realistic memos with 20
// active formats.
func BenchmarkExtract(b *testing.B) {
	memos := benchMemos(4096)
	e := recon.NewExtractor(benchFormats())
	b.ReportAllocs()
	b.ResetTimer()
	found := 0
	for i := 0; i < b.N; i++ {
		if e.Extract(memos[i%len(memos)]) != "" {
			found++
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "memos/s")
	if b.N >= len(memos) && found == 0 {
		b.Fatal("no codes found")
	}
}

// BenchmarkExtractNaive measures the naive approach on the same memos and
// formats: normalise, then run one compiled regexp per format.
func BenchmarkExtractNaive(b *testing.B) {
	memos := benchMemos(4096)
	naive := newNaiveExtractor(benchFormats())
	b.ReportAllocs()
	b.ResetTimer()
	found := 0
	for i := 0; i < b.N; i++ {
		if naive.extract(memos[i%len(memos)]) != "" {
			found++
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "memos/s")
	if b.N >= len(memos) && found == 0 {
		b.Fatal("no codes found")
	}
}

// naiveExtractor is the obvious implementation, one regexp per active
// format, kept as the benchmark's baseline.
type naiveExtractor struct {
	res      []*regexp.Regexp
	prefixes []int // prefix lengths, by format
}

func newNaiveExtractor(formats []recon.PaymentCodeFormat) *naiveExtractor {
	n := &naiveExtractor{}
	for _, f := range formats {
		if !f.IsActive {
			continue
		}
		class := "0-9"
		if f.CharacterType == recon.NumberAndLetter {
			class = "0-9A-Z"
		}
		p := strings.ToUpper(f.Prefix)
		n.res = append(n.res, regexp.MustCompile(fmt.Sprintf(
			`(?:^|[^\p{L}\p{N}\p{M}])(%s[%s]{%d,%d})(?:[^%s]|$)`, p, class, f.SuffixFrom, f.SuffixTo, class)))
		n.prefixes = append(n.prefixes, len(p))
	}
	return n
}

func (n *naiveExtractor) extract(memo string) string {
	norm := recon.NormalizeMemo(memo)
	best, bestAt, bestLen := "", -1, 0
	for i, re := range n.res {
		loc := re.FindStringSubmatchIndex(norm)
		if loc == nil {
			continue
		}
		if at := loc[2]; bestAt < 0 || at < bestAt || at == bestAt && n.prefixes[i] > bestLen {
			best, bestAt, bestLen = norm[loc[2]:loc[3]], at, n.prefixes[i]
		}
	}
	return best
}
