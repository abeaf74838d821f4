package api_test

import (
	"fmt"
	"testing"
	"time"

	"recon"
	"recon/api"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// TestImplausibleDatesRefused: a transaction dated more than a day after
// now or before 2000 is refused, 400 naming transaction_date, with nothing
// stored, by the push and by a statement upload of every format; one dated
// 23 hours ahead is taken (docs/api.md, Transactions).
func TestImplausibleDatesRefused(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, hcm)
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine, func(h *api.Handler) { h.Clock = testkit.NewClock(now) })
		acct := b.account(t, b.company.ID, "101234567890")
		stored := func() int64 {
			t.Helper()
			_, total, err := b.store.Transactions(t.Context(), b.company.Tenant(), recon.TransactionFilter{Page: 1, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			return total
		}
		push := func(date string) string {
			return fmt.Sprintf(`{"transactions":[{"bank_account_id":%d,"transaction_date":"2026-03-01 08:00:00","amount_in":1,"reference_number":"OK1"},`+
				`{"bank_account_id":%d,"transaction_date":%q,"amount_in":1000,"reference_number":"R-%s"}]}`, acct, acct, date, date)
		}
		const field = "transactions[1].transaction_date"
		for _, tt := range []struct{ date, message string }{
			{"9999-12-31 00:00:00", field + " 9999-12-31 00:00:00 is more than a day in the future (now is 2026-03-01 09:00:00)"},
			{"9999-12-31T00:00:00Z", field + " 9999-12-31 07:00:00 is more than a day in the future (now is 2026-03-01 09:00:00)"},
			{"2026-03-02 09:00:01", field + " 2026-03-02 09:00:01 is more than a day in the future (now is 2026-03-01 09:00:00)"},
			{"1999-12-31 00:00:00", field + " 1999-12-31 00:00:00 is before 2000-01-01: a transaction cannot be that old"},
			{"1999-12-31T16:59:59Z", field + " 1999-12-31 23:59:59 is before 2000-01-01: a transaction cannot be that old"},
		} {
			status, _, body := b.do(t, "POST", "/api/v1/transactions", "feeder", push(tt.date))
			errs, _ := body["errors"].(map[string]any)
			if status != 400 || body["error"] != "validation_error" || body["message"] != tt.message || errs[field] == nil {
				t.Errorf("push %s: %d %v, want 400 %q naming %s", tt.date, status, body, tt.message, field)
			}
		}
		if n := stored(); n != 0 {
			t.Fatalf("refused pushes stored %d rows", n)
		}
		for _, date := range []string{"2026-03-02 08:00:00", "2026-03-02 09:00:00", "2000-01-01 00:00:00"} {
			if status, _, body := b.do(t, "POST", "/api/v1/transactions", "feeder", push(date)); status != 200 {
				t.Errorf("push %s: %d %v, want 200", date, status, body)
			}
		}
		if n := stored(); n != 4 {
			t.Fatalf("%d rows stored, want 4", n)
		}

		// Statement uploads: the row is named, nothing of the file stored.
		upload := func(format string, file []byte) (int, map[string]any) {
			t.Helper()
			return b.post(t, fmt.Sprintf("/api/v1/bank-accounts/%d/statements?format=%s", acct, format), "application/octet-stream", file)
		}
		for _, tt := range []struct {
			name, format string
			file         []byte
			message      string
		}{
			{"csv far ahead", "csv", dateCSV("9999-12-31 00:00:00"), "row 3: transaction_date 9999-12-31 00:00:00 is more than a day in the future (now is 2026-03-01 09:00:00)"},
			{"csv before 2000", "csv", dateCSV("31/12/1999"), "row 3: transaction_date 1999-12-31 00:00:00 is before 2000-01-01: a transaction cannot be that old"},
			{"camt.053 far ahead", "camt053", dateCAMT("9999-12-31"), "row 6: transaction_date 9999-12-31 00:00:00 is more than a day in the future (now is 2026-03-01 09:00:00)"},
			{"camt.053 before 2000", "camt053", dateCAMT("1999-12-31"), "row 6: transaction_date 1999-12-31 00:00:00 is before 2000-01-01: a transaction cannot be that old"},
			{"mt940 far ahead", "mt940", dateMT940("991231"), "row 7: transaction_date 2099-12-31 00:00:00 is more than a day in the future (now is 2026-03-01 09:00:00)"},
		} {
			status, body := upload(tt.format, tt.file)
			errs, _ := body["errors"].(map[string]any)
			if status != 400 || body["error"] != "validation_error" || body["message"] != tt.message || errs["transaction_date"] == nil {
				t.Errorf("%s: %d %v, want 400 %q", tt.name, status, body, tt.message)
			}
			if n := stored(); n != 4 {
				t.Fatalf("%s: %d rows stored, want the 4 pushed", tt.name, n)
			}
		}
		for format, file := range map[string][]byte{"csv": dateCSV("2026-03-02 08:00:00"), "camt053": dateCAMT("2026-03-02"), "mt940": dateMT940("260302")} {
			status, body := upload(format, file)
			if data, _ := body["data"].(map[string]any); status != 200 || data["imported"] != 2.0 {
				t.Errorf("%s dated a day ahead: %d %v, want 200 and 2 imported", format, status, body)
			}
		}
	})
}

// dateCSV is a CSV statement of two rows, the second (line 3) dated date.
func dateCSV(date string) []byte {
	return []byte("transaction_date,amount_in,transaction_content,reference_number\n" +
		"2026-03-01 08:00:00,1000,chuyen tien,CSV-OK-" + date + "\n" +
		date + ",2000,chuyen tien,CSV-" + date + "\n")
}

// dateCAMT is a camt.053 statement of two entries, the second booked on date.
func dateCAMT(date string) []byte {
	entry := func(date, ref string) string {
		return `<Ntry><Amt Ccy="VND">1000</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>` + date +
			`</Dt></BookgDt><AcctSvcrRef>` + ref + `</AcctSvcrRef><NtryDtls><TxDtls><RmtInf><Ustrd>chuyen tien</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>`
	}
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>
<GrpHdr><MsgId>M1</MsgId><CreDtTm>2026-03-01T08:00:00+07:00</CreDtTm></GrpHdr>
<Stmt><Id>S1</Id><Acct><Id><Othr><Id>101234567890</Id></Othr></Id></Acct>
` + entry("2026-03-01", "CAMT-OK-"+date) + `
` + entry(date, "CAMT-"+date) + `
</Stmt></BkToCstmrStmt></Document>
`)
}

// dateMT940 is an MT940 statement of two entries, the second (line 7)
// valued on yymmdd (the century is 2000).
func dateMT940(yymmdd string) []byte {
	return []byte(":20:STMT1\n:25:101234567890\n:28C:1/1\n:60F:C260301VND0,\n" +
		":61:260301C1000,NTRFNONREF//MT-OK-" + yymmdd + "\n:86:chuyen tien\n" +
		":61:" + yymmdd + "C1000,NTRFNONREF//MT-" + yymmdd + "\n:86:chuyen tien\n" +
		":62F:C" + yymmdd + "VND2000,\n")
}
