package recon

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Payment-code extraction (docs/design.md, D3).
//
// The rules are defined on the normalised memo (NormalizeMemo):
//
//   - A word character is an ASCII letter or digit, or a non-ASCII rune that
//     is still there after normalisation and is a Unicode letter, number or
//     mark (categories L, N, M), for example "ß", "Ø", "中", "²". Everything
//     else separates words: spaces, punctuation, symbols, "_", U+FFFD and
//     each byte that is not valid UTF-8.
//   - A match is an active format's prefix at a word start (the start of
//     the memo, or right after a character that is not a word character)
//     followed by the longest run of the format's allowed characters
//     (NumberOnly: 0-9; NumberAndLetter: 0-9 and A-Z); the match holds when
//     the run is suffix_from..suffix_to long. A run longer than suffix_to is
//     no match: "DH123456789" with DH 4..8 gives nothing, while "DH1234ABC"
//     with DH NumberOnly gives DH1234, since a letter ends a NumberOnly run.
//   - The leftmost match wins; at one position the longest prefix wins, and
//     when it gives no match the shorter ones are tried. Two formats with
//     the same prefix are tried in list order.
//
// Extract reads the memo's bytes once, left to right, keeping one bit of
// state: whether the previous character was a word character. A table of
// byte classes lets it pass over ASCII bytes cheaply; it decodes only
// non-ASCII runes, and normalises them one at a time. At a word start whose
// letter begins an active prefix (and whose next character can continue a
// match, as a bitmask per first letter tells) it
// tries the candidate formats of that letter, longest prefix first, on the
// memo's bytes as they are, folding case as it compares. When a non-ASCII
// byte is in the way of that decision (a letter with diacritics in the
// prefix, a combining mark in the run), or when the word starts with such a
// letter, it normalises just the few bytes a match there could span into a
// small stack buffer and decides on those.

// Classes of a byte, in the tables of an Extractor. clsWord must be 1 and
// clsStart 2: Extract shifts the one into the other.
const (
	clsWord  uint8 = 1 << iota // a word character
	clsStart                   // the first letter (either case) of an active prefix
	clsSlow                    // raw memos only: a non-ASCII byte, to decode
	clsDigit                   // allowed in a NumberOnly suffix
	clsAlnum                   // allowed in a NumberAndLetter suffix
)

// In a normalised window, a non-ASCII word character becomes wordRune and any
// other non-ASCII rune or invalid byte becomes a space.
const wordRune = 0x80

// markByte stands, in worthTrying, for a combining mark that normalising
// drops; every letter's second bitmask holds its key, 63.
const markByte = 0xFF

// stackWindow is the size of the stack buffer a window is normalised into;
// formats with longer codes than validation allows make it allocate.
const stackWindow = 64

// Extractor extracts payment codes for one company's formats. Safe for
// concurrent use; build once per format list.
type Extractor struct {
	raw   [256]uint8 // classes of the bytes of a memo as it comes
	norm  [256]uint8 // classes of the bytes of a normalised buffer
	cands [26][]candidate
	// key numbers the bytes that can follow a prefix's first letter: 1..36
	// for digits and ASCII letters, 63 for markByte, 0 for the rest.
	// second[l] has bit key[b] set when b can follow letter l at a match.
	key    [256]uint8
	second [26]uint64
	none   bool // no usable active format
	// window is the longest possible match plus one byte: all a decision
	// at one position looks at.
	window int
	// minLen is the length of the shortest possible match: shorter memos
	// cannot hold a code.
	minLen int
}

// candidate is one active format, filed under its prefix's first letter.
type candidate struct {
	lower   string // the prefix in lower case, compared with byte|0x20
	upper   string // the prefix as it is returned
	from    int
	to      int
	allowed uint8 // clsDigit or clsAlnum
}

