package recon

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// CodeExplanation says which payment code a memo holds and why: the memo as
// the rules read it, and each place a format's prefix appears with what the
// rules made of it (the "try a memo" tester of the dashboard and
// `recon company try-memo`). Its Code is always what Extractor.Extract
// returns; the explanation is written apart from the fast path, on runes,
// and a property test holds the two together.
type CodeExplanation struct {
	Normalized string // the memo after NormalizeMemo
	Code       string // the payment code found, "" for none
	Candidates []CodeCandidate
	// Ignored names the formats the extractor does not use, and why;
	// IgnoredFormats says the same as data.
	Ignored        []string
	IgnoredFormats []IgnoredFormat
}

// IgnoredFormat is a format the extractor does not use: inactive, or one
// that cannot match anything (its prefix, lengths or character type).
type IgnoredFormat struct {
	Format   int // 1-based number in the company's list
	Prefix   string
	Inactive bool
}

// What the tester says of a candidate (CodeCandidate.Why).
const (
	CandidateInWord = "in_word" // the prefix is inside a word
	CandidateShort  = "short"   // too few characters after the prefix
	CandidateLong   = "long"    // too many: a longer run is not a code
	CandidateLater  = "later"   // a code, but another one comes first
	CandidateMatch  = "match"   // the code found
)

// CodeCandidate is one place a usable format's prefix appears in the
// normalised memo.
type CodeCandidate struct {
	Position int    // in runes of the normalised memo, from 0
	Format   int    // 1-based number of the format in the company's list
	Prefix   string // upper-case
	Text     string // the prefix and the run of allowed characters after it
	Match    bool   // the candidate that won; at most one
	Reason   string // the sentence the tester shows, in English
	// The sentence as data, which the dashboard writes in the reader's
	// language (docs/dashboard.md, Language): Why (Candidate…), After the
	// character before the prefix (CandidateInWord), Count the characters
	// after the prefix, Letters whether the format allows letters, From and
	// To its lengths, First the code that came first (CandidateLater).
	Why             string
	After           string
	Count, From, To int
	Letters         bool
	First           string
}

// ExplainCode explains what the extractor of formats finds in memo.
func ExplainCode(memo string, formats []PaymentCodeFormat) CodeExplanation {
	type usable struct {
		PaymentCodeFormat
		number int
	}
	var out CodeExplanation
	var use []usable
	for i, f := range formats {
		n := i + 1
		switch {
		case !f.IsActive:
			out.Ignored = append(out.Ignored, fmt.Sprintf("format #%d (%s) is inactive", n, f.Prefix))
			out.IgnoredFormats = append(out.IgnoredFormats, IgnoredFormat{Format: n, Prefix: f.Prefix, Inactive: true})
		case f.SuffixFrom < 1 || f.SuffixTo < f.SuffixFrom || !asciiLetters(f.Prefix) ||
			f.CharacterType != NumberOnly && f.CharacterType != NumberAndLetter:
			out.Ignored = append(out.Ignored, fmt.Sprintf("format #%d (%s) cannot match anything (its prefix, lengths or character type)", n, f.Prefix))
			out.IgnoredFormats = append(out.IgnoredFormats, IgnoredFormat{Format: n, Prefix: f.Prefix})
		default:
			f.Prefix = strings.ToUpper(f.Prefix)
			use = append(use, usable{f, n})
		}
	}
	// Longest prefix first; formats with the same prefix in list order.
	slices.SortStableFunc(use, func(a, b usable) int { return len(b.Prefix) - len(a.Prefix) })
	out.Normalized = NormalizeMemo(memo)
	rs := []rune(out.Normalized)
	isWord := func(r rune) bool {
		return r < 0x80 && ('0' <= r && r <= '9' || 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z') ||
			r >= 0x80 && r != unicode.ReplacementChar && (unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r))
	}
	allowed := func(ct CharacterType, r rune) bool {
		return '0' <= r && r <= '9' || ct == NumberAndLetter && 'A' <= r && r <= 'Z'
	}
	for i := range rs {
		wordStart := i == 0 || !isWord(rs[i-1])
		for _, f := range use {
			p := []rune(f.Prefix)
			if len(rs)-i < len(p) || string(rs[i:i+len(p)]) != f.Prefix {
				continue
			}
			end := i + len(p)
			for end < len(rs) && allowed(f.CharacterType, rs[end]) {
				end++
			}
			n := end - i - len(p)
			c := CodeCandidate{Position: i, Format: f.number, Prefix: f.Prefix, Text: string(rs[i:end]),
				Count: n, From: f.SuffixFrom, To: f.SuffixTo, Letters: f.CharacterType == NumberAndLetter}
			kind := map[CharacterType]string{NumberOnly: "digits", NumberAndLetter: "digits or letters"}[f.CharacterType]
			switch {
			case !wordStart:
				c.Why, c.After = CandidateInWord, string(rs[i-1])
				c.Reason = fmt.Sprintf("%s is inside a word (after %q): a code starts a word", f.Prefix, rs[i-1])
			case n < f.SuffixFrom:
				c.Why = CandidateShort
				c.Reason = fmt.Sprintf("%s has %d %s after %s; format #%d needs %d to %d", c.Text, n, kind, f.Prefix, f.number, f.SuffixFrom, f.SuffixTo)
			case n > f.SuffixTo:
				c.Why = CandidateLong
				c.Reason = fmt.Sprintf("%s has %d %s after %s, more than format #%d's %d: a longer run is not a code", c.Text, n, kind, f.Prefix, f.number, f.SuffixTo)
			case out.Code != "":
				c.Why, c.First = CandidateLater, out.Code
				c.Reason = fmt.Sprintf("%s is a code of format #%d too, but %s comes first (the leftmost code wins, then the longest prefix)", c.Text, f.number, out.Code)
			default:
				c.Match, out.Code, c.Why = true, c.Text, CandidateMatch
				c.Reason = fmt.Sprintf("%s: prefix %s at a word start and %d %s (format #%d: %d to %d)", c.Text, f.Prefix, n, kind, f.number, f.SuffixFrom, f.SuffixTo)
			}
			out.Candidates = append(out.Candidates, c)
		}
	}
	return out
}

// Summary is the explanation in one sentence.
func (e CodeExplanation) Summary() string {
	for _, c := range e.Candidates {
		if c.Match {
			return "Found " + c.Reason
		}
	}
	if len(e.Candidates) == 0 {
		return "No payment code: no active format's prefix appears in the memo"
	}
	return "No payment code: " + e.Candidates[0].Reason
}
