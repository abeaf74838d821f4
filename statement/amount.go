package statement

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// maxAmount bounds an amount: 15 digits, the width of an MT940 amount, and far
// above any real VND transfer. Sums of amounts are checked for overflow too.
const maxAmount = 999_999_999_999_999

var errNoMinorUnit = errors.New("VND has no minor unit")

// parseDecimal parses digits with an optional decimal separator sep and a
// fraction of zeros into whole VND. It does not allow a sign or grouping.
func parseDecimal(s string, sep byte) (int64, error) {
	if s == "" {
		return 0, errors.New("amount is empty")
	}
	intPart, frac := s, ""
	if i := strings.IndexByte(s, sep); i >= 0 {
		intPart, frac = s[:i], s[i+1:]
	}
	if intPart == "" {
		if frac == "" {
			return 0, fmt.Errorf("%q is not an amount", s)
		}
		intPart = "0" // ",50" or ".00": some exports drop the leading zero
	}
	for i := 0; i < len(frac); i++ {
		if frac[i] < '0' || frac[i] > '9' {
			return 0, fmt.Errorf("%q is not an amount", s)
		}
	}
	n, err := parseDigits(intPart)
	if err != nil {
		return 0, fmt.Errorf("%q %w", s, err)
	}
	if strings.Trim(frac, "0") != "" {
		return 0, fmt.Errorf("%q: %w", s, errNoMinorUnit)
	}
	return n, nil
}

// parseDigits parses a non-empty run of ASCII digits no larger than maxAmount.
func parseDigits(s string) (int64, error) {
	if s == "" {
		return 0, errors.New("is not an amount")
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, errors.New("is not an amount")
		}
		n = n*10 + int64(c-'0')
		if n > maxAmount {
			return 0, errors.New("is too large for an amount")
		}
	}
	return n, nil
}

// parseCSVAmount parses a CSV amount cell: an optional sign when signed,
// digits, optional thousands grouping with "," or "." and an optional decimal
// fraction of zeros. An empty cell is 0. VND is never written with three
// decimals, so a separator followed by exactly three digits (after a first
// group of one to three digits) groups thousands: "150.000", "150,000",
// "1.500.000" and "1,500,000" are whole numbers of VND. When both "." and ","
// occur, the last one is the decimal point ("1.500.000,00", "1,500,000.00").
func parseCSVAmount(s string, signed bool) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	orig := s
	neg := false
	if s[0] == '-' || s[0] == '+' {
		if !signed {
			return 0, fmt.Errorf("%q: must not have a sign", orig)
		}
		neg = s[0] == '-'
		s = s[1:]
	}
	lastDot, lastComma := strings.LastIndexByte(s, '.'), strings.LastIndexByte(s, ',')
	intPart, frac := s, ""
	var group byte
	switch {
	case lastDot >= 0 && lastComma >= 0:
		// Both: the later one is the decimal point, the other groups.
		dec := max(lastDot, lastComma)
		intPart, frac = s[:dec], s[dec+1:]
		group = ','
		if s[dec] == ',' {
			group = '.'
		}
	case lastDot >= 0 || lastComma >= 0:
		sep := byte('.')
		if lastComma >= 0 {
			sep = ','
		}
		head, tail, _ := strings.Cut(s, string(sep))
		switch {
		case strings.IndexByte(tail, sep) >= 0: // "1,500,000"
			group = sep
		case len(tail) == 3 && firstGroup(head) && allDigits(tail): // "150.000"
			group = sep
		default: // "150000.00", "150000,00"
			intPart, frac = head, tail
		}
	}
	if group != 0 {
		groups := strings.Split(intPart, string(group))
		if !firstGroup(groups[0]) {
			return 0, fmt.Errorf("%q is not an amount: thousands must be grouped by three", orig)
		}
		for _, g := range groups[1:] {
			if len(g) != 3 || !allDigits(g) {
				return 0, fmt.Errorf("%q is not an amount: thousands must be grouped by three", orig)
			}
		}
		intPart = strings.Join(groups, "")
	}
	if !allDigits(frac) {
		return 0, fmt.Errorf("%q is not an amount", orig)
	}
	n, err := parseDigits(intPart)
	if err != nil {
		return 0, fmt.Errorf("%q %w", orig, err)
	}
	if strings.Trim(frac, "0") != "" {
		return 0, fmt.Errorf("%q: %w", orig, errNoMinorUnit)
	}
	if neg {
		n = -n
	}
	return n, nil
}

// firstGroup reports whether s can lead a grouped number: one to three
// digits, not starting with 0.
func firstGroup(s string) bool {
	return len(s) >= 1 && len(s) <= 3 && s[0] != '0' && allDigits(s)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// checkCurrency returns an error unless ccy is VND.
func checkCurrency(ccy string) error {
	ccy = strings.TrimSpace(ccy)
	if ccy == "VND" {
		return nil
	}
	if ccy == "" {
		return errors.New("currency is missing: only VND is supported")
	}
	return fmt.Errorf("currency %s is not supported: only VND", trunc(ccy))
}

// parseISODateTime parses an ISO 8601 date or date-time as camt.053 writes
// it (and as CSV may): "2006-01-02", "2006-01-02T15:04:05[.999][Z|±07:00]".
// A date is midnight in loc; a time with an offset is converted into loc; a
// time without one is a wall-clock time in loc.
func parseISODateTime(s string, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if len(s) == 10 || (len(s) > 10 && s[10] != 'T' && s[10] != ' ') {
		// xs:date may carry a zone ("2026-09-17+07:00"): a date is a date.
		t, err := time.ParseInLocation("2006-01-02", s[:min(len(s), 10)], loc)
		if err != nil {
			return time.Time{}, fmt.Errorf("%q is not a date (YYYY-MM-DD)", s)
		}
		if len(s) > 10 && !validZone(s[10:]) {
			return time.Time{}, fmt.Errorf("%q is not a date (YYYY-MM-DD)", s)
		}
		return t, nil
	}
	if hasZone(s) {
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05Z07:00"} {
			if t, err := time.Parse(layout, s); err == nil {
				return t.In(loc), nil
			}
		}
		return time.Time{}, fmt.Errorf("%q is not a date and time", s)
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date and time", s)
}

// hasZone reports whether a date-time ends in Z or a ±hh:mm offset.
func hasZone(s string) bool {
	if strings.HasSuffix(s, "Z") {
		return true
	}
	return len(s) > 16 && validZone(s[len(s)-6:])
}

func validZone(z string) bool {
	if z == "Z" {
		return true
	}
	return len(z) == 6 && (z[0] == '+' || z[0] == '-') && allDigits(z[1:3]) && z[3] == ':' && allDigits(z[4:])
}

// parseCSVDate parses a CSV transaction_date: the ISO forms of
// parseISODateTime or a day-first DD/MM/YYYY [HH:MM[:SS]].
func parseCSVDate(s string, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, errors.New("date is empty")
	}
	if strings.IndexByte(s, '/') < 0 {
		t, err := parseISODateTime(s, loc)
		if err != nil {
			return time.Time{}, fmt.Errorf("%q is not a date: use YYYY-MM-DD [HH:MM:SS] or DD/MM/YYYY [HH:MM:SS]", s)
		}
		return t, nil
	}
	for _, layout := range []string{"2/1/2006", "2/1/2006 15:04", "2/1/2006 15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date: use YYYY-MM-DD [HH:MM:SS] or DD/MM/YYYY [HH:MM:SS] (day first)", s)
}
