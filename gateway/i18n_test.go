package gateway

import (
	"strings"
	"testing"

	"recon"
)

// TestPageTextComplete: every word of the payer's pages exists in both
// languages, and no entry is empty.
func TestPageTextComplete(t *testing.T) {
	for lang, other := range map[string]string{"vi": "en", "en": "vi"} {
		for k, v := range pageText[lang] {
			if strings.TrimSpace(v) == "" {
				t.Errorf("%s: %s is empty", lang, k)
			}
			if _, ok := pageText[other][k]; !ok {
				t.Errorf("%s lacks %s (%q)", other, k, v)
			}
		}
	}
}

func TestBankApps(t *testing.T) {
	vcb := &recon.BankAccount{BankName: "Vietcombank", AccountNumber: "0071000123456"}
	apps := bankApps(vcb, vcb.AccountNumber, 150000, "DH 12/3")
	if len(apps) != len(deepLinkApps) {
		t.Fatalf("%d apps", len(apps))
	}
	if apps[0].Name != "MBBank" || apps[0].URL != "https://dl.vietqr.io/pay?app=mb&ba=0071000123456@vcb&am=150000&tn=DH+12%2F3" {
		t.Errorf("first app %+v", apps[0])
	}
	// A bank virtual account: its number, no memo.
	if a := bankApps(vcb, "VA999", 2000, ""); a[1].URL != "https://dl.vietqr.io/pay?app=icb&ba=VA999@vcb&am=2000" {
		t.Errorf("no memo: %+v", a[1])
	}
	// A bank VietQR does not know: no links (the transfer details only).
	if a := bankApps(&recon.BankAccount{BankName: "Ngân hàng Lạ", AccountNumber: "1"}, "1", 1, "X"); a != nil {
		t.Errorf("unknown bank: %+v", a)
	}
	if got := qrFileName(&recon.Order{InvoiceNumber: "HĐ/2026 01"}); got != "VietQR-H__2026_01.png" {
		t.Errorf("file name %q", got)
	}
}

func TestCountdownText(t *testing.T) {
	for n, want := range map[int64]string{0: "00:00:00", 59: "00:00:59", 3600: "01:00:00", 86399: "23:59:59", 86400: "1 ngày 00:00:00", 3*86400 + 3661: "3 ngày 01:01:01"} {
		if got := countdownText(n, "ngày"); got != want {
			t.Errorf("%d: %q, want %q", n, got, want)
		}
	}
}
