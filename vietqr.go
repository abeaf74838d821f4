package recon

import (
	"fmt"
	"strconv"
	"strings"
)

// bankBINs maps a bank's name, as bank accounts carry it (compared without
// case, spaces, dots and dashes), to its NAPAS BIN, the acquirer id of a
// VietQR. An account at a bank not listed gets no QR: the checkout page
// still shows the transfer details. The domain holds the VietQR code once,
// for every QR Recon draws: the checkout page's, a refund's receiver
// (docs/api-v2.md, Refunds).
var bankBINs = map[string]string{
	"vietcombank": "970436", "vcb": "970436",
	"mbbank": "970422", "mb": "970422", "militarybank": "970422",
	"techcombank": "970407", "tcb": "970407",
	"vietinbank": "970415", "ctg": "970415",
	"bidv":   "970418",
	"acb":    "970416",
	"vpbank": "970432", "vpb": "970432",
	"tpbank": "970423", "tpb": "970423",
	"sacombank": "970403", "stb": "970403",
}

// BankBIN returns the NAPAS BIN of a bank name, or "" when unknown.
func BankBIN(name string) string {
	key := strings.Map(func(r rune) rune {
		switch r {
		case ' ', '.', '-', '_':
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(name)))
	return bankBINs[key]
}

// VietQR is a NAPAS VietQR (EMVCo merchant-presented QR) for a transfer to a
// bank account (service QRIBFTTA).
type VietQR struct {
	BIN     string // the bank's NAPAS BIN, 6 digits
	Account string // the beneficiary account number
	Amount  int64  // VND; 0 lets the payer type it
	Purpose string // the transfer memo: the order's payment code
}

// Payload renders the QR text: ID/length/value objects 00 (format "01"), 01
// (initiation: "12" dynamic when an amount is set, else "11" static), 38
// (GUID A000000727, 01 beneficiary = 00 BIN + 01 account, 02 QRIBFTTA), 53
// currency 704, 54 amount, 58 country VN, 62 additional data (08 purpose),
// and 63 the CRC16-CCITT over everything before it including "6304". It
// fails when a value does not fit its object (account up to 19 characters,
// amount up to 13 digits, purpose up to 25 ASCII characters).
func (q VietQR) Payload() (string, error) {
	if len(q.BIN) != 6 || strings.Trim(q.BIN, "0123456789") != "" {
		return "", fmt.Errorf("vietqr: BIN %q is not 6 digits", q.BIN)
	}
	if q.Account == "" || len(q.Account) > 19 || !vietQRText(q.Account) {
		return "", fmt.Errorf("vietqr: account number %q does not fit (1 to 19 characters)", q.Account)
	}
	amount := ""
	if q.Amount > 0 {
		amount = strconv.FormatInt(q.Amount, 10)
	}
	if q.Amount < 0 || len(amount) > 13 {
		return "", fmt.Errorf("vietqr: amount %d does not fit", q.Amount)
	}
	if len(q.Purpose) > 25 || !vietQRText(q.Purpose) {
		return "", fmt.Errorf("vietqr: purpose %q does not fit (at most 25 ASCII characters)", q.Purpose)
	}
	initiation := "11"
	if amount != "" {
		initiation = "12"
	}
	beneficiary := vietQRObject("00", q.BIN) + vietQRObject("01", q.Account)
	var b strings.Builder
	b.WriteString(vietQRObject("00", "01"))
	b.WriteString(vietQRObject("01", initiation))
	b.WriteString(vietQRObject("38", vietQRObject("00", "A000000727")+vietQRObject("01", beneficiary)+vietQRObject("02", "QRIBFTTA")))
	b.WriteString(vietQRObject("53", "704"))
	if amount != "" {
		b.WriteString(vietQRObject("54", amount))
	}
	b.WriteString(vietQRObject("58", "VN"))
	if q.Purpose != "" {
		b.WriteString(vietQRObject("62", vietQRObject("08", q.Purpose)))
	}
	b.WriteString("6304")
	s := b.String()
	return s + fmt.Sprintf("%04X", crc16CCITT([]byte(s))), nil
}

// vietQRObject is one EMVCo data object: id, two-digit length, value. Values are
// checked to be shorter than 100 bytes by the callers' limits.
func vietQRObject(id, value string) string { return fmt.Sprintf("%s%02d%s", id, len(value), value) }

// crc16CCITT is CRC-16/CCITT-FALSE: polynomial 0x1021, initial value 0xFFFF,
// no reflection, no final XOR (EMVCo QR specification, object 63).
func crc16CCITT(b []byte) uint16 {
	crc := uint16(0xFFFF)
	for _, c := range b {
		crc ^= uint16(c) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

func vietQRText(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7E {
			return false
		}
	}
	return true
}
