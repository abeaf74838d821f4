package dashboard

import (
	"errors"
	"strings"

	"recon"
)

// The words of the exceptions an accountant can close (docs/dashboard.md,
// Exceptions an accountant can close (issue 22)): the overpayment warning, writing off or
// asking for an underpaid order's remainder, the queue's totals, the memo
// search, bulk resolution and the decision history, in both languages.
var excMessages = []struct{ key, en, vi string }{
	// Actions (a decision's name) and the bulk form's choices.
	{"xa_write_off", "Remainder written off", "Đã xóa nợ phần còn thiếu"},
	{"xa_ask_remainder", "Remainder asked for", "Đã yêu cầu trả phần còn thiếu"},
	{"xb_ignore", "Ignore", "Bỏ qua"},

	// Possible duplicates (docs/statements.md, Possible duplicates).
	{"xk_possible_duplicate", "Possible duplicate", "Có thể trùng lặp"},
	{"xa_duplicate", "Confirmed duplicate", "Đã xác nhận trùng lặp"},
	{"xa_distinct", "Confirmed a transfer of its own", "Đã xác nhận là giao dịch riêng"},
	{"x_dup_of", "Same account, amount, date and memo or reference as transaction", "Cùng tài khoản, số tiền, ngày và nội dung hoặc mã tham chiếu với giao dịch"},
	{"x_pick_duplicate", "Duplicate: the same transfer as the first row; it stays out of totals, balances and matching for good", "Trùng lặp: cùng một giao dịch với dòng đầu tiên; giao dịch này không bao giờ được tính vào tổng, số dư và đối soát"},
	{"x_pick_distinct", "Distinct: a transfer of its own; it enters totals and balances in date order and is matched now", "Giao dịch riêng: được tính vào tổng và số dư theo thứ tự ngày và được đối soát ngay"},
	{"dup_possible", "possible duplicate", "có thể trùng lặp"},
	{"dup_duplicate", "duplicate", "trùng lặp"},
	{"dup_distinct", "distinct", "giao dịch riêng"},
	{"mr_dup_memo", "possible duplicate of transaction %d: same account, direction, amount and memo, dated within the duplicate window", "có thể trùng lặp với giao dịch %d: cùng tài khoản, chiều, số tiền và nội dung, trong khoảng ngày xét trùng"},
	{"mr_dup_ref", "possible duplicate of transaction %d: same account, direction and amount, dated within the duplicate window, sharing a reference", "có thể trùng lặp với giao dịch %d: cùng tài khoản, chiều và số tiền, trong khoảng ngày xét trùng, có chung mã tham chiếu"},
	{"xb_refund", "Mark as refunded outside Recon", "Đánh dấu đã hoàn tiền ngoài Recon"},
	{"xb_write_off", "Write off the remainder (underpaid only)", "Xóa nợ phần còn thiếu (chỉ giao dịch trả thiếu)"},

	// An underpaid order's remainder.
	{"x_pick_write_off", "Write off the remainder:", "Xóa nợ phần còn thiếu:"},
	{"x_write_off_help", "The order becomes paid with what was received; the shortfall is recorded as written off, with your name and note, and the shop is notified that the order is paid.", "Đơn hàng được coi là đã thanh toán với số tiền đã nhận; phần thiếu được ghi nhận là xóa nợ, kèm tên và ghi chú của bạn, và cửa hàng được thông báo đơn đã thanh toán."},
	{"x_pick_ask", "Ask the payer for the remainder:", "Yêu cầu người mua trả phần còn thiếu:"},
	{"x_ask_help", "A new virtual account of the order asks for exactly what is left; send its number or QR code to the payer. The exception stays open until the money arrives or you close it.", "Một tài khoản ảo mới của đơn hàng yêu cầu đúng số tiền còn thiếu; hãy gửi số tài khoản hoặc mã QR cho người mua. Ngoại lệ vẫn mở cho đến khi nhận được tiền hoặc bạn đóng nó."},
	{"x_write_off_intro", "The order becomes paid and its shortfall is written off. This cannot be undone.", "Đơn hàng sẽ được coi là đã thanh toán và phần thiếu được xóa nợ. Không thể hoàn tác."},
	{"x_written_off", "Written off", "Số tiền xóa nợ"},
	{"x_ask_intro", "A new virtual account will ask the payer for what the order still lacks.", "Một tài khoản ảo mới sẽ yêu cầu người mua trả số tiền đơn hàng còn thiếu."},
	{"x_asked", "Asked for", "Số tiền yêu cầu"},
	{"x_ask_how", "How", "Cách thức"},
	{"x_ask_how_text", "A virtual account of the order for exactly this amount, with its VietQR code, shown in the decision history to send to the payer. The payer may also pay with the order's payment code.", "Một tài khoản ảo của đơn hàng với đúng số tiền này, kèm mã VietQR, hiện trong lịch sử quyết định để gửi cho người mua. Người mua cũng có thể thanh toán bằng mã thanh toán của đơn hàng."},
	{"x_ask_send", "Send this QR code or the account number to the payer.", "Gửi mã QR hoặc số tài khoản này cho người mua."},

	// The overpayment warning: the transfer, the order, what it still
	// lacks, what would be paid beyond it.
	{"x_overpay_warning", "Overpayment: this transfer of %s is more than order %s still lacks (%s). %s would be paid beyond the order's amount: the order becomes paid and the surplus is left to refund.", "Trả thừa: giao dịch %s lớn hơn số tiền đơn hàng %s còn thiếu (%s). Sẽ thừa %s so với giá trị đơn hàng: đơn hàng được coi là đã thanh toán và phần thừa cần được hoàn lại."},

	// The decision history.
	{"x_h_queued", "queued for a person to decide", "được đưa vào hàng chờ xử lý"},
	{"x_h_kept_open", "the exception stays open", "ngoại lệ vẫn mở"},

	// The list: totals, memo search, bulk.
	{"x_totals", "Totals", "Tổng cộng"},
	{"x_count_unit", "exceptions", "ngoại lệ"},
	{"x_memo_search", "Memo contains", "Nội dung chứa"},
	{"x_memo_search_hint", "e.g. a name or a code", "ví dụ tên hoặc mã"},
	{"x_bulk_pick", "Choose", "Chọn"},
	{"x_bulk_title", "Resolve the chosen exceptions", "Xử lý các ngoại lệ đã chọn"},
	{"x_bulk_help", "Tick the exceptions above, choose one decision and say why: each exception gets its own decision record, after one confirmation.", "Đánh dấu các ngoại lệ ở trên, chọn một cách xử lý và ghi lý do: mỗi ngoại lệ được ghi nhận quyết định riêng, sau một lần xác nhận."},
	{"x_bulk_next", "Continue", "Tiếp tục"},
	{"x_bulk_intro", "Each of these exceptions gets this decision, with its own record:", "Mỗi ngoại lệ dưới đây sẽ được xử lý như sau, với bản ghi riêng:"},
	{"x_bulk_apply", "Resolve them", "Xử lý tất cả"},
	{"x_bulk_count", "Exceptions", "Số ngoại lệ"},
	{"x_bulk_result", "Result", "Kết quả"},
	{"x_bulk_done", "Resolved", "Đã xử lý"},
	{"x_bulk_refused", "Refused", "Bị từ chối"},

	// Why a decision was refused (excText).
	{"xe_transaction_ids", "Tick at least one exception (at most 100), each once.", "Hãy chọn ít nhất một ngoại lệ (tối đa 100), mỗi ngoại lệ một lần."},
	{"xe_action", "Choose a decision from the list.", "Hãy chọn một cách xử lý trong danh sách."},
	{"xe_note", "Say why in the note (at most 500 bytes, no control characters).", "Hãy ghi lý do (tối đa 500 byte, không có ký tự điều khiển)."},
	{"xe_q", "The memo search is at most 100 characters of text.", "Nội dung tìm kiếm tối đa 100 ký tự."},
	{"xe_resolved", "Already resolved.", "Đã được xử lý trước đó."},
	{"xe_not_found", "Not found among this company's exceptions.", "Không tìm thấy trong các ngoại lệ của công ty này."},
	{"xe_not_underpaid", "Only an underpaid transfer's remainder can be written off or asked for.", "Chỉ có thể xóa nợ hoặc yêu cầu trả phần còn thiếu của giao dịch trả thiếu."},
	{"xe_nothing_left", "The order lacks nothing any more (paid, cancelled or voided): ignore the exception instead.", "Đơn hàng không còn thiếu (đã thanh toán, đã hủy hoặc đã vô hiệu): hãy bỏ qua ngoại lệ."},
	{"xe_refund_transfer", "Money that went out with a refund's reference can only be ignored.", "Tiền đã chuyển đi với mã hoàn tiền chỉ có thể bỏ qua."},
	{"xe_invoice", "Type the invoice number of an existing order, or choose a suggested order.", "Hãy nhập mã hóa đơn của một đơn hàng có thật, hoặc chọn một đơn hàng gợi ý."},
	{"xe_order_closed", "That order is no longer awaiting payment (paid, cancelled or voided): choose another.", "Đơn hàng này không còn chờ thanh toán (đã thanh toán, đã hủy hoặc đã vô hiệu): hãy chọn đơn khác."},
	{"xe_order_not_found", "That order is not one of this company's.", "Đơn hàng này không thuộc công ty này."},
	{"xe_applied", "This transfer already counts toward its order: refund it, ignore it or settle the order's remainder instead.", "Giao dịch này đã được tính vào đơn hàng của nó: hãy hoàn tiền, bỏ qua hoặc xử lý phần còn thiếu của đơn hàng."},
	{"xe_no_vas", "Virtual accounts are not available on this server: the remainder cannot be asked for.", "Máy chủ này không hỗ trợ tài khoản ảo: không thể yêu cầu trả phần còn thiếu."},
}

