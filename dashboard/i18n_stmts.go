package dashboard

import (
	"regexp"
	"strings"
)

// The statement upload's words (bank.go, statements.go; docs/dashboard.md,
// Bank accounts): the preview, the result with its links, the column
// mapping, and the refusals of a file, in both languages.
var stmtMessages = []struct{ key, en, vi string }{
	{"preview_button", "Preview", "Xem trước"},
	{"import_now", "Import without preview", "Nhập ngay không xem trước"},
	{"preview_title", "Preview: nothing is stored yet", "Xem trước: chưa lưu gì"},
	{"preview_summary", "Rows that will be imported", "Số dòng sẽ được nhập"},
	{"preview_bad", "Rows with a problem", "Số dòng có lỗi"},
	{"preview_first", "The first rows, as Recon will store them", "Các dòng đầu tiên, đúng như Recon sẽ lưu"},
	{"preview_confirm", "Confirm the import", "Xác nhận nhập"},
	{"preview_cancel", "Cancel", "Hủy"},
	{"preview_expired", "The preview has expired or was already imported: upload the file again.", "Bản xem trước đã hết hạn hoặc đã được nhập: hãy tải tệp lên lại."},
	{"preview_mapped", "Read with the bank account's saved column mapping.", "Được đọc theo ánh xạ cột đã lưu của tài khoản ngân hàng."},
	{"preview_bad_note", "A file with a bad row stores nothing: fix these rows and upload again.", "Tệp có dòng lỗi sẽ không được lưu: hãy sửa các dòng này rồi tải lên lại."},
	{"col_row", "Row", "Dòng"},
	{"col_date", "Date", "Ngày giao dịch"},
	{"col_in", "Money in", "Tiền vào"},
	{"col_out", "Money out", "Tiền ra"},
	{"col_content", "Memo", "Nội dung"},
	{"col_reference", "Reference", "Số tham chiếu"},
	{"col_code", "Payment code", "Mã thanh toán"},
	{"col_balance", "Balance", "Số dư"},
	{"result_new", "New transactions", "Giao dịch mới"},
	{"result_dup", "Already there", "Đã có từ trước"},
	{"result_paid", "Orders paid", "Đơn hàng đã thanh toán"},
	{"result_exc", "Exceptions opened", "Ngoại lệ mới"},
	{"result_see_tx", "See the transactions", "Xem các giao dịch"},
	{"result_see_exc", "See the exceptions", "Xem các ngoại lệ"},
	{"result_see_orders", "See the paid orders", "Xem các đơn đã thanh toán"},
	{"statement_file_any", "Statement file (Excel .xlsx or CSV as your bank exports it, camt.053, MT940)", "Tệp sao kê (Excel .xlsx hoặc CSV đúng như ngân hàng xuất, camt.053, MT940)"},
	{"upload_banks_help", "The exports of Vietcombank, Techcombank, MB, BIDV, VietinBank, ACB and TPBank are read as they are: title lines, Vietnamese headers (Ngày giao dịch, Số tiền ghi nợ / ghi có, Nội dung, Số dư, Số bút toán…) and totals need no change. Preview first to check the rows.", "Sao kê xuất từ Vietcombank, Techcombank, MB, BIDV, VietinBank, ACB và TPBank được đọc nguyên trạng: dòng tiêu đề, tên cột tiếng Việt (Ngày giao dịch, Số tiền ghi nợ / ghi có, Nội dung, Số dư, Số bút toán…) và dòng tổng cộng không cần sửa. Hãy xem trước để kiểm tra các dòng."},
	{"mapping", "Another layout: column mapping", "Bố cục khác: ánh xạ cột"},
	{"mapping_help", "For an export whose columns Recon does not recognise, write the header of each column exactly as the file shows it; it is saved for the bank account and used by every upload (dashboard, API, command line).", "Với tệp có cột mà Recon không nhận ra, hãy nhập tên tiêu đề của từng cột đúng như trong tệp; ánh xạ được lưu cho tài khoản ngân hàng và dùng cho mọi lần tải lên (trang quản trị, API, dòng lệnh)."},
	{"mapping_date", "Date column", "Cột ngày giao dịch"},
	{"mapping_in", "Money in column", "Cột tiền vào (ghi có)"},
	{"mapping_out", "Money out column", "Cột tiền ra (ghi nợ)"},
	{"mapping_amount", "Signed amount column (instead of in / out)", "Cột số tiền có dấu (thay cho vào / ra)"},
	{"mapping_content", "Memo column", "Cột nội dung"},
	{"mapping_reference", "Reference column", "Cột số tham chiếu"},
	{"mapping_balance", "Balance column", "Cột số dư"},
	{"mapping_sub", "Virtual account column", "Cột tài khoản ảo"},
	{"mapping_save", "Save the mapping", "Lưu ánh xạ"},
	{"mapping_clear", "Remove the mapping", "Xóa ánh xạ"},
	{"mapping_saved", "The column mapping is saved.", "Đã lưu ánh xạ cột."},
	{"mapping_cleared", "The column mapping is removed.", "Đã xóa ánh xạ cột."},
	{"mapping_none", "No saved mapping: the usual bank exports need none.", "Chưa lưu ánh xạ nào: sao kê ngân hàng thông dụng không cần ánh xạ."},
	{"mapping_of", "Saved mapping", "Ánh xạ đã lưu"},
	{"mapping_failed", "The mapping was not saved.", "Ánh xạ chưa được lưu."},
}

