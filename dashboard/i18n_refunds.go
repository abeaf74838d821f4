package dashboard

// The messages of API v2's refunds, orders' v2 fields and virtual accounts
// in the dashboard (refunds.go; docs/dashboard.md, Refunds), in both
// languages.
var refundMessages = []struct{ key, en, vi string }{
	{"refunds", "Refunds", "Hoàn tiền"},
	{"refund", "Refund", "Khoản hoàn tiền"},
	{"back_refunds", "All refunds", "Tất cả khoản hoàn tiền"},
	{"refunds_count_1", "refund", "khoản hoàn tiền"},
	{"refunds_count_n", "refunds", "khoản hoàn tiền"},
	{"no_refunds", "No refunds.", "Chưa có khoản hoàn tiền nào."},
	{"refunded", "Refunded", "Đã hoàn"},

	// Statuses (docs/api-v2.md, Refunds).
	{"rs_pending_approval", "Waiting for approval", "Chờ duyệt"},
	{"rs_pending", "To send", "Chờ chuyển tiền"},
	{"rs_processing", "Sending", "Đang chuyển"},
	{"rs_succeeded", "Refunded", "Đã hoàn tiền"},
	{"rs_failed", "Failed", "Thất bại"},
	{"rs_rejected", "Rejected", "Bị từ chối"},
	{"rs_cancelled", "Cancelled", "Đã hủy"},

	// The rules a request or an action breaks (422), and four eyes (403).
	{"rr_amount_exceeds_refundable", "The amount is more than what is left to refund.", "Số tiền lớn hơn số tiền còn có thể hoàn."},
	{"rr_already_refunded", "Everything received is already refunded, or held by refunds in progress.", "Toàn bộ số tiền đã nhận đã được hoàn hoặc đang được hoàn."},
	{"rr_nothing_to_refund", "No money was received: there is nothing to refund.", "Chưa nhận được tiền nên không có gì để hoàn."},
	{"rr_invalid_state", "The refund's status no longer allows this.", "Trạng thái hiện tại của khoản hoàn tiền không cho phép thao tác này."},
	{"rr_receiver_required", "Enter the receiver's account: the bank data does not say whose account the money came from.", "Hãy nhập tài khoản người nhận: dữ liệu ngân hàng không cho biết tiền đến từ tài khoản nào."},
	{"rr_own", "You requested this refund: another Admin or SuperAdmin must approve or reject it.", "Bạn là người yêu cầu khoản hoàn tiền này: một Quản trị viên khác phải duyệt hoặc từ chối."},
	// Refused fields of the request.
	{"rf_amount", "The amount must be a whole number of VND, at least 1; leave it empty to refund everything refundable.", "Số tiền phải là số nguyên VND, tối thiểu 1; để trống để hoàn toàn bộ số tiền có thể hoàn."},
	{"rf_reason", "Say why the money goes back (at most 255 characters, no control characters).", "Hãy nhập lý do hoàn tiền (tối đa 255 ký tự, không có ký tự điều khiển)."},
	{"rf_receiver_bank_bin", "The bank's BIN is the 6 digits of the receiving bank (e.g. 970436 for Vietcombank).", "Mã BIN là 6 chữ số của ngân hàng nhận (ví dụ 970436 của Vietcombank)."},
	{"rf_receiver_account_number", "The account number is 1 to 19 letters or digits.", "Số tài khoản gồm 1 đến 19 chữ cái hoặc chữ số."},
	{"rf_receiver_account_name", "The account holder's name is required, at most 100 characters.", "Cần nhập tên chủ tài khoản, tối đa 100 ký tự."},
	// Refused filters of the list.
	{"rl_status", "Choose a status from the list.", "Hãy chọn một trạng thái trong danh sách."},
	{"rl_from_date", "Dates are written YYYY-MM-DD.", "Ngày được viết theo dạng YYYY-MM-DD."},
	{"rl_to_date", "Dates are written YYYY-MM-DD.", "Ngày được viết theo dạng YYYY-MM-DD."},
	{"rl_page", "The page number is out of range.", "Số trang không hợp lệ."},
	{"rl_transaction", "The transaction is a transaction's number.", "Giao dịch phải là mã số của một giao dịch."},
	{"rl_order", "There is no order with this invoice number.", "Không có đơn hàng nào có số hóa đơn này."},

	// A refund's page and the request form.
	{"rf_new", "Request a refund", "Yêu cầu hoàn tiền"},
	{"rf_refundable", "Refundable", "Có thể hoàn"},
	{"rf_reason_label", "Reason", "Lý do"},
	{"rf_receiver", "Receiver", "Người nhận"},
	{"rf_bank_bin", "Bank BIN", "Mã BIN ngân hàng"},
	{"rf_bank_bin_help", "6 digits: Vietcombank 970436, VietinBank 970415, BIDV 970418, Techcombank 970407, MB 970422, ACB 970416.", "6 chữ số: Vietcombank 970436, VietinBank 970415, BIDV 970418, Techcombank 970407, MB 970422, ACB 970416."},
	{"rf_account_number", "Account number", "Số tài khoản"},
	{"rf_account_name", "Account holder", "Chủ tài khoản"},
	{"rf_amount_help", "Leave empty to refund everything refundable; less is a partial refund.", "Để trống để hoàn toàn bộ số tiền có thể hoàn; số nhỏ hơn là hoàn một phần."},
	{"rf_receiver_help", "The bank data does not say whose account the money came from: enter the account to send it back to.", "Dữ liệu ngân hàng không cho biết tiền đến từ tài khoản nào: hãy nhập tài khoản sẽ nhận lại tiền."},
	{"rf_threshold_note", "A refund of this amount or more waits for another Admin's approval.", "Khoản hoàn tiền từ mức này trở lên phải chờ một Quản trị viên khác duyệt."},
	{"rf_drawn_on", "Drawn on", "Trích từ"},
	{"rf_requested_by", "Requested by", "Người yêu cầu"},
	{"rf_decided_by", "Approved or rejected by", "Người duyệt hoặc từ chối"},
	{"rf_settled_by", "Money left with", "Tiền đã chuyển đi bằng"},
	{"rf_failure", "Why it failed", "Lý do thất bại"},
	{"rf_updated", "Last change", "Thay đổi gần nhất"},
	{"rf_own_note", "You requested this refund: another Admin or SuperAdmin approves or rejects it.", "Bạn là người yêu cầu khoản hoàn tiền này: một Quản trị viên khác sẽ duyệt hoặc từ chối."},
	{"rf_approval_note", "This refund waits for approval by an Admin or SuperAdmin other than who requested it.", "Khoản hoàn tiền này đang chờ một Quản trị viên khác người yêu cầu duyệt."},
	{"rf_send_title", "Send this refund from your bank", "Chuyển khoản hoàn tiền này từ ngân hàng của bạn"},
	{"rf_send_intro", "Recon does not send money. Make this transfer from your bank; the refund succeeds when the transfer shows in your bank data.", "Recon không chuyển tiền. Hãy thực hiện chuyển khoản này từ ngân hàng của bạn; khoản hoàn tiền hoàn tất khi giao dịch xuất hiện trong dữ liệu ngân hàng."},
	{"rf_from_account", "From account", "Từ tài khoản"},
	{"rf_memo_help", "Write the memo exactly: it is how Recon recognises the transfer. The amount must be exactly this.", "Ghi nội dung chuyển khoản đúng như trên: Recon dựa vào đó để nhận ra giao dịch. Số tiền phải đúng bằng số này."},
	{"rf_qr_alt", "VietQR of the receiver's account with the amount and the memo", "Mã VietQR của tài khoản người nhận, kèm số tiền và nội dung"},
	{"rf_qr_caption", "Scan with your banking app.", "Quét bằng ứng dụng ngân hàng."},
	{"rf_everything", "Everything refundable", "Toàn bộ số tiền có thể hoàn"},
	{"rb_approve", "Approve", "Duyệt"},
	{"rb_reject", "Reject", "Từ chối"},
	{"rb_cancel", "Cancel the refund", "Hủy khoản hoàn tiền"},
	{"rb_request", "Request the refund", "Gửi yêu cầu hoàn tiền"},
	{"rb_continue", "Continue", "Tiếp tục"},

	// Confirmation pages.
	{"c_refund_request", "Request this refund?", "Gửi yêu cầu hoàn tiền này?"},
	{"c_refund_request_intro", "This refund will be recorded and its amount held: it can no longer be refunded again.", "Khoản hoàn tiền sẽ được ghi nhận và số tiền được giữ lại: không thể hoàn thêm lần nữa."},
	{"c_refund_approve", "Approve this refund?", "Duyệt khoản hoàn tiền này?"},
	{"c_refund_approve_intro", "Once approved, the money is to be sent to the receiver.", "Sau khi duyệt, tiền sẽ được chuyển cho người nhận."},
	{"c_refund_reject", "Reject this refund?", "Từ chối khoản hoàn tiền này?"},
	{"c_refund_reject_intro", "A rejected refund is final; its amount can be refunded again.", "Khoản hoàn tiền bị từ chối là kết thúc; số tiền có thể được hoàn lại sau."},
	{"c_refund_cancel", "Cancel this refund?", "Hủy khoản hoàn tiền này?"},
	{"c_refund_cancel_intro", "A cancelled refund is final; its amount can be refunded again. Do not send its money.", "Khoản hoàn tiền bị hủy là kết thúc; số tiền có thể được hoàn lại sau. Đừng chuyển tiền cho khoản này."},
	{"c_refund_amount", "Refund amount", "Số tiền hoàn"},
	{"c_refund_created", "Refund", "Hoàn tiền"},
	{"c_refund_created_yes", "A refund is created, to send with its memo.", "Một khoản hoàn tiền được tạo, cần chuyển với nội dung của nó."},
	{"c_refund_created_no", "No receiver: recorded as refunded outside Recon.", "Không có người nhận: ghi nhận là đã hoàn tiền ngoài Recon."},

	// The approval threshold (settings).
	{"rt_title", "Refund approval threshold", "Ngưỡng duyệt hoàn tiền"},
	{"rt_help", "A refund of this amount or more waits until an Admin or SuperAdmin other than who requested it approves it. Empty: no refund waits.", "Khoản hoàn tiền từ mức này trở lên phải chờ một Quản trị viên khác người yêu cầu duyệt. Để trống: không khoản nào phải chờ."},
	{"rt_saved", "The threshold is saved.", "Đã lưu ngưỡng duyệt."},
	{"rt_now", "Now", "Hiện tại"},
	{"rt_none", "none", "không có"},
	{"rt_label", "Threshold (VND)", "Ngưỡng (VND)"},
	{"rt_input_help", "A whole number of VND, e.g. 5000000; empty for none.", "Số nguyên VND, ví dụ 5000000; để trống nếu không dùng."},
	{"rt_invalid", "The threshold must be a whole number of VND from 1 to 1,000,000,000,000,000, or empty for none.", "Ngưỡng phải là số nguyên VND từ 1 đến 1.000.000.000.000.000, hoặc để trống nếu không dùng."},

	// An order's v2 fields and virtual accounts (docs/api-v2.md, Orders).
	{"v2_status", "Status (API v2)", "Trạng thái (API v2)"},
	{"os_pending", "Pending", "Chờ thanh toán"},
	{"os_partially_paid", "Partly paid", "Đã thanh toán một phần"},
	{"os_paid", "Paid", "Đã thanh toán"},
	{"os_cancelled", "Cancelled", "Đã hủy"},
	{"os_expired", "Expired", "Hết hạn"},
	{"expires_at", "Expires", "Hết hạn lúc"},
	{"buyer", "Buyer", "Người mua"},
	{"tax_code", "tax code", "mã số thuế"},
	{"vas", "Virtual accounts", "Tài khoản ảo"},
	{"no_vas", "No virtual accounts.", "Không có tài khoản ảo."},
	{"va_number", "Number", "Số"},
	{"va_kind", "Kind", "Loại"},
	{"va_mode", "Amount mode", "Cách tính số tiền"},
	{"va_qr", "QR", "Mã QR"},
	{"va_qr_alt", "VietQR of virtual account", "Mã VietQR của tài khoản ảo"},
	{"va_open_amount", "payer's choice", "người trả tự nhập"},
	{"vk_bank", "Bank account number", "Số tài khoản ngân hàng"},
	{"vk_memo", "Memo code", "Mã nội dung"},
	{"vm_exact", "Exact", "Đúng số tiền"},
	{"vm_partial", "Partial", "Từng phần"},
	{"vm_open", "Open", "Tự do"},
	{"vs_active", "Active", "Đang hoạt động"},
	{"vs_paid", "Paid", "Đã thanh toán"},
	{"vs_expired", "Expired", "Hết hạn"},
	{"vs_cancelled", "Cancelled", "Đã hủy"},

	// The reconciliation report (report.go).
	{"report", "Report", "Báo cáo"},
	{"rp_transfers", "Incoming transfers by outcome", "Giao dịch tiền vào theo kết quả đối soát"},
	{"rp_outcome", "Outcome", "Kết quả"},
	{"rp_count", "Count", "Số lượng"},
	{"rp_csv", "Download as CSV", "Tải về dạng CSV"},
	{"rp_refunded", "Refunded or being refunded", "Đã hoàn hoặc đang hoàn"},
	{"rp_refunds_help", "Refunds requested in the range, by status. The first line adds those that hold or sent their money.", "Các khoản hoàn tiền được yêu cầu trong khoảng thời gian, theo trạng thái. Dòng đầu cộng các khoản đang giữ hoặc đã chuyển tiền."},
	{"ro_matched", "Matched, order paid", "Khớp, đơn hàng đã thanh toán"},
	{"ro_partial", "Matched, order partly paid", "Khớp, đơn hàng thanh toán một phần"},
	{"ro_underpaid", "Underpaid", "Trả thiếu"},
	{"ro_overpaid", "Overpaid", "Trả thừa"},
	{"ro_duplicate", "Duplicate", "Trùng lặp"},
	{"ro_va_inactive", "To an inactive virtual account", "Vào tài khoản ảo không còn hiệu lực"},
	{"ro_unmatched", "Unmatched", "Không khớp"},

	// Exceptions (exceptions.go).
	{"xk_refund_transfer", "Refund transfer", "Giao dịch hoàn tiền bất thường"},
	{"x_open_refund", "Open the refund", "Xem khoản hoàn tiền"},
	{"x_pick_refund", "Refund the payer", "Hoàn tiền cho người chuyển"},
	{"x_refund_fields", "Refund to", "Hoàn tiền đến"},
	{"x_refund_help", "With the receiver's account, Recon creates a refund of this transfer and follows it until its money leaves. Without it, the resolution only records that the money went back outside Recon.", "Khi có tài khoản người nhận, Recon tạo một khoản hoàn tiền cho giao dịch này và theo dõi đến khi tiền được chuyển đi. Nếu không có, việc xử lý chỉ ghi nhận rằng tiền đã được hoàn ngoài Recon."},
	{"x_refund_transfer_note", "Money went out with a refund's reference but settled no refund: deal with it at the bank, then ignore it here with a note.", "Tiền đã được chuyển đi với mã của một khoản hoàn tiền nhưng không khớp khoản nào: hãy xử lý với ngân hàng, sau đó bỏ qua tại đây kèm ghi chú."},
}

func init() {
	for _, m := range refundMessages {
		messages["en"][m.key], messages["vi"][m.key] = m.en, m.vi
	}
}
