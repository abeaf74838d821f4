package api_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"os"
	"strings"
	"testing"

	"recon/sqlstore/dbtest"
)

func TestUploadStatement(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		acct := b.account(t, b.company.ID, "101234567890")
		other := b.account(t, b.other.ID, "101234567890")
		mt940, err := os.ReadFile("../statement/testdata/mt940_vietinbank.sta")
		if err != nil {
			t.Fatal(err)
		}
		path := fmt.Sprintf("/api/v1/bank-accounts/%d/statements", acct)
		status, body := b.post(t, path, "text/plain", mt940)
		data, _ := body["data"].(map[string]any)
		if status != 200 || data["format"] != "mt940" || data["imported"].(float64) == 0 {
			t.Fatalf("raw upload: %d %v", status, body)
		}
		imported := data["imported"]
		// The same file with the Content-Type curl's --data-binary sends
		// (a form): still a file, read as one; all duplicates.
		status, body = b.post(t, path, "application/x-www-form-urlencoded", mt940)
		data, _ = body["data"].(map[string]any)
		if status != 200 || data["imported"] != 0.0 || data["duplicates"] != imported {
			t.Fatalf("upload labelled as a form: %d %v", status, body)
		}
		// The same file as multipart: all duplicates.
		var mp bytes.Buffer
		w := multipart.NewWriter(&mp)
		fw, _ := w.CreateFormFile("file", "statement.sta")
		fw.Write(mt940)
		w.Close()
		status, body = b.post(t, path, w.FormDataContentType(), mp.Bytes())
		data, _ = body["data"].(map[string]any)
		if status != 200 || data["imported"] != 0.0 || data["duplicates"] != imported {
			t.Fatalf("multipart upload: %d %v", status, body)
		}
		// Failures.
		csvBad := []byte("transaction_date,amount_in,reference_number,transaction_content\n2026-03-01 08:00:00,100,R1,ok\n2026-03-01,abc,R2,bad\n")
		for _, tt := range []struct {
			name, path string
			body       []byte
			status     int
			message    string
		}{
			{"bad row", path, csvBad, 400, "row 3: "},
			{"unknown format", path + "?format=xls", mt940, 400, "format must be one of auto, csv, xlsx, camt053, mt940"},
			{"unknown parameter", path + "?dry_run=1", mt940, 400, `unknown query parameter "dry_run"`},
			{"empty", path, nil, 400, "the statement file is empty"},
			{"another company's account", fmt.Sprintf("/api/v1/bank-accounts/%d/statements", other), mt940, 404, "not found"},
			{"bad id", "/api/v1/bank-accounts/abc/statements", mt940, 400, "positive integer"},
		} {
			status, body := b.post(t, tt.path, "text/csv", tt.body)
			if status != tt.status || !strings.Contains(fmt.Sprint(body["message"]), tt.message) {
				t.Errorf("%s: %d %v, want %d %q", tt.name, status, body, tt.status, tt.message)
			}
		}
		// The bad CSV stored nothing; with skip_invalid its good row is stored and the bad one reported.
		status, body = b.post(t, path+"?skip_invalid=true", "text/csv", csvBad)
		data, _ = body["data"].(map[string]any)
		if status != 200 || data["imported"] != 1.0 || len(data["skipped"].([]any)) != 1 {
			t.Fatalf("skip_invalid: %d %v", status, body)
		}
	})
}