func init() {
	for _, m := range stmtMessages {
		messages["en"][m.key], messages["vi"][m.key] = m.en, m.vi
	}
}

// stmtPatterns translate the statement package's refusals (statement's
// RowError and file errors; docs/statements.md, Bank exports) into Vietnamese:
// each is tried in turn on a message, whose parts ($1...) are kept.
var stmtPatterns = []struct {
	re *regexp.Regexp
	vi string
}{
	{regexp.MustCompile(`^row (\d+): (.*)$`), "Dòng $1: $2"},
	{regexp.MustCompile(`^CSV line (\d+): (.*)$`), "Dòng CSV $1: $2"},
	{regexp.MustCompile(`^(.*?): "(.*)" is not an amount: thousands must be grouped by three$`), `$1: "$2" không phải là số tiền: phần nghìn phải được nhóm theo ba chữ số`},
	{regexp.MustCompile(`^(.*?): "(.*)" is not an amount$`), `$1: "$2" không phải là số tiền`},
	{regexp.MustCompile(`^(.*?): "(.*)": VND has no minor unit$`), `$1: "$2": VND không có phần lẻ`},
	{regexp.MustCompile(`^(.*?): "(.*)" is too large for an amount$`), `$1: "$2" quá lớn để là một số tiền`},
	{regexp.MustCompile(`^(.*?): "(.*)": must not have a sign$`), `$1: "$2": không được có dấu`},
	{regexp.MustCompile(`^(.*?): "(.*)" is not a date: the cell holds a number, not a date$`), `$1: "$2" không phải là ngày: ô chứa một con số, không phải ngày`},
	{regexp.MustCompile(`^(.*?): "(.*)" is not a date.*$`), `$1: "$2" không phải là ngày: hãy dùng DD/MM/YYYY [HH:MM[:SS]] (ngày trước) hoặc YYYY-MM-DD [HH:MM:SS]`},
	{regexp.MustCompile(`^(.*?): date is empty$`), "$1: ngày trống"},
	{regexp.MustCompile(`^(.*?): is empty: every row needs the bank's reference$`), "$1: trống: mỗi dòng cần số tham chiếu của ngân hàng"},
	{regexp.MustCompile(`^(.*?): is empty$`), "$1: trống"},
	{regexp.MustCompile(`^(.*?): is zero$`), "$1: bằng 0"},
	{regexp.MustCompile(`^(.*?): no amount: .*$`), "$1: không có số tiền: ô tiền vào và ô tiền ra đều trống hoặc bằng 0"},
	{regexp.MustCompile(`^(.*?): both (.*) \((\d+)\) and (.*) \((\d+)\) are set: a row is money in or money out$`), "$1: cả $2 ($3) và $4 ($5) đều có giá trị: mỗi dòng chỉ là tiền vào hoặc tiền ra"},
	{regexp.MustCompile(`^(.*?): (?:text )?is not valid UTF-8.*$`), "$1: không phải văn bản UTF-8 (hãy lưu tệp dạng UTF-8)"},
	{regexp.MustCompile(`^(.*?): is longer than (\d+) bytes$`), "$1: dài hơn $2 byte"},
	// A row's own check (recon.TransactionInput.Validate) names Recon's fields.
	{regexp.MustCompile(`^bank_account_id is required$`), "thiếu tài khoản ngân hàng"},
	{regexp.MustCompile(`^(\w+) is required and must be at most (\d+) characters$`), "cột $1 là bắt buộc và dài tối đa $2 ký tự"},
	{regexp.MustCompile(`^(\w+) is required$`), "thiếu cột $1"},
	{regexp.MustCompile(`^row: has (\d+) cells, the header has (\d+)$`), "có $1 ô, dòng tiêu đề có $2"},
	{regexp.MustCompile(`^column (\d+): has a value but no name in the header row$`), "cột $1 có giá trị nhưng không có tên ở dòng tiêu đề"},
	{regexp.MustCompile(`^no header row found in the first (\d+) rows: .*$`), "Không tìm thấy dòng tiêu đề trong $1 dòng đầu: Recon nhận ra các cột của sao kê ngân hàng Việt Nam thông dụng (Ngày giao dịch, Số tiền ghi nợ, Số tiền ghi có, Nội dung / Diễn giải, Số dư, Số bút toán / Số tham chiếu) và các cột CSV của Recon; với bố cục khác, hãy lưu ánh xạ cột cho tài khoản ngân hàng."},
	{regexp.MustCompile(`^no header row holding the columns of the bank account's saved mapping \((.*)\) in the first (\d+) rows$`), "Không có dòng tiêu đề nào chứa các cột của ánh xạ đã lưu ($1) trong $2 dòng đầu."},
	{regexp.MustCompile(`^unknown CSV column (.*): the known columns are (.*)$`), "Cột CSV không xác định $1: các cột được biết là $2"},
	{regexp.MustCompile(`^missing CSV column (.*): the known columns are (.*)$`), "Thiếu cột CSV $1: các cột được biết là $2"},
	{regexp.MustCompile(`^CSV column (.*) appears more than once$`), "Cột CSV $1 xuất hiện nhiều lần"},
	{regexp.MustCompile(`^the file is empty: a header row is required$`), "Tệp trống: cần có dòng tiêu đề."},
	{regexp.MustCompile(`^the statement file is empty$`), "Tệp sao kê trống."},
	{regexp.MustCompile(`^(.*) is empty$`), "$1 trống."},
	{regexp.MustCompile(`^the statement file is larger than the limit of (\d+) bytes \((\d+) MiB\)$`), "Tệp sao kê lớn hơn giới hạn $1 byte ($2 MiB)."},
	{regexp.MustCompile(`^choose a statement file to upload$`), "Hãy chọn tệp sao kê để tải lên."},
	{regexp.MustCompile(`^(.*) is an old Excel workbook \(\.xls\).*$`), "$1 là tệp Excel cũ (.xls): hãy lưu lại dạng Excel Workbook (.xlsx) hoặc CSV UTF-8."},
	{regexp.MustCompile(`^(.*) is a zip archive, not an Excel workbook.*$`), "$1 là tệp nén zip, không phải tệp Excel (.xlsx) hay sao kê."},
	{regexp.MustCompile(`^(?:the file|.*) is UTF-16 text.*$`), "Tệp là văn bản UTF-16: hãy lưu dạng CSV UTF-8."},
	{regexp.MustCompile(`^the file is not an Excel workbook \(\.xlsx\).*$`), "Tệp không phải là tệp Excel (.xlsx) hợp lệ."},
	{regexp.MustCompile(`^the file is a zip archive, not an Excel workbook.*$`), "Tệp là tệp nén zip, không phải tệp Excel (.xlsx)."},
	{regexp.MustCompile(`^the Excel workbook unpacks to more than (\d+) MiB.*$`), "Tệp Excel khi giải nén lớn hơn $1 MiB: bị từ chối (tệp nén độc hại hoặc sao kê quá lớn)."},
	{regexp.MustCompile(`^the part (.*) of the Excel workbook unpacks to more than (\d+) MiB.*$`), "Phần $1 của tệp Excel khi giải nén lớn hơn $2 MiB: bị từ chối."},
	{regexp.MustCompile(`^the Excel workbook has (\d+) parts: at most (\d+) are read$`), "Tệp Excel có $1 phần: chỉ đọc tối đa $2."},
	{regexp.MustCompile(`^the Excel workbook has no worksheet$`), "Tệp Excel không có trang tính nào."},
	{regexp.MustCompile(`^the Excel workbook could not be opened: .*$`), "Không mở được tệp Excel."},
	{regexp.MustCompile(`^row (\d+) of the worksheet "(.*)" has (\d+) cells: at most (\d+) are read$`), `Dòng $1 của trang tính "$2" có $3 ô: chỉ đọc tối đa $4.`},
	{regexp.MustCompile(`^row (\d+) of the worksheet "(.*)" is longer than (\d+) bytes$`), `Dòng $1 của trang tính "$2" dài hơn $3 byte.`},
	{regexp.MustCompile(`^the worksheet "(.*)" has more than (\d+) rows.*$`), `Trang tính "$1" có hơn $2 dòng.`},
	{regexp.MustCompile(`^statement is for account (.*), not (.*)$`), "Sao kê thuộc tài khoản $1, không phải $2."},
	{regexp.MustCompile(`^unknown statement format .*$`), "Định dạng sao kê không được hỗ trợ."},
	// The column mapping's refusals (statement.ValidateMapping).
	{regexp.MustCompile(`^date: the column of the transaction date is required$`), "Cần nhập cột ngày giao dịch."},
	{regexp.MustCompile(`^content: the column of the transfer memo is required$`), "Cần nhập cột nội dung."},
	{regexp.MustCompile(`^amount_in: name the column of the money in.*$`), "Cần nhập cột tiền vào, cột tiền ra, hoặc cột số tiền có dấu."},
	{regexp.MustCompile(`^amount: a signed amount column and amount_in / amount_out columns exclude each other$`), "Cột số tiền có dấu và cột tiền vào / tiền ra không dùng cùng nhau."},
	{regexp.MustCompile(`^(\w+): names the same column "(.*)" as (\w+)$`), `Cột "$2" được dùng hai lần.`},
	{regexp.MustCompile(`^(\w+): the column name is longer than (\d+) bytes$`), "Tên cột dài hơn $2 byte."},
}

