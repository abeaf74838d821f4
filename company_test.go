package recon

import (
	"testing"
	"time"
)

func TestRetentionCutoffs(t *testing.T) {
	ict := time.FixedZone("ICT", 7*3600)
	for _, tt := range []struct {
		now            time.Time
		days           int
		wantTx, wantDl string
	}{
		// 03:00 in Hanoi is still the previous day in UTC: the cut follows
		// the business calendar, the wall-clock day of now.
		{time.Date(2026, 6, 15, 3, 0, 0, 0, ict), 30, "2026-05-16 00:00:00", "2026-05-15 20:00:00 UTC"},
		{time.Date(2026, 6, 15, 23, 59, 59, 0, ict), 1, "2026-06-14 00:00:00", "2026-06-14 16:59:59 UTC"},
		{time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC), 1, "2024-02-29 00:00:00", "2024-02-29 12:00:00 UTC"},
		{time.Date(2026, 1, 10, 8, 0, 0, 0, ict), 365, "2025-01-10 00:00:00", "2025-01-10 01:00:00 UTC"},
	} {
		tx, dl := RetentionCutoffs(tt.now, tt.days)
		if got := tx.Format(DateTimeLayout); got != tt.wantTx || tx.Location() != time.UTC {
			t.Errorf("RetentionCutoffs(%v, %d) transactions = %v, want %s (wall clock, as UTC)", tt.now, tt.days, tx, tt.wantTx)
		}
		if got := dl.UTC().Format(DateTimeLayout + " MST"); got != tt.wantDl {
			t.Errorf("RetentionCutoffs(%v, %d) deliveries = %s, want %s", tt.now, tt.days, got, tt.wantDl)
		}
	}
}

func TestCompanyValidateRetention(t *testing.T) {
	for days, ok := range map[int]bool{-1: false, 0: true, 1: true, MaxDataStorageDays: true, MaxDataStorageDays + 1: false} {
		c := Company{FullName: "F", ShortName: "f", Status: CompanyActive, Config: CompanyConfig{DataStorageDays: days}}
		if err := c.Validate(); (err == nil) != ok {
			t.Errorf("Validate with %d days: %v", days, err)
		}
	}
	if (&Company{Status: CompanyInactive}).Active() || !(&Company{Status: CompanyActive}).Active() {
		t.Error("Active")
	}
}
