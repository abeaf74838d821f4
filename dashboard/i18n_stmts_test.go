package dashboard

import (
	"strings"
	"testing"
)

// TestStmtErrorVietnamese: the statement package's refusals read in
// Vietnamese on a Vietnamese page, their row, column and values kept; the
// English page keeps them as they are.
func TestStmtErrorVietnamese(t *testing.T) {
	for _, tc := range []struct{ en, vi string }{
		{`row 12: Số tiền ghi có: "1.5OO.000" is not an amount`, `Dòng 12: Số tiền ghi có: "1.5OO.000" không phải là số tiền`},
		{`row 3: amount_in: "150000,5": VND has no minor unit`, `Dòng 3: amount_in: "150000,5": VND không có phần lẻ`},
		{`row 4: Ngày giao dịch: "31/02/2026" is not a date: use DD/MM/YYYY [HH:MM[:SS]] (day first) or YYYY-MM-DD [HH:MM:SS]`, `Dòng 4: Ngày giao dịch: "31/02/2026" không phải là ngày`},
		{`row 5: Số bút toán: is empty: every row needs the bank's reference`, `Dòng 5: Số bút toán: trống: mỗi dòng cần số tham chiếu của ngân hàng`},
		{`row 6: Ghi có: both Ghi có (1000) and Ghi nợ (5) are set: a row is money in or money out`, `Dòng 6: Ghi có: cả Ghi có (1000) và Ghi nợ (5) đều có giá trị`},
		{`unknown CSV column "Ngay": the known columns are transaction_date, amount_in`, `Cột CSV không xác định "Ngay": các cột được biết là transaction_date (ngày giao dịch), amount_in (tiền vào)`},
		{`the Excel workbook unpacks to more than 512 MiB: it is refused (a zip bomb, or too large a statement)`, `Tệp Excel khi giải nén lớn hơn 512 MiB`},
		{`row 1 of the worksheet "Sheet1" has 257 cells: at most 256 are read`, `Dòng 1 của trang tính "Sheet1" có 257 ô: chỉ đọc tối đa 256.`},
		{`no header row found in the first 31 rows: Recon recognises ...`, `Không tìm thấy dòng tiêu đề trong 31 dòng đầu`},
		{`content: the column of the transfer memo is required`, `Cần nhập cột nội dung.`},
		{`row 2: bank_account_id is required`, `Dòng 2: thiếu tài khoản ngân hàng`},
		{`row 7: reference_number is required and must be at most 128 characters`, `Dòng 7: cột reference_number là bắt buộc và dài tối đa 128 ký tự`},
	} {
		if got := stmtError("vi", tc.en); !strings.HasPrefix(got, tc.vi) {
			t.Errorf("%q\n  = %q\n want %q...", tc.en, got, tc.vi)
		}
		if got := stmtError("en", tc.en); got != tc.en {
			t.Errorf("English %q = %q", tc.en, got)
		}
	}
}