// excText says why an exception's decision was refused, in the page's
// language where the refusal is one of those above; else the error's own
// message.
func excText(l lang, err error) string {
	var e *recon.Error
	if !errors.As(err, &e) {
		return recon.ErrorMessage(err)
	}
	if e.Code == recon.EINVALID && len(e.Fields) == 1 {
		for f := range e.Fields {
			if k := "xe_" + f; messages[l][k] != "" {
				return l.T(k)
			}
		}
	}
	m := e.Message
	switch {
	case e.Code == recon.ECONFLICT && strings.Contains(m, "already resolved"), e.Code == recon.ECONFLICT && strings.Contains(m, "resolved meanwhile"):
		return l.T("xe_resolved")
	case e.Code == recon.ENOTFOUND && strings.Contains(m, "is not an exception"):
		return l.T("xe_not_found")
	case e.Code == recon.ECONFLICT && strings.Contains(m, "not underpaid"):
		return l.T("xe_not_underpaid")
	case e.Code == recon.ECONFLICT && strings.Contains(m, "with a refund's reference"):
		return l.T("xe_refund_transfer")
	case e.Code == recon.ECONFLICT && (strings.Contains(m, "already paid: nothing is left") || strings.Contains(m, "lacks nothing")):
		return l.T("xe_nothing_left")
	case e.Code == recon.ECONFLICT && strings.Contains(m, "is already applied to order"):
		return l.T("xe_applied")
	case e.Code == recon.ECONFLICT && strings.HasPrefix(m, "order ") &&
		(strings.Contains(m, "is already paid") || strings.Contains(m, "is voided") || strings.Contains(m, "is cancelled") || strings.Contains(m, "not awaiting payment")):
		return l.T("xe_order_closed")
	case e.Code == recon.ENOTFOUND && strings.HasPrefix(m, "order ") && strings.HasSuffix(m, " not found"):
		return l.T("xe_order_not_found")
	case e.Code == recon.EUNPROCESSABLE && strings.Contains(m, "virtual accounts are not available"):
		return l.T("xe_no_vas")
	}
	return e.Message
}

func init() {
	for _, m := range excMessages {
		messages["en"][m.key], messages["vi"][m.key] = m.en, m.vi
	}
}
