package recon

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Transaction listing limits (docs/design.md, D4).
const (
	DefaultTransactionLimit = 20
	MaxTransactionLimit     = 100
	MaxTransactionPage      = 1_000_000
)

// TransactionParams are the query parameters of the transaction listing
// (§4.3), read by ParseTransactionFilter for the API and the dashboard alike.
var TransactionParams = []string{"bank_account_id", "account_number", "reference_number", "from_date", "to_date", "amount_out", "amount_in", "page", "limit"}

// ParseTransactionFilter reads §4.3's query parameters, strictly: an unknown
// parameter, a repeated one or a value of the wrong form is EINVALID naming it.
func ParseTransactionFilter(q url.Values) (TransactionFilter, error) {
	f := TransactionFilter{Page: 1, Limit: DefaultTransactionLimit}
	if err := CheckParams(q, TransactionParams); err != nil {
		return f, err
	}
	intParam := func(name string, lo, hi int64) (int64, bool, error) {
		v := q.Get(name)
		if !q.Has(name) {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < lo || n > hi {
			return 0, false, FieldError(name, "%s must be an integer from %d to %d", name, lo, hi).Saying("q_int", name, strconv.FormatInt(lo, 10), strconv.FormatInt(hi, 10))
		}
		return n, true, nil
	}
	var err error
	var n int64
	var ok bool
	if n, ok, err = intParam("page", 1, MaxTransactionPage); err != nil {
		return f, err
	} else if ok {
		f.Page = int(n)
	}
	if n, ok, err = intParam("limit", 1, MaxTransactionLimit); err != nil {
		return f, err
	} else if ok {
		f.Limit = int(n)
	}
	if f.BankAccountID, _, err = intParam("bank_account_id", 1, math.MaxInt64); err != nil {
		return f, err
	}
	for _, p := range []struct {
		name string
		dst  **int64
	}{{"amount_in", &f.AmountIn}, {"amount_out", &f.AmountOut}} {
		if !q.Has(p.name) {
			continue
		}
		a, err := ParseAmount(q.Get(p.name))
		if err != nil {
			return f, FieldError(p.name, "%s must be a non-negative whole number of VND: %s", p.name, err).Saying("q_amount", p.name)
		}
		*p.dst = &a
	}
	if err := ParseDateRange(q, &f.FromDate, &f.ToDate); err != nil {
		return f, err
	}
	for _, p := range []struct {
		name string
		dst  *string
		max  int
	}{{"account_number", &f.AccountNumber, 34}, {"reference_number", &f.ReferenceNumber, 128}} {
		if !q.Has(p.name) {
			continue
		}
		v := q.Get(p.name)
		if v == "" || len(v) > p.max {
			return f, FieldError(p.name, "%s must be 1 to %d characters", p.name, p.max).Saying("q_length", p.name, strconv.Itoa(p.max))
		}
		*p.dst = v
	}
	return f, nil
}

// CheckParams refuses a query parameter not in known, or given twice.
func CheckParams(q url.Values, known []string) error {
	for name, vals := range q {
		if !slices.Contains(known, name) {
			return FieldError(name, "unknown query parameter %q (known: %s)", name, strings.Join(known, ", ")).Saying("q_unknown", name)
		}
		if len(vals) > 1 {
			return FieldError(name, "query parameter %s is given %d times", name, len(vals)).Saying("q_repeated", name)
		}
	}
	return nil
}

// ParseDateRange reads from_date and to_date, whole days as YYYY-MM-DD,
// from_date not after to_date.
func ParseDateRange(q url.Values, from, to *string) error {
	for _, p := range []struct {
		name string
		dst  *string
	}{{"from_date", from}, {"to_date", to}} {
		if !q.Has(p.name) {
			continue
		}
		v := q.Get(p.name)
		if _, err := time.Parse(DateLayout, v); err != nil || len(v) != 10 {
			return FieldError(p.name, "%s must be a date in the form YYYY-MM-DD", p.name).Saying("q_date", p.name)
		}
		*p.dst = v
	}
	if *from != "" && *to != "" && *from > *to {
		return FieldError("from_date", "from_date must not be after to_date").Saying("q_date_order")
	}
	return nil
}

// ParseAmount reads a whole VND amount: digits, optionally with a zero
// fraction ("150000.00"). VND has no minor unit.
func ParseAmount(s string) (int64, error) {
	whole, frac, hasFrac := strings.Cut(s, ".")
	if hasFrac && (frac == "" || strings.Trim(frac, "0") != "") {
		return 0, fmt.Errorf("VND has no minor unit")
	}
	if whole == "" || strings.TrimLeft(whole, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	n, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || n > MaxAmount {
		return 0, fmt.Errorf("at most %d", int64(MaxAmount))
	}
	return n, nil
}
