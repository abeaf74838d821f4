package recon_test

import (
	"testing"
	"time"

	"recon"
)

// TestTransactionDateBounds: a transaction may be dated from 2000-01-01 in
// its own time zone to a day after now, the boundaries included
// (docs/api.md, Transactions).
func TestTransactionDateBounds(t *testing.T) {
	hcm := time.FixedZone("ICT", 7*3600)
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, hcm)
	for _, tt := range []struct {
		date time.Time
		err  string
	}{
		{now, ""},
		{now.Add(23 * time.Hour), ""},
		{now.Add(24 * time.Hour), ""},
		{now.Add(24*time.Hour + time.Second), "transactions[0].transaction_date 2026-03-02 09:00:01 is more than a day in the future (now is 2026-03-01 09:00:00)"},
		{time.Date(9999, 12, 31, 0, 0, 0, 0, hcm), "transactions[0].transaction_date 9999-12-31 00:00:00 is more than a day in the future (now is 2026-03-01 09:00:00)"},
		// The same instant as now+23h, read in UTC: still the same instant.
		{now.Add(23 * time.Hour).UTC(), ""},
		{time.Date(2000, 1, 1, 0, 0, 0, 0, hcm), ""},
		{time.Date(1999, 12, 31, 23, 59, 59, 0, hcm), "transactions[0].transaction_date 1999-12-31 23:59:59 is before 2000-01-01: a transaction cannot be that old"},
		{time.Date(1970, 1, 1, 0, 0, 0, 0, hcm), "transactions[0].transaction_date 1970-01-01 00:00:00 is before 2000-01-01: a transaction cannot be that old"},
	} {
		in := recon.TransactionInput{BankAccountID: 1, TransactionDate: tt.date, AmountIn: 1, ReferenceNumber: "R1"}
		err := in.Validate("transactions[0]", now)
		if tt.err == "" {
			if err != nil {
				t.Errorf("%v: %v", tt.date, err)
			}
			continue
		}
		var e *recon.Error
		if recon.ErrorCode(err) != recon.EINVALID || recon.ErrorMessage(err) != tt.err {
			t.Errorf("%v: %v, want %q", tt.date, err, tt.err)
		} else if e, _ = err.(*recon.Error); e == nil || len(e.Fields["transactions[0].transaction_date"]) == 0 {
			t.Errorf("%v: the error names no transaction_date: %+v", tt.date, err)
		}
	}
}
