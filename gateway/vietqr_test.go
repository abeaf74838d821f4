package gateway

import (
	"testing"

	"recon"
)

func TestOrderQR(t *testing.T) {
	o := &recon.Order{Amount: 1500000, PaidAmount: 500000, PaymentCode: "DH12345678"}
	for _, tt := range []struct{ bank, bin string }{
		{"Vietcombank", "970436"}, {"VIETCOMBANK", "970436"}, {"MB Bank", "970422"}, {"MBBank", "970422"},
		{"Techcombank", "970407"}, {"VietinBank", "970415"}, {"BIDV", "970418"}, {"ACB", "970416"},
		{"VPBank", "970432"}, {"TPBank", "970423"}, {"Sacombank", "970403"}, {"Ngân hàng lạ", ""},
	} {
		got, ok := orderQR(o, &recon.BankAccount{BankName: tt.bank, AccountNumber: "0071000123456"})
		if tt.bin == "" {
			if ok {
				t.Errorf("%s: a QR for an unknown bank: %s", tt.bank, got)
			}
			continue
		}
		want, _ := recon.VietQR{BIN: tt.bin, Account: "0071000123456", Amount: 1000000, Purpose: "DH12345678"}.Payload()
		if !ok || got != want {
			t.Errorf("%s: %s, want %s", tt.bank, got, want)
		}
	}
}

func TestFormatVND(t *testing.T) {
	for n, want := range map[int64]string{0: "0 ₫", 5: "5 ₫", 999: "999 ₫", 1000: "1.000 ₫", 150000: "150.000 ₫",
		1500000: "1.500.000 ₫", 1234567890: "1.234.567.890 ₫", -20000: "-20.000 ₫"} {
		if got := formatVND(n); got != want {
			t.Errorf("formatVND(%d) = %q, want %q", n, got, want)
		}
	}
}
