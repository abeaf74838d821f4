package recon

import (
	"slices"
	"strings"
)

// MaxOtherReferences bounds the alternate references one transaction may
// carry (TransactionInput.References): a camt.053 entry with a few
// transaction details carries a handful; more is not a bank's statement.
const MaxOtherReferences = 16

// CleanReferences returns refs trimmed, without the empty ones, those equal
// to primary (the transaction's reference_number) and repeats, in their
// first order: what is stored as a transaction's other references
// (docs/statements.md, References).
func CleanReferences(primary string, refs []string) []string {
	primary = strings.TrimSpace(primary)
	var out []string
	for _, r := range refs {
		r = strings.TrimSpace(r)
		if r == "" || r == primary || slices.Contains(out, r) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// MinReferenceKey is the shortest part of a reference that counts as a key
// (ReferenceKeys).
const MinReferenceKey = 6

// ReferenceKeys returns the keys by which references are compared when
// looking for possible duplicates (docs/statements.md, References): each
// reference is cut at every character that is not an ASCII letter or digit,
// the parts upper-cased, and each part of at least MinReferenceKey
// characters holding a digit is a key. So "FT26260987654321-FEED",
// "ft26260987654321" and "VCB/FT26260987654321" share the key
// "FT26260987654321", while the words banks add ("FEED", "NONREF",
// "NOTPROVIDED") and short counters are no keys. Two transactions share a
// reference when they share a key. The keys are sorted and unique.
func ReferenceKeys(refs ...string) []string {
	var keys []string
	for _, r := range refs {
		start := -1
		for i := 0; i <= len(r); i++ {
			alnum := i < len(r) && isRefChar(r[i])
			if alnum && start < 0 {
				start = i
			}
			if !alnum && start >= 0 {
				if part := r[start:i]; len(part) >= MinReferenceKey && strings.ContainsAny(part, "0123456789") {
					keys = append(keys, strings.ToUpper(part))
				}
				start = -1
			}
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

func isRefChar(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
}

// SharesReference reports whether two sorted key lists (ReferenceKeys)
// have a key in common.
func SharesReference(a, b []string) bool {
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch strings.Compare(a[i], b[j]) {
		case 0:
			return true
		case -1:
			i++
		default:
			j++
		}
	}
	return false
}
