package recon_test

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"pgregory.net/rapid"

	"recon"
)

func format(prefix string, from, to int, ct recon.CharacterType) recon.PaymentCodeFormat {
	return recon.PaymentCodeFormat{Prefix: prefix, SuffixFrom: from, SuffixTo: to, CharacterType: ct, IsActive: true}
}

func inactive(f recon.PaymentCodeFormat) recon.PaymentCodeFormat { f.IsActive = false; return f }

// shopFormats is a typical company's list: the table tests and
// testdata/memos.txt use it.
var shopFormats = []recon.PaymentCodeFormat{
	format("DH", 4, 8, recon.NumberOnly),
	format("SM", 6, 8, recon.NumberAndLetter),
	inactive(format("HD", 3, 6, recon.NumberOnly)),
}

func TestExtract(t *testing.T) {
	long := strings.Repeat("chuyển khoản ", 60) // 960 bytes: normalised outside the stack buffer
	overlap := []recon.PaymentCodeFormat{format("DH", 5, 6, recon.NumberAndLetter), format("DHA", 5, 5, recon.NumberOnly)}
	samePrefix := []recon.PaymentCodeFormat{format("DH", 4, 4, recon.NumberOnly), format("dh", 4, 8, recon.NumberAndLetter)}
	tests := []struct {
		name    string
		formats []recon.PaymentCodeFormat // shopFormats when nil
		memo    string
		want    string
	}{
		{"plain", nil, "NGUYEN VAN A chuyen tien DH1709 thanh toan", "DH1709"},
		{"after a dot", nil, "MBVCB.3278123.DH12345.CT tu 0071000123 NGUYEN THI B", "DH12345"},
		{"space between prefix and digits", nil, "thanh toán đơn hàng dh 1234", ""},
		{"run shorter than suffix_from", nil, "DH12", ""},
		{"not at a word start", nil, "ADH12345", ""},
		{"glued to an account number", nil, "0071000123DH1234", ""},
		{"Đ folds to D", nil, "ĐH12345", "DH12345"},
		{"đ lower case", nil, "thanh toan đh12345", "DH12345"},
		{"run longer than suffix_to", nil, "DH12345678901", ""},
		{"run exactly suffix_to", nil, "DH12345678", "DH12345678"},
		{"run one over suffix_to", nil, "DH123456789", ""},
		{"NumberOnly run ended by a letter", nil, "DH12345678X", "DH12345678"},
		{"NumberOnly run ended by letters", nil, "DH1234ABC", "DH1234"},
		{"leftmost wins", nil, "Thanh toan DH0001,DH0002", "DH0001"},
		{"leftmost across formats", nil, "SM8K2J9Q DH1234", "SM8K2J9Q"},
		{"later match after a failed one", nil, "DH 1234 DH123456789 DH5678", "DH5678"},
		{"inactive format ignored", nil, "HD123 thanh toan", ""},
		{"inactive format skipped for an active one", nil, "HD123 DH1234", "DH1234"},
		{"NumberAndLetter", nil, "ck SM8K2J9Q", "SM8K2J9Q"},
		{"NumberAndLetter lower case", nil, "ck sm8k2j9q", "SM8K2J9Q"},
		{"NumberAndLetter too long", nil, "SM8K2J9QZXY", ""},
		{"NumberAndLetter swallows a Vietnamese letter", nil, "SM8K2J9Ế", "SM8K2J9E"},
		{"NumberAndLetter ends at a non-Vietnamese letter", nil, "SM8K2J9Qü", "SM8K2J9Q"},
		{"empty memo", nil, "", ""},
		{"only diacritics", nil, "àáảãạ ệ ữ", ""},
		{"only combining marks", nil, "\u0301\u0323\u0302", ""},
		{"prefix alone at the end", nil, "thanh toan DH", ""},
		{"dash and underscore separate", nil, "CT-DH1234_x", "DH1234"},
		{"underscore before", nil, "_DH1234", "DH1234"},
		{"slash and colon", nil, "REM:DH1234/2024", "DH1234"},
		{"no-break space separates", nil, "tt\u00a0DH1234", "DH1234"},
		{"em dash separates", nil, "tt—DH1234", "DH1234"},
		{"letter with diacritics glued before", nil, "toánDH1234", ""},
		{"non-Vietnamese letter glued before", nil, "ÜDH1234", ""},
		{"CJK letter glued before", nil, "中DH1234", ""},
		{"superscript digit glued before", nil, "²DH1234", ""},
		{"non-Vietnamese letter after", nil, "DH1234ü", "DH1234"},
		{"NFC memo", nil, "Nguyễn Văn Ánh thanh toán đơn hàng DH20240915", "DH20240915"},
		{"NFD memo", nil, "Nguye\u0302\u0303n Va\u0306n A\u0301nh thanh toa\u0301n DH20240915", "DH20240915"},
		{"NFD mark on the prefix", nil, "D\u0323H12345", "DH12345"},
		{"NFD mark inside the suffix", nil, "DH12\u030134", "DH1234"},
		{"NFD mark glues a word to the prefix", nil, "a\u0301DH1234", ""},
		{"code before any non-ASCII byte", nil, "DH1234 thanh toán", "DH1234"},
		{"invalid byte before", nil, "\xffDH1234", "DH1234"},
		{"invalid byte after", nil, "DH1234\xff", "DH1234"},
		{"invalid byte splits the run", nil, "DH12\xff3456", ""},
		{"truncated sequence before", nil, "\xe1\xbaDH1234", "DH1234"},
		{"U+FFFD separates", nil, "\uFFFDDH1234", "DH1234"},
		{"long memo with diacritics", nil, long + "DH98765", "DH98765"},
		{"long memo without a code", nil, long + "DH98", ""},
		{"IBFT", nil, "IBFT NGUYEN VAN A CK DH98765 GD 123456-091524 10:22:33", "DH98765"},
		{"VCB card", nil, "TKThe :0123, tai VCB. DH55555", "DH55555"},
		{"longer prefix wins", overlap, "DHA12345", "DHA12345"},
		{"shorter prefix when the longer fails", overlap, "DHA1234", "DHA1234"},
		{"neither prefix fits", overlap, "DHA123456", ""},
		{"same prefix, list order", samePrefix, "DH1234", "DH1234"},
		{"same prefix, second format", samePrefix, "DH12AB", "DH12AB"},
		{"unusable formats ignored", []recon.PaymentCodeFormat{
			format("D1", 4, 8, recon.NumberOnly), format("", 1, 8, recon.NumberOnly),
			format("XY", 0, 8, recon.NumberOnly), format("XZ", 5, 4, recon.NumberOnly),
			format("XW", 4, 8, "Letters"), format("ĐH", 4, 8, recon.NumberOnly),
		}, "D11234 1234 XY XY1 XZ12345 XW1234 DH1234", ""},
		{"lower-case prefix in the format", []recon.PaymentCodeFormat{format("dh", 4, 8, recon.NumberOnly)}, "Dh1234", "DH1234"},
		{"no formats", []recon.PaymentCodeFormat{}, "DH1234", ""},
		{"only inactive formats", []recon.PaymentCodeFormat{inactive(format("DH", 4, 8, recon.NumberOnly))}, "DH1234", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			formats := tt.formats
			if formats == nil {
				formats = shopFormats
			}
			if got := recon.NewExtractor(formats).Extract(tt.memo); got != tt.want {
				t.Errorf("Extract(%q) = %q, want %q", tt.memo, got, tt.want)
			}
			if got := refExtract(formats, tt.memo); got != tt.want {
				t.Errorf("reference(%q) = %q, want %q", tt.memo, got, tt.want)
			}
		})
	}
}

