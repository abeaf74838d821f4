package demo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"recon"
)

// transactionCount is how many bank transactions the demo seeds, and
// orderCount how many orders, most of which those transactions pay.
const (
	transactionCount = 300
	orderCount       = 150
)

var (
	familyNames = []string{"NGUYEN", "TRAN", "LE", "PHAM", "HOANG", "HUYNH", "VU", "VO", "DANG", "BUI", "DO", "NGO"}
	middleNames = []string{"VAN", "THI", "HUU", "DUC", "MINH", "NGOC", "THANH", "QUANG", "THU"}
	givenNames  = []string{"AN", "BINH", "CHI", "DUNG", "HA", "HUNG", "LAN", "LINH", "NAM", "PHUONG", "QUAN", "TAM", "TRANG", "TUAN", "YEN"}
	// Memo shapes seen on Vietnamese bank statements; %s is the payer, %c the payment code.
	memos = []string{
		"%s chuyen tien %c",
		"%s thanh toan don hang %c",
		"MBVCB.%r.%c.CT tu 0071000%r %s",
		"IBFT %c %s",
		"Thanh toán đơn hàng %c - %s",
		"%c",
		"TKThe :0123, tai VCB. %s chuyen khoan %c",
		"%s CK tien hang %c cam on",
	}
	products = []string{
		"Áo thun cotton nam", "Giày thể thao nữ", "Nồi chiên không dầu 5L", "Tai nghe Bluetooth",
		"Sữa rửa mặt 150ml", "Balo laptop 15 inch", "Bình giữ nhiệt 500ml", "Cà phê rang xay 500g",
	}
	otherMemos = []string{
		"%s chuyen tien",
		"Tra luong thang %m",
		"Phi quan ly tai khoan",
		"Lai tien gui",
		"%s hoan tien",
		"Thanh toan tien dien EVN %r",
	}
)

// seedTransactions adds three bank accounts, 150 orders and a few hundred
// realistic transactions over the last 60 days, about two thirds of them
// carrying a code "DH" + digits: most pay an order (a few short, a few
// twice), some name no order. Matching runs as for any transaction. A fixed
// seed keeps the demo the same every time.
func seedTransactions(ctx context.Context, db Store, companyID int64, loc *time.Location, now time.Time) error {
	r := rand.New(rand.NewPCG(2026, 11))
	var accounts []*recon.BankAccount
	for _, a := range []struct{ bank, number string }{
		{"Vietcombank", "0071000123456"}, {"MBBank", "190366886868"}, {"Techcombank", "19036688001234"},
	} {
		b := &recon.BankAccount{CompanyID: companyID, BankName: a.bank, AccountNumber: a.number, HolderName: "CONG TY TNHH THUONG MAI SAO MAI"}
		if err := db.CreateBankAccount(ctx, b); err != nil {
			return err
		}
		accounts = append(accounts, b)
	}
	var orders []*recon.Order
	for i := range orderCount {
		o := &recon.Order{CompanyID: companyID, InvoiceNumber: fmt.Sprintf("SM-%05d", 1001+i), OrderID: fmt.Sprintf("WEB%06d", 5000+i*7),
			CustomerID: fmt.Sprintf("KH%04d", 100+r.IntN(60)), Amount: int64(50+r.IntN(3000)) * 1000,
			Description: products[r.IntN(len(products))], PaymentCode: fmt.Sprintf("DH%d", 10000+i*37),
			BankAccountID: accounts[0].ID}
		if err := db.CreateOrder(ctx, o); err != nil {
			return err
		}
		orders = append(orders, o)
	}
	start := now.In(loc).AddDate(0, 0, -60)
	next := 0 // the next order to pay
	var batch []recon.TransactionInput
	for i := range transactionCount {
		at := start.Add(time.Duration(i) * 60 * 24 * time.Hour / transactionCount).Add(time.Duration(r.IntN(3600)) * time.Second)
		acct := accounts[r.IntN(len(accounts))]
		in := recon.TransactionInput{BankAccountID: acct.ID, TransactionDate: at,
			ReferenceNumber: fmt.Sprintf("FT%s%06d", at.Format("060102"), r.IntN(1_000_000))}
		payer := familyNames[r.IntN(len(familyNames))] + " " + middleNames[r.IntN(len(middleNames))] + " " + givenNames[r.IntN(len(givenNames))]
		if r.IntN(3) < 2 {
			code := fmt.Sprintf("DH%d", 1000+r.IntN(99000))
			in.AmountIn = int64(50+r.IntN(5000)) * 1000
			if r.IntN(10) < 7 {
				// Orders are paid in turn; now and then a payer pays short,
				// or pays an order a second time.
				o := orders[min(next, len(orders)-1)]
				if r.IntN(30) == 0 && next > 0 {
					o = orders[r.IntN(next)]
				} else {
					next++
				}
				code, in.AmountIn = o.PaymentCode, o.Amount
				if r.IntN(12) == 0 {
					in.AmountIn = o.Amount / 2
				}
			}
			in.Content = expandMemo(memos[r.IntN(len(memos))], payer, code, r, at)
		} else {
			memo := otherMemos[r.IntN(len(otherMemos))]
			if r.IntN(2) == 0 {
				in.AmountIn = int64(10+r.IntN(1000)) * 1000
			} else {
				in.AmountOut = int64(10+r.IntN(3000)) * 1000
			}
			in.Content = expandMemo(memo, payer, "", r, at)
		}
		batch = append(batch, in)
	}
	for len(batch) > 0 {
		n := min(len(batch), recon.MaxIngestBatch)
		if _, err := recon.Ingest(ctx, db, companyID, now, batch[:n]); err != nil {
			return err
		}
		batch = batch[n:]
	}
	return nil
}

// expandMemo fills a memo shape: %s payer, %c code, %r a random number, %m a month.
func expandMemo(shape, payer, code string, r *rand.Rand, at time.Time) string {
	out := make([]byte, 0, len(shape)+32)
	for i := 0; i < len(shape); i++ {
		if shape[i] != '%' || i+1 == len(shape) {
			out = append(out, shape[i])
			continue
		}
		i++
		switch shape[i] {
		case 's':
			out = append(out, payer...)
		case 'c':
			out = append(out, code...)
		case 'r':
			out = fmt.Appendf(out, "%07d", r.IntN(10_000_000))
		case 'm':
			out = append(out, at.Format("01/2006")...)
		}
	}
	return string(out)
}
