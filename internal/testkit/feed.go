package testkit

import (
	"fmt"
	"time"
)

// The load generators' feed (cmd/recon's bench-external, internal/driverbench):
// the seq-th row of it, whatever its account.

// FeedDay0 is the date of the feed's first row; the seq-th follows 15 s
// later (200,000 rows span 35 days, 1,000,000 span 174, 10,000,000 end in
// October 2026: the server refuses dates more than a day ahead).
var FeedDay0 = time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)

// FeedDate is the date of the feed's seq-th row.
func FeedDate(seq int) time.Time { return FeedDay0.Add(time.Duration(seq) * 15 * time.Second) }

// FeedMemos are memos as Vietnamese bank feeds write them: with and without
// diacritics, upper and lower case, in the banks' own wrappers; %[1]d is the
// order number, %[2]d the sequence. One in eight holds no code.
var FeedMemos = []string{
	"NGUYEN VAN AN chuyen tien DH%06[1]d",
	"Thanh toán đơn hàng DH%06[1]d - Nguyễn Thị Bích Ngọc",
	"MBVCB.%[2]d.%06[1]d.TRAN VAN BINH chuyen khoan DH%06[1]d.CT tu 0011004455667 TRAN VAN BINH toi 0071000123456 CONG TY TNHH BINH MINH",
	"IBFT LE THI HOA thanh toan hoa don dh%06[1]d",
	"Chuyển tiền mua hàng, mã DH%06[1]d, cảm ơn shop",
	"PHAM QUOC HUY CK TIEN HANG DH %06[1]d",
	"Hoàn tiền phí dịch vụ tháng 10 (%[2]d)",
	"REM Tfr Ac: 0011004455667 O@L DH%06[1]d VO THI MAI",
}

// FeedRow is a row of the feed: every tenth goes out, amounts cycle over
// 500 values (a filter on one selects 1/500 of an account's rows), and
// references are unique per feed.
type FeedRow struct {
	Date      time.Time
	In, Out   int64
	Memo, Ref string
}

// Feed returns the feed's seq-th row.
func Feed(seq int) FeedRow {
	r := FeedRow{Date: FeedDate(seq), In: int64(1+seq%500) * 1000,
		Memo: fmt.Sprintf(FeedMemos[seq%len(FeedMemos)], seq%1_000_000, seq), Ref: fmt.Sprintf("FT26%09d", seq)}
	if seq%10 == 9 {
		r.In, r.Out = 0, int64(1+seq%50)*1000
	}
	return r
}
