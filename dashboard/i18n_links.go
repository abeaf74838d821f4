package dashboard

// The messages of the links between pages (links.go; docs/dashboard.md,
// "Links between pages"): the transfers' states and orders, the customer's
// page, the notifications' orders and targets, the tiles' lists.
var linkMessages = []struct{ key, en, vi string }{
	{"lk_state", "State", "Trạng thái khớp"},
	{"lk_order_state", "Order and state", "Đơn hàng và trạng thái"},
	{"lk_transfers", "Transfers", "Giao dịch chuyển khoản"},
	{"lk_no_transfers", "No transfer has paid or named these orders yet.", "Chưa có giao dịch nào thanh toán hoặc ghi mã của các đơn hàng này."},
	{"lk_no_exceptions", "No exception.", "Không có ngoại lệ."},
	{"lk_customer", "Customer", "Khách hàng"},
	{"lk_customer_page", "Customer's page", "Trang khách hàng"},
	{"lk_all_orders", "All the customer's orders", "Tất cả đơn hàng của khách"},
	{"lk_newest_transfers", "The newest 50 transfers are shown.", "Chỉ hiện 50 giao dịch mới nhất."},
	{"lk_target", "Sent to", "Gửi tới"},
	{"lk_no_target", "No address set (held for recon listen in test mode)", "Chưa đặt địa chỉ nhận (ở chế độ thử, chờ recon listen)"},
	{"lk_notifications_1", "notification", "thông báo"},
	{"lk_notifications_n", "notifications", "thông báo"},
	{"lk_direction", "Direction", "Chiều tiền"},
	{"lk_dir_in", "Money in", "Tiền vào"},
	{"lk_dir_out", "Money out", "Tiền ra"},
	{"lk_payment", "Payment", "Thanh toán"},
	{"lk_order_search_help", "Invoice number, order id, description, customer or payment code (DH12345).",
		"Số hóa đơn, mã đơn, mô tả, khách hàng hoặc mã thanh toán (DH12345)."},
	{"lk_code_found", "No order holds these words; these are the orders of the payment code found in them:", "Không đơn hàng nào chứa nội dung này; đây là các đơn hàng của mã thanh toán tìm thấy trong đó:"},
	{"lk_code_transfers", "Transfers whose memo carries the code", "Giao dịch có mã trong nội dung chuyển khoản"},
	{"lk_oc_matched", "paid in full", "đã trả đủ"},
	{"lk_oc_underpaid", "underpaid", "trả thiếu"},
	{"lk_oc_overpaid", "overpaid", "trả thừa"},
	{"lk_oc_partial", "part payment", "trả một phần"},
	{"lk_oc_duplicate", "duplicate payment", "trả trùng"},
	{"lk_oc_va_inactive", "inactive virtual account", "tài khoản ảo hết hiệu lực"},
	{"lk_oc_unmatched", "no order", "không có đơn"},
}

func init() {
	for _, m := range linkMessages {
		messages["en"][m.key], messages["vi"][m.key] = m.en, m.vi
	}
}
