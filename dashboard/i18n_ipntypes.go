package dashboard

import (
	"strings"

	"recon"
)

// The messages of the IPN target's notification types (settings.go; the
// types: docs/api-v2.md, Notifications), in both languages: each type is
// shown by its name in the page's language, its code only in the form.
var ipnTypeMessages = []struct{ key, en, vi string }{
	{"notification_types", "Notifications sent to this address", "Thông báo gửi đến địa chỉ này"},
	{"nt_order_paid", "Order paid in full", "Đơn hàng đã được thanh toán đủ"},
	{"nt_transaction_void", "Payment of an order voided", "Thanh toán của đơn hàng bị hủy"},
	{"nt_order_partially_paid", "Order partly paid (one transfer of several)", "Đơn hàng được thanh toán một phần (một trong nhiều lần chuyển khoản)"},
	{"nt_order_expired", "Order expired unpaid", "Đơn hàng hết hạn khi chưa thanh toán đủ"},
	{"nt_refund_succeeded", "Refund sent to the customer", "Đã hoàn tiền cho khách hàng"},
	{"nt_refund_failed", "Refund failed", "Hoàn tiền không thành công"},
	{"nt_invoice_issued", "E-invoice issued (accepted by the tax authority)", "Hóa đơn điện tử đã được cấp mã (cơ quan thuế chấp nhận)"},
	{"nt_invoice_failed", "E-invoice refused", "Hóa đơn điện tử bị từ chối"},
	{"nt_help", "Check at least one. An address saved before these choices existed receives the first two, exactly as before.",
		"Chọn ít nhất một loại. Địa chỉ đã lưu trước khi có các lựa chọn này nhận hai loại đầu tiên, đúng như trước đây."},
}

func init() {
	for _, m := range ipnTypeMessages {
		messages["en"][m.key], messages["vi"][m.key] = m.en, m.vi
	}
}

// ipnTypeView is one checkbox of the IPN form: the type's code (the form's
// value), the key of its name, and whether the target receives it.
type ipnTypeView struct {
	Code, Key string
	Checked   bool
}

// ipnTypeViews lists every notification type, those in chosen checked.
func ipnTypeViews(chosen []string) []ipnTypeView {
	out := make([]ipnTypeView, len(recon.IPNTypes))
	for i, t := range recon.IPNTypes {
		out[i] = ipnTypeView{Code: t, Key: "nt_" + strings.ToLower(t)}
		for _, c := range chosen {
			if c == t {
				out[i].Checked = true
			}
		}
	}
	return out
}