// stmtColumns are Recon's own CSV columns, named in Vietnamese too.
var stmtColumns = strings.NewReplacer(
	"transaction_date", "transaction_date (ngày giao dịch)", "amount_in", "amount_in (tiền vào)", "amount_out", "amount_out (tiền ra)",
	"transaction_content", "transaction_content (nội dung)", "reference_number", "reference_number (số tham chiếu)",
	"accumulated", "accumulated (số dư)", "sub_account", "sub_account (tài khoản ảo)")

// stmtError writes a statement refusal in the page's language: English as
// it is, Vietnamese through stmtPatterns (a "row N: " prefix, then the
// problem). A message no pattern knows stays as it is.
func stmtError(l lang, msg string) string {
	if l != "vi" {
		return msg
	}
	return translateStmt(msg, 0)
}

func translateStmt(msg string, depth int) string {
	for _, p := range stmtPatterns {
		m := p.re.FindStringSubmatchIndex(msg)
		if m == nil {
			continue
		}
		out := string(p.re.ExpandString(nil, p.vi, msg, m))
		if depth < 2 && (strings.HasPrefix(p.vi, "Dòng $1: ") || strings.HasPrefix(p.vi, "Dòng CSV $1: ")) {
			rest := msg[m[4]:m[5]]
			out = strings.Replace(out, rest, translateStmt(rest, depth+1), 1)
		}
		if strings.Contains(out, "CSV") {
			out = stmtColumns.Replace(out)
		}
		return out
	}
	return msg
}
