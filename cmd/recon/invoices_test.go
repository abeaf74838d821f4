package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestInvoicesCommands: `recon invoices create|issue|replace|adjust|cancel|
// list|show|pdf` act through the invoices service as the named user, in the
// company's test mode (the sandbox provider): the life cycle's rules hold,
// the JSON file is read as strictly as the API reads it (also from stdin),
// and the PDF is written.
func TestInvoicesCommands(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewMigratedURL(t, "sqlite")
	co := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty Sao Mai", "--short-name", "SM")["id"])
	cliJSON(t, dbURL, "company", "update", co, "--legal-name", "Công ty TNHH Sao Mai", "--tax-code", "0100112437",
		"--address", "1 Lê Lợi, TP.HCM", "--invoice-series", "C26TAA")
	cliJSON(t, dbURL, "user", "create", "--company", co, "--email", "a@saomai.vn", "--role", "Admin")
	cliJSON(t, dbURL, "user", "create", "--company", co, "--email", "m@saomai.vn", "--role", "Member")
	dir := t.TempDir()
	file := filepath.Join(dir, "invoice.json")
	body := `{"buyer":{"name":"Nguyễn Văn A","tax_code":"0100112437"},"items":[{"item_name":"Áo thun","quantity":2,"unit_price":50000,"vat_rate":"10"}]}`
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	as := func(user string, args ...string) []string {
		return append(args, "--company", co, "--test", "--user", user)
	}

	if _, err := cli(t, dbURL, as("m@saomai.vn", "invoices", "create", "--file", file)...); err == nil || !strings.Contains(err.Error(), "issue_invoices") {
		t.Errorf("a Member without issue_invoices creates: %v", err)
	}
	if _, err := cli(t, dbURL, "invoices", "create", "--company", co, "--user", "a@saomai.vn", "--file", file); err == nil || !strings.Contains(err.Error(), "no invoice provider") {
		t.Errorf("live mode issues without a provider: %v", err)
	}
	draft := cliJSON(t, dbURL, as("a@saomai.vn", "invoices", "create", "--file", file, "--draft")...)
	if draft["status"] != recon.InvoiceDraft || draft["invoice_number"] != nil || fmt.Sprint(draft["totals"].(map[string]any)["total_amount"]) != "110000" {
		t.Fatalf("draft: %v", draft)
	}
	ref := draft["reference_code"].(string)
	issued := cliJSON(t, dbURL, as("a@saomai.vn", "invoices", "issue", ref)...)
	if issued["status"] != recon.InvoicePending || fmt.Sprint(issued["invoice_number"]) != "1" {
		t.Fatalf("issue: %v", issued)
	}
	// Pending: neither replaced nor cancelled until the provider answers.
	if _, err := cli(t, dbURL, as("a@saomai.vn", "invoices", "cancel", ref, "--reason", "sai")...); err == nil || !strings.Contains(err.Error(), "issued") {
		t.Errorf("cancel a pending invoice: %v", err)
	}
	if _, err := cli(t, dbURL, as("a@saomai.vn", "invoices", "replace", "--original", ref, "--file", file)...); err == nil {
		t.Error("replaced a pending invoice")
	}
	// Strict input: the server's amounts are refused.
	bad := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(bad, []byte(`{"items":[{"item_name":"A","quantity":1,"unit_price":1000,"vat_rate":"10","amount":1}]}`), 0o600)
	if _, err := cli(t, dbURL, as("a@saomai.vn", "invoices", "create", "--file", bad)...); err == nil || !strings.Contains(err.Error(), "amount") {
		t.Errorf("a file with amount: %v", err)
	}
	// From stdin.
	var out bytes.Buffer
	getenv := func(k string) string { return testEnv(dbURL, k) }
	err := run(context.Background(), append(as("a@saomai.vn", "invoices", "create", "--file", "-", "--draft"), "--json"), getenv, strings.NewReader(body), &out, &bytes.Buffer{})
	if err != nil || !strings.Contains(out.String(), `"status": "draft"`) {
		t.Errorf("create from stdin: %v %s", err, out.String())
	}

	list := cliJSON(t, dbURL, "invoices", "list", "--company", co, "--test", "--status", "pending")
	if fmt.Sprint(list["total"]) != "1" {
		t.Errorf("list pending: %v", list)
	}

	// The provider's answer (the server's loop records it): issued.
	db := dbtest.OpenURL(t, dbURL)
	coID, _ := strconv.ParseInt(co, 10, 64)
	tt, err := db.TestTenant(context.Background(), coID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.RecordInvoiceAnswer(context.Background(), tt.ID, ref, recon.InvoiceAnswer{CQTCode: "M1-26-TEST"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	adj := cliJSON(t, dbURL, as("a@saomai.vn", "invoices", "adjust", "--original", ref, "--type", "decrease", "--file", file)...)
	if adj["original_reference_code"] != ref || adj["adjustment_type"] != recon.AdjustDecrease || fmt.Sprint(adj["invoice_number"]) != "2" {
		t.Errorf("adjust: %v", adj)
	}
	if _, err := cli(t, dbURL, as("a@saomai.vn", "invoices", "cancel", ref, "--reason", "sai")...); err == nil || !strings.Contains(err.Error(), "adjust") {
		t.Errorf("cancel an adjusted invoice: %v", err)
	}
	repl := cliJSON(t, dbURL, as("a@saomai.vn", "invoices", "replace", "--original", ref, "--file", file)...)
	if repl["original_reference_code"] != ref || fmt.Sprint(repl["invoice_number"]) != "3" {
		t.Errorf("replace: %v", repl)
	}
	if got := cliJSON(t, dbURL, "invoices", "show", ref, "--company", co, "--test"); got["status"] != recon.InvoiceReplaced {
		t.Errorf("the original after its replacement: %v", got)
	}
	if live := cliJSON(t, dbURL, "invoices", "list", "--company", co); fmt.Sprint(live["total"]) != "0" {
		t.Errorf("live list: %v", live)
	}
	shown := cliJSON(t, dbURL, "invoices", "show", ref, "--company", co, "--test")
	if shown["reference_code"] != ref || shown["tracking_code"] != issued["tracking_code"] {
		t.Errorf("show: %v", shown)
	}
	if _, err := cli(t, dbURL, "invoices", "show", ref, "--company", co); err == nil {
		t.Error("the live mode shows a test invoice")
	}
	pdf := filepath.Join(dir, "hoadon.pdf")
	if _, err := cli(t, dbURL, "invoices", "pdf", ref, "--company", co, "--test", "--out", pdf); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(pdf); err != nil || !bytes.HasPrefix(b, []byte("%PDF")) {
		t.Errorf("pdf: %v %.10q", err, b)
	}
}

// TestInvoicesAPIOnTheServer: recon serve wires the invoice routes with the
// service, its sandbox provider and the signer: a test-mode client's token
// issues an invoice (pending, numbered, its XML signed), checks it by its
// tracking code, gets its PDF; the live mode has no provider; a path under
// /v1/invoices that is no route answers in the v2 envelope.
func TestInvoicesAPIOnTheServer(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL)
		co := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty Sao Mai", "--short-name", "SM")["id"])
		cliJSON(t, dbURL, "company", "update", co, "--legal-name", "Công ty TNHH Sao Mai", "--tax-code", "0100112437",
			"--address", "1 Lê Lợi, TP.HCM", "--invoice-series", "C26TAA")
		token := func(mode ...string) string {
			id := cliJSON(t, dbURL, append([]string{"client", "create", "--company", co, "--name", "shop", "--scopes", "invoice:read invoice:write"}, mode...)...)["client_id"].(string)
			return cliJSON(t, dbURL, "token", "issue", "--client", id, "--user", "", "--ttl", "1h", "--scopes", "invoice:read invoice:write")["access_token"].(string)
		}
		test, live := token("--test"), token()
		body := `{"buyer":{"name":"Nguyễn Văn A"},"items":[{"item_name":"Áo thun","quantity":2,"unit_price":50000,"vat_rate":"10"}]}`
		a := v2Call(t, "POST", base+"/v1/invoices/create", test, "k1", body)
		inv := a.data()
		if a.status != 201 || inv["status"] != recon.InvoicePending || fmt.Sprint(inv["invoice_number"]) != "1" {
			t.Fatalf("create: %s", a)
		}
		ref := inv["reference_code"].(string)
		if a := v2Call(t, "GET", base+"/v1/invoices/create/check/"+inv["tracking_code"].(string), test, "", ""); a.status != 200 || a.data()["status"] != "Pending" {
			t.Errorf("check: %s", a)
		}
		for path, want := range map[string]string{"/xml": "SignatureValue", "/pdf": "%PDF"} {
			req, _ := http.NewRequest("GET", base+"/v1/invoices/"+ref+path, nil)
			req.Header.Set("Authorization", "Bearer "+test)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !bytes.Contains(b, []byte(want)) {
				t.Errorf("%s: %d %.200s", path, resp.StatusCode, b)
			}
		}
		wantV2Error(t, "live issue", v2Call(t, "POST", base+"/v1/invoices/create", live, "", body), 422, recon.RuleNoInvoiceProvider, "provider")
		if a := v2Call(t, "GET", base+"/v1/invoices/"+ref, live, "", ""); a.status != 404 {
			t.Errorf("a test invoice with a live token: %s", a)
		}
		if a := v2Call(t, "GET", base+"/v1/invoices/"+ref+"/nothing", test, "", ""); a.status != 404 || a.body["error_code"] != "not_found" {
			t.Errorf("no route: %s", a)
		}
	})
}
