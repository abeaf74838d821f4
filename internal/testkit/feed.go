package testkit

// FeedMemos are memos as Vietnamese bank feeds write them, for the load
// generators (cmd/recon's bench-external, internal/driverbench): with and
// without diacritics, upper and lower case, in the banks' own wrappers;
// %[1]d is the order number, %[2]d the sequence. One in eight holds no code.
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