func TestExtractNil(t *testing.T) {
	var e *recon.Extractor
	if got := e.Extract("DH1234"); got != "" {
		t.Errorf("nil Extractor: %q", got)
	}
	if got := recon.NewExtractor(nil).Extract("DH1234"); got != "" {
		t.Errorf("NewExtractor(nil): %q", got)
	}
}

// TestExtractMemosFile checks testdata/memos.txt: lines "want<TAB>memo"
// under shopFormats ("-" for no code), in Go-quoted form when the memo
// starts with a double quote.
func TestExtractMemosFile(t *testing.T) {
	e := recon.NewExtractor(shopFormats)
	lines := readMemos(t)
	if len(lines) < 20 {
		t.Fatalf("testdata/memos.txt holds %d memos", len(lines))
	}
	for _, l := range lines {
		if got := e.Extract(l.memo); got != l.want {
			t.Errorf("Extract(%q) = %q, want %q", l.memo, got, l.want)
		}
	}
}

type memoLine struct{ want, memo string }

func readMemos(t testing.TB) []memoLine {
	f, err := os.Open("testdata/memos.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []memoLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		want, memo, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("testdata/memos.txt: no tab in %q", line)
		}
		if want == "-" {
			want = ""
		}
		out = append(out, memoLine{want, memo})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// vietnamese lists every Vietnamese letter with diacritics, lower case.
const vietnamese = "à á ả ã ạ ă ằ ắ ẳ ẵ ặ â ầ ấ ẩ ẫ ậ è é ẻ ẽ ẹ ê ề ế ể ễ ệ ì í ỉ ĩ ị " +
	"ò ó ỏ õ ọ ô ồ ố ổ ỗ ộ ơ ờ ớ ở ỡ ợ ù ú ủ ũ ụ ư ừ ứ ử ữ ự ỳ ý ỷ ỹ ỵ đ"

// vietnameseNFD is vietnamese followed by its upper case, decomposed (NFD,
// from Python's unicodedata; Đ and đ have no decomposition).
const vietnameseNFD = "a\u0300 a\u0301 a\u0309 a\u0303 a\u0323 a\u0306 a\u0306\u0300 a\u0306\u0301 a\u0306\u0309 a\u0306\u0303 a\u0323\u0306 a\u0302 a\u0302\u0300 a\u0302\u0301 a\u0302\u0309 a\u0302\u0303 a\u0323\u0302 e\u0300 e\u0301 e\u0309 e\u0303 e\u0323 e\u0302 e\u0302\u0300 e\u0302\u0301 e\u0302\u0309 e\u0302\u0303 e\u0323\u0302 i\u0300 i\u0301 i\u0309 i\u0303 i\u0323 o\u0300 o\u0301 o\u0309 o\u0303 o\u0323 o\u0302 o\u0302\u0300 o\u0302\u0301 o\u0302\u0309 o\u0302\u0303 o\u0323\u0302 o\u031B o\u031B\u0300 o\u031B\u0301 o\u031B\u0309 o\u031B\u0303 o\u031B\u0323 u\u0300 u\u0301 u\u0309 u\u0303 u\u0323 u\u031B u\u031B\u0300 u\u031B\u0301 u\u031B\u0309 u\u031B\u0303 u\u031B\u0323 y\u0300 y\u0301 y\u0309 y\u0303 y\u0323 \u0111 " +
	"A\u0300 A\u0301 A\u0309 A\u0303 A\u0323 A\u0306 A\u0306\u0300 A\u0306\u0301 A\u0306\u0309 A\u0306\u0303 A\u0323\u0306 A\u0302 A\u0302\u0300 A\u0302\u0301 A\u0302\u0309 A\u0302\u0303 A\u0323\u0302 E\u0300 E\u0301 E\u0309 E\u0303 E\u0323 E\u0302 E\u0302\u0300 E\u0302\u0301 E\u0302\u0309 E\u0302\u0303 E\u0323\u0302 I\u0300 I\u0301 I\u0309 I\u0303 I\u0323 O\u0300 O\u0301 O\u0309 O\u0303 O\u0323 O\u0302 O\u0302\u0300 O\u0302\u0301 O\u0302\u0309 O\u0302\u0303 O\u0323\u0302 O\u031B O\u031B\u0300 O\u031B\u0301 O\u031B\u0309 O\u031B\u0303 O\u031B\u0323 U\u0300 U\u0301 U\u0309 U\u0303 U\u0323 U\u031B U\u031B\u0300 U\u031B\u0301 U\u031B\u0309 U\u031B\u0303 U\u031B\u0323 Y\u0300 Y\u0301 Y\u0309 Y\u0303 Y\u0323 \u0110"

// vietnameseBases is the normalisation of vietnamese (and of its upper case).
const vietnameseBases = "A A A A A A A A A A A A A A A A A E E E E E E E E E E E I I I I I " +
	"O O O O O O O O O O O O O O O O O U U U U U U U U U U U Y Y Y Y Y D"

func TestNormalizeMemo(t *testing.T) {
	upper := strings.Map(unicode.ToUpper, vietnamese)
	if strings.Count(vietnamese, " ")+1 != 67 || upper == vietnamese {
		t.Fatal("bad vietnamese list")
	}
	tests := []struct{ name, in, want string }{
		{"NFC lower", vietnamese, vietnameseBases},
		{"NFC upper", upper, vietnameseBases},
		{"NFD", vietnameseNFD, vietnameseBases + " " + vietnameseBases},
		{"sentence", "Thanh toán đơn hàng #12, cảm ơn!", "THANH TOAN DON HANG #12, CAM ON!"},
		{"ASCII", "abc XYZ 0123 _-.", "ABC XYZ 0123 _-."},
		{"empty", "", ""},
		{"non-Vietnamese letters kept", "ü ß Ñ î 中 ²", "ü ß Ñ î 中 ²"},
		{"any nonspacing mark dropped", "u\u0308 n\u0303 x\u20d7", "U N X"},
		{"enclosing mark kept", "1\u20dd", "1\u20dd"},
		{"invalid bytes", "a\xffb\xe1\xbac", "A\uFFFDB\uFFFD\uFFFDC"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := recon.NormalizeMemo(tt.in); got != tt.want {
				t.Errorf("NormalizeMemo(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := refNormalize(tt.in); got != tt.want {
				t.Errorf("reference(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// Every Vietnamese letter with diacritics, in NFC and NFD form, folds to the
// same letter everywhere a code can stand.
func TestExtractVietnameseLetters(t *testing.T) {
	bases := strings.Fields(vietnameseBases)
	forms := [][]string{
		strings.Fields(vietnamese),
		strings.Fields(strings.Map(unicode.ToUpper, vietnamese)),
		strings.Fields(vietnameseNFD)[:len(bases)],
		strings.Fields(vietnameseNFD)[len(bases):],
	}
	for _, list := range forms {
		for i, letter := range list {
			base := bases[i]
			e := recon.NewExtractor([]recon.PaymentCodeFormat{
				format(base+"Q", 2, 4, recon.NumberAndLetter), format("ZZ", 2, 4, recon.NumberAndLetter),
			})
			cases := map[string]string{
				letter + "Q12":       base + "Q12", // prefix letter
				"ZZ1" + letter:       "ZZ1" + base, // suffix letter
				letter + "ZZ12":      "",           // a letter glues the prefix to a word
				"ZZ1234" + letter:    "",           // and lengthens a run
				"x " + letter + "Q1": "",           // too short
			}
			for memo, want := range cases {
				if got := e.Extract(memo); got != want {
					t.Errorf("Extract(%q) = %q, want %q", memo, got, want)
				}
			}
		}
	}
}

func TestExtractAllocs(t *testing.T) {
	e := recon.NewExtractor(shopFormats)
	tests := []struct {
		memo string
		want float64
	}{
		{"NGUYEN VAN A chuyen tien thanh toan don hang", 0},
		{"Nguyễn Văn A chuyển tiền thanh toán đơn hàng", 0},
		{strings.Repeat("Nguyễn Văn A chuyển tiền ", 40), 0},
		{"NGUYEN VAN A chuyen tien DH1709 thanh toan", 0}, // a substring of the memo
		{"Nguyễn Văn A chuyển tiền DH1709 thanh toán", 0},
		{"NGUYEN VAN A chuyen tien dh1709 thanh toan", 1}, // upper-cased
		{"Nguyễn Văn A chuyển tiền ĐH1709 thanh toán", 1}, // normalised
		{"Nguyễn Văn A chuyển tiền DH17\u030109 thanh toán", 1},
	}
	for _, tt := range tests {
		if got := testing.AllocsPerRun(100, func() { e.Extract(tt.memo) }); got != tt.want {
			t.Errorf("Extract(%q): %v allocations, want %v", tt.memo, got, tt.want)
		}
	}
}

// The naive regexp extractor of the benchmark finds the same codes in the
// benchmark's memos, so the two benchmarks compare the same work.
func TestExtractNaiveAgrees(t *testing.T) {
	memos := benchMemos(2000)
	formats := benchFormats()
	e := recon.NewExtractor(formats)
	naive := newNaiveExtractor(formats)
	found := 0
	for _, m := range memos {
		got, want := e.Extract(m), naive.extract(m)
		if got != want {
			t.Errorf("Extract(%q) = %q, naive %q", m, got, want)
		}
		if got != refExtract(formats, m) {
			t.Errorf("Extract(%q) = %q, reference %q", m, got, refExtract(formats, m))
		}
		if got != "" {
			found++
		}
	}
	if share := float64(found) / float64(len(memos)); share < 0.5 || share > 0.7 {
		t.Errorf("%.2f of the benchmark memos hold a code, want about 0.6", share)
	}
}

func TestExtractProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		formats := genFormats().Draw(t, "formats")
		memo := genMemo(formats).Draw(t, "memo")
		got := recon.NewExtractor(formats).Extract(memo)
		if want := refExtract(formats, memo); got != want {
			t.Fatalf("Extract(%q) = %q, reference %q", memo, got, want)
		}
		norm := recon.NormalizeMemo(memo)
		if want := refNormalize(memo); norm != want {
			t.Fatalf("NormalizeMemo(%q) = %q, reference %q", memo, norm, want)
		}
		if !utf8.ValidString(norm) || recon.NormalizeMemo(norm) != norm {
			t.Fatalf("NormalizeMemo(%q) = %q: invalid UTF-8 or not idempotent", memo, norm)
		}
		if again := recon.NewExtractor(formats).Extract(norm); again != got {
			t.Fatalf("Extract(%q) = %q but Extract of its normalisation %q = %q", memo, got, norm, again)
		}
	})
}

// genFormats draws small format lists over few letters, so that prefixes
// overlap and collide, with now and then an inactive or unusable format.
func genFormats() *rapid.Generator[[]recon.PaymentCodeFormat] {
	letters := []rune("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
	return rapid.Custom(func(t *rapid.T) []recon.PaymentCodeFormat {
		// Three letters per list, in both cases, so that prefixes overlap;
		// one a letter Vietnamese letters fold to, so that "Đ", "ơ", ...
		// meet prefixes.
		alphabet := rapid.SliceOfNDistinct(rapid.SampledFrom(letters), 2, 2, rapid.ID).Draw(t, "alphabet")
		alphabet = append(alphabet, rapid.SampledFrom([]rune("DdAaEeIiOoUuYy")).Draw(t, "folded"))
		for _, r := range alphabet {
			alphabet = append(alphabet, unicode.SimpleFold(r))
		}
		return rapid.SliceOfN(genFormat(alphabet), 0, 5).Draw(t, "formats")
	})
}

func genFormat(alphabet []rune) *rapid.Generator[recon.PaymentCodeFormat] {
	return rapid.Custom(func(t *rapid.T) recon.PaymentCodeFormat {
		prefix := rapid.StringOfN(rapid.SampledFrom(alphabet), 1, 3, -1).Draw(t, "prefix")
		from := rapid.IntRange(0, 6).Draw(t, "from")
		to := from + rapid.IntRange(-1, 5).Draw(t, "span")
		ct := rapid.SampledFrom([]recon.CharacterType{recon.NumberOnly, recon.NumberAndLetter, recon.NumberOnly, recon.NumberAndLetter, "Other"}).Draw(t, "type")
		active := rapid.IntRange(0, 4).Draw(t, "active") > 0
		return recon.PaymentCodeFormat{Prefix: prefix, SuffixFrom: from, SuffixTo: to, CharacterType: ct, IsActive: active}
	})
}

// genMemo draws memos made of pieces that matter to extraction: the
// formats' prefixes in both cases, digit and letter runs, separators,
// Vietnamese letters in NFC and NFD, other Unicode letters, marks and
// symbols, and invalid UTF-8.
func genMemo(formats []recon.PaymentCodeFormat) *rapid.Generator[string] {
	pieces := []string{
		" ", " ", ".", ",", "-", "_", "/", ":", "\t", "\u00a0", "—", "\uFFFD",
		"0", "1", "12", "345", "6789", "0123456", "A", "B", "K", "Z", "d", "h", "a", "x",
		"đ", "Đ", "ĐH", "đh", "à", "Ế", "ữ", "ạ", "ơ", "Ư", "ỳ", "\u0301", "\u0323", "\u0302", "\u031B", "a\u0306\u0301",
		"ü", "Ñ", "ß", "中", "²", "\u0308", "\u20dd", "\u00ad", "\u200b",
		"\xff", "\xe1", "\xe1\xba", "\xc0", "\xed\xa0\x80",
		"thanh toán", "chuyen khoan", "NGUYEN VAN A", "MBVCB.3278123.",
	}
	for _, f := range formats {
		pieces = append(pieces, f.Prefix, strings.ToUpper(f.Prefix), strings.ToLower(f.Prefix))
	}
	return rapid.Custom(func(t *rapid.T) string {
		n := rapid.IntRange(0, 24).Draw(t, "pieces")
		var b strings.Builder
		for range n {
			b.WriteString(rapid.SampledFrom(pieces).Draw(t, "piece"))
		}
		return b.String()
	})
}

// The reference implementation: deliberately simple and written apart from
// extract.go. It normalises to runes, then tries every word start with every
// format, longest prefix first.

var refBases = func() map[rune]rune {
	groups := map[rune]string{
		'A': "àáảãạăằắẳẵặâầấẩẫậ", 'E': "èéẻẽẹêềếểễệ", 'I': "ìíỉĩị", 'O': "òóỏõọôồốổỗộơờớởỡợ",
		'U': "ùúủũụưừứửữự", 'Y': "ỳýỷỹỵ", 'D': "đ",
	}
	m := map[rune]rune{}
	for base, letters := range groups {
		for _, r := range letters {
			m[r], m[unicode.ToUpper(r)] = base, base
		}
	}
	return m
}()

func refNormalize(s string) string {
	var out []rune
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case unicode.Is(unicode.Mn, r):
		case refBases[r] != 0:
			out = append(out, refBases[r])
		case r < utf8.RuneSelf:
			out = append(out, unicode.ToUpper(r))
		default:
			out = append(out, r) // an invalid byte decodes to U+FFFD
		}
	}
	return string(out)
}

func refIsWord(r rune) bool {
	if r < utf8.RuneSelf {
		return '0' <= r && r <= '9' || 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}

func refAllowed(ct recon.CharacterType, r rune) bool {
	return '0' <= r && r <= '9' || ct == recon.NumberAndLetter && 'A' <= r && r <= 'Z'
}

func refUsable(f recon.PaymentCodeFormat) bool {
	if !f.IsActive || f.Prefix == "" || f.SuffixFrom < 1 || f.SuffixTo < f.SuffixFrom {
		return false
	}
	if f.CharacterType != recon.NumberOnly && f.CharacterType != recon.NumberAndLetter {
		return false
	}
	for _, r := range f.Prefix {
		if !('A' <= r && r <= 'Z' || 'a' <= r && r <= 'z') {
			return false
		}
	}
	return true
}

func refExtract(formats []recon.PaymentCodeFormat, memo string) string {
	var active []recon.PaymentCodeFormat
	for _, f := range formats {
		if refUsable(f) {
			f.Prefix = strings.ToUpper(f.Prefix)
			active = append(active, f)
		}
	}
	slices.SortStableFunc(active, func(a, b recon.PaymentCodeFormat) int { return len(b.Prefix) - len(a.Prefix) })
	rs := []rune(refNormalize(memo))
	for i := range rs {
		if i > 0 && refIsWord(rs[i-1]) {
			continue
		}
		for _, f := range active {
			p := []rune(f.Prefix)
			if len(rs)-i < len(p) || string(rs[i:i+len(p)]) != f.Prefix {
				continue
			}
			j := i + len(p)
			r := j
			for r < len(rs) && refAllowed(f.CharacterType, rs[r]) {
				r++
			}
			if n := r - j; f.SuffixFrom <= n && n <= f.SuffixTo {
				return string(rs[i:r])
			}
		}
	}
	return ""
}