// NewExtractor builds an Extractor for formats. It ignores inactive formats
// and formats no stored list can hold: a prefix that is empty or not ASCII
// letters only, suffix_from < 1, suffix_to < suffix_from, or an unknown
// character type. Prefixes are compared case-insensitively. With no
// usable format (nil or empty list included), Extract always returns "".
func NewExtractor(formats []PaymentCodeFormat) *Extractor {
	e := &Extractor{none: true}
	for c := 0; c < 256; c++ {
		var k uint8
		switch {
		case '0' <= c && c <= '9':
			k = clsWord | clsDigit | clsAlnum
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
			k = clsWord | clsAlnum
		}
		e.raw[c], e.norm[c] = k, k
		switch {
		case c >= utf8.RuneSelf:
			e.raw[c] = clsSlow
			if c == markByte {
				e.key[c] = 63
			}
		case '0' <= c && c <= '9':
			e.key[c] = uint8(1 + c - '0')
		case k != 0:
			e.key[c] = uint8(11 + (c | 0x20) - 'a')
		}
	}
	e.norm[wordRune] = clsWord
	for _, f := range formats {
		if !f.IsActive || f.SuffixFrom < 1 || f.SuffixTo < f.SuffixFrom || !asciiLetters(f.Prefix) {
			continue
		}
		var allowed uint8
		switch f.CharacterType {
		case NumberOnly:
			allowed = clsDigit
		case NumberAndLetter:
			allowed = clsAlnum
		default:
			continue
		}
		c := candidate{
			lower: strings.ToLower(f.Prefix), upper: strings.ToUpper(f.Prefix),
			from: f.SuffixFrom, to: f.SuffixTo, allowed: allowed,
		}
		first := c.upper[0]
		e.cands[first-'A'] = append(e.cands[first-'A'], c)
		e.second[first-'A'] |= 1 << e.key[markByte]
		if len(c.upper) > 1 {
			e.second[first-'A'] |= 1 << e.key[c.upper[1]]
		} else {
			for b := range 256 {
				if e.raw[b]&allowed != 0 {
					e.second[first-'A'] |= 1 << e.key[b]
				}
			}
		}
		for _, b := range []byte{first, first | 0x20} {
			e.raw[b] |= clsStart
			e.norm[b] |= clsStart
		}
		if n := len(c.upper) + c.from; e.none || n < e.minLen {
			e.minLen = n
		}
		e.window = max(e.window, len(c.upper)+c.to+1)
		e.none = false
	}
	for i := range e.cands {
		slices.SortStableFunc(e.cands[i], func(a, b candidate) int { return len(b.upper) - len(a.upper) })
	}
	return e
}

func asciiLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return s != ""
}

// Extract returns the payment code in memo, its prefix included and
// upper-cased (e.g. "DH1709"), or "" when the memo holds none. When the
// code stands in the memo as it is returned, the result is a substring of
// memo (sharing its memory); otherwise it is the one allocation Extract
// makes.
func (e *Extractor) Extract(memo string) string {
	if e == nil || e.none || len(memo) < e.minLen {
		return ""
	}
	var prev uint8 // clsWord after a word character
	for i := 0; i < len(memo); {
		k := e.raw[memo[i]]
		// Stop at a non-ASCII byte, and at a prefix letter at a word start.
		if k&(clsSlow|clsStart&^(prev<<1)) == 0 {
			prev = k & clsWord
			i++
			continue
		}
		if k&clsSlow != 0 {
			r, size := utf8.DecodeRuneInString(memo[i:])
			b := matchByte(r, size)
			if b == 0 {
				i += size // a dropped mark: the previous character stays
				continue
			}
			if prev == 0 && e.norm[b]&clsStart != 0 && e.worthTrying(b, memo, i+size) {
				if code := e.tryWindow(memo, i); code != "" {
					return code
				}
			}
			prev = e.norm[b] & clsWord
			i += size
			continue
		}
		// An ASCII prefix letter at a word start: try it if the next
		// character can continue a prefix or start a suffix after it
		// (worthTrying, by hand: it is too big to inline).
		if i+1 == len(memo) {
			break // a match is at least two characters long
		}
		next := memo[i+1]
		if next >= utf8.RuneSelf {
			next = followingByte(memo[i+1:])
		}
		if e.second[(memo[i]|0x20)-'a']>>e.key[next]&1 != 0 {
			end, c, slow := try(memo, i, &e.raw, &e.cands[(memo[i]|0x20)-'a'])
			if c != nil {
				if canonical(memo[i:end]) {
					return memo[i:end]
				}
				return codeString(c.upper, memo[i+len(c.upper):end])
			}
			if slow {
				if code := e.tryWindow(memo, i); code != "" {
					return code
				}
			}
		}
		prev = clsWord
		i++
	}
	return ""
}

