package recon

import "fmt"

// CharacterType is the alphabet of a payment code's suffix.
type CharacterType string

// Character types of a payment-code suffix.
const (
	NumberOnly      CharacterType = "NumberOnly"
	NumberAndLetter CharacterType = "NumberAndLetter"
)

// Limits of a payment-code format (spec §2.3; docs/api.md, Company API;
// docs/design.md, D2).
const (
	PrefixMinLen        = 2
	DefaultPrefixMaxLen = 3
	// PrefixMaxLenCeiling is the highest maximum prefix length a server setting may choose.
	PrefixMaxLenCeiling = 5
	SuffixMin           = 1
	SuffixMax           = 30
	// MaxPaymentCodeFormats bounds the list a company may store.
	MaxPaymentCodeFormats = 50
)

// PaymentCodeFormat describes the payment codes a company asks payers to write
// in the transfer memo: a letter prefix followed by SuffixFrom..SuffixTo
// characters of CharacterType.
type PaymentCodeFormat struct {
	Prefix        string
	SuffixFrom    int
	SuffixTo      int
	CharacterType CharacterType
	IsActive      bool
}

// FormatRuleError returns the error for a failed rule of the format with the
// given 1-based number. Its message names the format number and the rule.
func FormatRuleError(number int, rule string, args ...any) *Error {
	return &Error{Code: EINVALID, Message: fmt.Sprintf("Format #%d: ", number) + fmt.Sprintf(rule, args...)}
}

// ValidPrefix reports the rule a prefix breaks, or "" when it is valid:
// ASCII letters only, length PrefixMinLen..maxLen.
func ValidPrefix(prefix string, maxLen int) string {
	for i := 0; i < len(prefix); i++ {
		c := prefix[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return "prefix must contain letters (A-Z) only"
		}
	}
	if len(prefix) < PrefixMinLen || len(prefix) > maxLen {
		return fmt.Sprintf("prefix must be %d to %d letters long", PrefixMinLen, maxLen)
	}
	return ""
}

// FormatInput is a payment-code format as a request sends it, before
// validation: integers are kept wide so that out-of-range values can be named,
// and a field that was absent or of the wrong JSON type is listed in Bad
// (field name -> "missing" or "type").
type FormatInput struct {
	Prefix        string
	SuffixFrom    int64
	SuffixTo      int64
	CharacterType string
	IsActive      int64
	Bad           map[string]string
	// Unknown names a field the format does not have, if one was sent.
	Unknown string
}

// ValidateFormats checks formats against the rules of docs/design.md, D2, per
// format in order, and reports the first failure as a FormatRuleError naming
// the rule and the 1-based format number. It returns the formats to store,
// prefixes upper-cased. maxPrefixLen is the server's maximum prefix length
// (DefaultPrefixMaxLen unless configured).
func ValidateFormats(in []FormatInput, maxPrefixLen int) ([]PaymentCodeFormat, error) {
	if len(in) > MaxPaymentCodeFormats {
		return nil, FieldError("payment_code_formats", "payment_code_formats must hold at most %d formats", MaxPaymentCodeFormats)
	}
	out := make([]PaymentCodeFormat, 0, len(in))
	seen := make(map[string]int, len(in))
	for i, f := range in {
		n := i + 1
		if f.Unknown != "" {
			return nil, FormatRuleError(n, "unknown field %q", f.Unknown)
		}
		for _, field := range []string{"prefix", "suffix_from", "suffix_to", "character_type", "is_active"} {
			if f.Bad[field] == "missing" {
				return nil, FormatRuleError(n, "%s is required", field)
			}
		}
		if f.Bad["prefix"] != "" {
			return nil, FormatRuleError(n, "prefix must be a string")
		}
		if rule := ValidPrefix(f.Prefix, maxPrefixLen); rule != "" {
			return nil, FormatRuleError(n, "%s", rule)
		}
		if f.Bad["suffix_from"] != "" || f.SuffixFrom < SuffixMin || f.SuffixFrom > SuffixMax {
			return nil, FormatRuleError(n, "suffix_from must be an integer from %d to %d", SuffixMin, SuffixMax)
		}
		if f.Bad["suffix_to"] != "" || f.SuffixTo < SuffixMin || f.SuffixTo > SuffixMax {
			return nil, FormatRuleError(n, "suffix_to must be an integer from %d to %d", SuffixMin, SuffixMax)
		}
		if f.SuffixFrom > f.SuffixTo {
			return nil, FormatRuleError(n, "suffix_from must be less than or equal to suffix_to")
		}
		ct := CharacterType(f.CharacterType)
		if f.Bad["character_type"] != "" || (ct != NumberOnly && ct != NumberAndLetter) {
			return nil, FormatRuleError(n, "character_type must be one of %s, %s", NumberOnly, NumberAndLetter)
		}
		if f.Bad["is_active"] != "" || (f.IsActive != 0 && f.IsActive != 1) {
			return nil, FormatRuleError(n, "is_active must be 0 or 1")
		}
		prefix := toUpperASCII(f.Prefix)
		if first, dup := seen[prefix]; dup {
			return nil, FormatRuleError(n, "prefix %s is already used by format #%d", prefix, first)
		}
		seen[prefix] = n
		out = append(out, PaymentCodeFormat{
			Prefix: prefix, SuffixFrom: int(f.SuffixFrom), SuffixTo: int(f.SuffixTo),
			CharacterType: ct, IsActive: f.IsActive == 1,
		})
	}
	return out, nil
}

func toUpperASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
