package recon

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The dashboard's matched states (TransactionSearch.Matched).
const (
	StateMatched   = "matched"   // a decision of PayingOutcomes: the transfer paid an order
	StateUnmatched = "unmatched" // incoming, and it paid no order
	StateException = "exception" // an open exception (ExceptionStore)
)

// MaxMemoSearch is the longest memo search, in characters.
const MaxMemoSearch = 100

// TransactionSearch is the dashboard's search of a tenant's transactions:
// the §4.3 filter (its Page unused: a search pages by keyset, Before) and
// three filters the API does not have. The store reads a bounded window of
// the rows the §4.3 filter selects, newest first, and keeps those that pass
// the others (TransactionSearchPage says how far it read).
type TransactionSearch struct {
	TransactionFilter
	Code    string // exact payment code, normalised as the extractor does
	Matched string // "", StateMatched, StateUnmatched or StateException
	Memo    string // text the memo contains, both compared after NormalizeMemo
	Before  int64  // a transaction id: only rows after it in the listing's order
	// Direction keeps the money in (DirectionIn: amount_in above zero) or
	// out (DirectionOut), "" for both: the home's tiles open the list of
	// what they count (docs/dashboard.md, "Links between pages").
	Direction string
}

// The directions of TransactionSearch.Direction.
const (
	DirectionIn  = "in"
	DirectionOut = "out"
)

// Searching reports whether a filter beyond §4.3 is set.
func (s TransactionSearch) Searching() bool {
	return s.Code != "" || s.Matched != "" || s.Memo != "" || s.Before != 0 || s.Direction != ""
}

// TransactionSearchPage is a page of a search.
type TransactionSearchPage struct {
	Rows []*Transaction
	// Total is the exact number of rows the search selects when Counted
	// (at least Total when AtLeast).
	Total            int64
	Counted, AtLeast bool
	// Scanned is how many rows of the §4.3 filter were read, back to
	// ReadTo (the transaction date of the last one read).
	Scanned int
	ReadTo  time.Time
	// Next continues the search with older rows (Before); 0 when none is left.
	Next int64
}

// SearchParams are the query parameters TransactionSearch adds to
// TransactionParams.
var SearchParams = []string{"code", "matched", "memo", "before", "direction"}

// ParseTransactionSearch reads the §4.3 parameters (ParseTransactionFilter)
// and SearchParams, as strictly.
func ParseTransactionSearch(q url.Values) (TransactionSearch, error) {
	var s TransactionSearch
	rest := url.Values{}
	for k, v := range q {
		if !slices.Contains(SearchParams, k) {
			rest[k] = v
		}
	}
	var err error
	if s.TransactionFilter, err = ParseTransactionFilter(rest); err != nil {
		return s, err
	}
	if err := CheckParams(q, append(append([]string{}, TransactionParams...), SearchParams...)); err != nil {
		return s, err
	}
	if q.Has("code") {
		s.Code = NormalizeMemo(strings.TrimSpace(q.Get("code")))
		if s.Code == "" || len(s.Code) > 64 || strings.IndexFunc(s.Code, func(r rune) bool {
			return !('0' <= r && r <= '9' || 'A' <= r && r <= 'Z')
		}) >= 0 {
			return s, FieldError("code", "code must be a payment code of 1 to 64 letters and digits, such as DH12345").Saying("q_code")
		}
	}
	switch m := q.Get("matched"); m {
	case "", StateMatched, StateUnmatched, StateException:
		s.Matched = m
	default:
		return s, FieldError("matched", "matched must be %s, %s or %s", StateMatched, StateUnmatched, StateException).Saying("q_choice", "matched")
	}
	switch d := q.Get("direction"); d {
	case "", DirectionIn, DirectionOut:
		s.Direction = d
	default:
		return s, FieldError("direction", "direction must be %s or %s", DirectionIn, DirectionOut).Saying("q_choice", "direction")
	}
	if q.Has("memo") {
		s.Memo = q.Get("memo")
		if n := utf8.RuneCountInString(s.Memo); n == 0 || n > MaxMemoSearch {
			return s, FieldError("memo", "the memo search must be 1 to %d characters", MaxMemoSearch).Saying("q_length", "memo", strconv.Itoa(MaxMemoSearch))
		}
	}
	if q.Has("before") {
		if s.Before, err = strconv.ParseInt(q.Get("before"), 10, 64); err != nil || s.Before <= 0 {
			return s, FieldError("before", "before must be a transaction id").Saying("q_choice", "before")
		}
	}
	return s, nil
}