// worthTrying reports whether the character at memo[j:] can follow the
// prefix letter first in a match: continue a prefix, or start the suffix
// of a one-letter prefix. A non-ASCII rune there is normalised first.
func (e *Extractor) worthTrying(first byte, memo string, j int) bool {
	if j >= len(memo) {
		return false // a match is at least two characters long
	}
	c := memo[j]
	if c >= utf8.RuneSelf {
		c = followingByte(memo[j:])
	}
	return e.second[(first|0x20)-'a']>>e.key[c]&1 != 0
}

// followingByte returns matchByte of the non-ASCII rune s starts with, or
// markByte when normalising drops it: what follows a mark is unknown here.
func followingByte(s string) byte {
	if b := matchByte(utf8.DecodeRuneInString(s)); b != 0 {
		return b
	}
	return markByte
}

// tryWindow tries the candidates at word start i of memo on the normalised
// text from i, as much of it as a match could span.
func (e *Extractor) tryWindow(memo string, i int) string {
	var arr [stackWindow]byte
	w := arr[:0]
	if e.window > len(arr) {
		w = make([]byte, 0, e.window)
	}
	for i < len(memo) && len(w) < e.window {
		if c := memo[i]; c < utf8.RuneSelf {
			w = append(w, c) // try and codeString fold case themselves
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(memo[i:])
		i += size
		if b := matchByte(r, size); b != 0 {
			w = append(w, b)
		}
	}
	end, c, _ := try(w, 0, &e.norm, &e.cands[(w[0]|0x20)-'a'])
	if c == nil {
		return ""
	}
	return codeString(c.upper, w[len(c.upper):end])
}

// try tries the candidates, longest prefix first, at word start i of s. It
// reports the match's end, or slow when a byte of class clsSlow decides.
func try[T string | []byte](s T, i int, tbl *[256]uint8, list *[]candidate) (end int, c *candidate, slow bool) {
next:
	for n := range *list {
		c := &(*list)[n]
		p := c.lower
		j := i + len(p)
		if len(s)-i < len(p)+c.from {
			continue // normalising never makes a memo longer
		}
		for k := 1; k < len(p); k++ {
			if b := s[i+k]; b|0x20 != p[k] {
				if tbl[b]&clsSlow != 0 {
					return 0, nil, true
				}
				continue next
			}
		}
		limit := min(j+c.to, len(s)-1) // the last byte the run may look at
		r := j
		for r <= limit && tbl[s[r]]&c.allowed != 0 {
			r++
		}
		if r-j > c.to {
			continue // the run is too long, whatever follows
		}
		if r < len(s) && tbl[s[r]]&clsSlow != 0 {
			return 0, nil, true // a mark to drop or a letter to fold may go on with the run
		}
		if r-j >= c.from {
			return r, c, false
		}
	}
	return 0, nil, false
}

// canonical reports whether code, made of ASCII letters and digits, has no
// lower-case letter, so that Extract can return it as it is in the memo.
func canonical(code string) bool {
	for i := 0; i < len(code); i++ {
		if code[i] >= 'a' {
			return false
		}
	}
	return true
}

// codeString returns prefix followed by suffix upper-cased, in one allocation.
func codeString[T string | []byte](prefix string, suffix T) string {
	var arr [64]byte
	b := arr[:0]
	if n := len(prefix) + len(suffix); n > len(arr) {
		b = make([]byte, 0, n)
	}
	b = append(b, prefix...)
	for i := 0; i < len(suffix); i++ {
		c := suffix[i]
		if c >= 'a' {
			c -= 'a' - 'A' // suffix holds only digits and letters
		}
		b = append(b, c)
	}
	return string(b)
}

// matchByte returns what the non-ASCII rune r (or, when size is 1, an
// invalid byte) stands for in a normalised window: its base letter, wordRune,
// a space, or 0 when normalising drops it.
func matchByte(r rune, size int) byte {
	if b := baseLetter(r); b != 0 {
		return b
	}
	switch {
	case size == 1:
		return ' '
	case unicode.Is(unicode.Mn, r):
		return 0
	case unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
		return wordRune
	}
	return ' '
}

// NormalizeMemo returns the memo with diacritics stripped and ASCII
// upper-cased (exported for tests and display). Each Vietnamese letter with
// diacritics, precomposed (NFC), becomes its upper-case ASCII base letter
// ("ệ" → "E", "Đ" → "D"); every nonspacing combining mark (Unicode category
// Mn, which holds the Vietnamese tone and vowel marks of decomposed NFD
// text: U+0300, U+0301, U+0303, U+0309, U+0323, U+0306, U+0302, U+031B) is
// dropped; each byte that is not valid UTF-8 becomes U+FFFD. Other runes are
// kept as they are (so a precomposed non-Vietnamese letter such as "ü"
// stays, while its decomposed form becomes "U"). NormalizeMemo is
// idempotent, and Extract gives the same code for a memo and its
// normalisation.
func NormalizeMemo(memo string) string {
	var b strings.Builder
	b.Grow(len(memo))
	for i := 0; i < len(memo); {
		c := memo[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			b.WriteByte(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(memo[i:])
		base := baseLetter(r)
		switch {
		case size == 1:
			b.WriteRune(utf8.RuneError)
		case base != 0:
			b.WriteByte(base)
		case unicode.Is(unicode.Mn, r):
		default:
			b.WriteString(memo[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Base letters of the Vietnamese letters with diacritics, by code point:
// Latin-1 Supplement U+00C0..U+00DF (and the same pattern 0x20 higher for
// lower case), and Latin Extended Additional U+1EA0..U+1EF9. "." is a letter
// that is not Vietnamese (Ä, Ñ, ...) or no letter.
const (
	latin1Bases = "AAAA....EEE.II....OOOO...UU..Y.."
	extAddBases = "AAAAAAAAAAAAAAAAAAAAAAAA" + // Ạ ạ Ả ả Ấ ấ Ầ ầ Ẩ ẩ Ẫ ẫ Ậ ậ Ắ ắ Ằ ằ Ẳ ẳ Ẵ ẵ Ặ ặ
		"EEEEEEEEEEEEEEEE" + // Ẹ ẹ Ẻ ẻ Ẽ ẽ Ế ế Ề ề Ể ể Ễ ễ Ệ ệ
		"IIII" + // Ỉ ỉ Ị ị
		"OOOOOOOOOOOOOOOOOOOOOOOO" + // Ọ ọ Ỏ ỏ Ố ố Ồ ồ Ổ ổ Ỗ ỗ Ộ ộ Ớ ớ Ờ ờ Ở ở Ỡ ỡ Ợ ợ
		"UUUUUUUUUUUUUU" + // Ụ ụ Ủ ủ Ứ ứ Ừ ừ Ử ử Ữ ữ Ự ự
		"YYYYYYYY" // Ỳ ỳ Ỵ ỵ Ỷ ỷ Ỹ ỹ
)

// baseLetter returns the upper-case ASCII base letter of a Vietnamese letter
// with diacritics (NFC), or 0 for any other rune.
func baseLetter(r rune) byte {
	switch {
	case r < 0xC0:
		return 0
	case r <= 0xFF:
		if b := latin1Bases[(r-0xC0)&0x1F]; b != '.' {
			return b
		}
		return 0
	case r >= 0x1EA0 && r <= 0x1EF9:
		return extAddBases[r-0x1EA0]
	}
	switch r {
	case 'Ă', 'ă':
		return 'A'
	case 'Đ', 'đ':
		return 'D'
	case 'Ĩ', 'ĩ':
		return 'I'
	case 'Ũ', 'ũ':
		return 'U'
	case 'Ơ', 'ơ':
		return 'O'
	case 'Ư', 'ư':
		return 'U'
	}
	return 0
}
