package api_test

import (
	"bytes"
	"fmt"
	"testing"

	"recon"
	"recon/api"
	"recon/sqlstore"
)

// TestSandboxTransferReferenceFromRand: a simulated transfer without a
// reference gets one drawn from the handler's Rand, so a test can fix it.
func TestSandboxTransferReferenceFromRand(t *testing.T) {
	b := setup(t, sqlstore.EngineSQLite, func(h *api.Handler) {
		h.Sandbox, h.Rand = true, bytes.NewReader([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	})
	ba := &recon.BankAccount{CompanyID: b.company.ID, BankName: "Vietcombank", AccountNumber: "0071000123456", HolderName: "CONG TY TNHH SAO MAI"}
	if err := b.store.CreateBankAccount(t.Context(), ba); err != nil {
		t.Fatal(err)
	}
	status, _, body := b.do(t, "POST", "/api/v1/sandbox/transfers", "feeder",
		fmt.Sprintf(`{"bank_account_id":%d,"amount":150000,"transaction_content":"chuyen tien"}`, ba.ID))
	if status != 200 {
		t.Fatalf("status %d: %v", status, body)
	}
	if got := body["data"].(map[string]any)["reference_number"]; got != "SIM0001020304050607" {
		t.Errorf("reference_number %v, want SIM0001020304050607 (from the injected bytes)", got)
	}
}
