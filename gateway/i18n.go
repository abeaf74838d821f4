package gateway

import (
	"net/http"
	"net/url"
)

// The payer's pages (the hosted checkout page and its error page) speak one
// language at a time: Vietnamese by default, English when the payer picks
// it (?lang=en, remembered in a cookie): docs/api.md, "The checkout page".

// langCookie remembers the payer's language choice.
const langCookie = "recon_checkout_lang"

// pageText is every word the payer reads, in Vietnamese and English. Both
// languages have the same keys (TestPageTextComplete).
var pageText = map[string]map[string]string{
	"vi": {
		"title":           "Thanh toán đơn hàng",
		"other_lang":      "English",
		"sandbox":         "Môi trường thử nghiệm: không chuyển tiền thật",
		"pay_to":          "Thanh toán cho",
		"order":           "Đơn hàng",
		"awaiting":        "Đang chờ thanh toán",
		"paid":            "Đã thanh toán",
		"cancelled":       "Đã huỷ",
		"expired":         "Đã hết hạn",
		"received":        "Đã nhận",
		"still_due":       "Còn lại",
		"expires_in":      "Hết hạn sau",
		"pay_by":          "Hạn thanh toán",
		"days":            "ngày",
		"expired_text":    "Đơn hàng này đã hết hạn thanh toán. Đừng chuyển tiền cho đơn này: hãy quay lại cửa hàng để đặt lại.",
		"cancelled_text":  "Đơn hàng này đã bị huỷ. Đừng chuyển tiền cho đơn này.",
		"paid_text":       "Cửa hàng đã nhận đủ tiền. Cảm ơn bạn!",
		"scan":            "Quét mã bằng ứng dụng ngân hàng",
		"save_qr":         "Lưu mã QR",
		"open_app":        "Mở ứng dụng ngân hàng",
		"open_app_note":   "Các ứng dụng này mở sẵn giao dịch với số tài khoản, số tiền và nội dung. Với ứng dụng khác: lưu mã QR rồi chọn ảnh đó trong mục quét mã QR của ứng dụng.",
		"transfer":        "Chuyển khoản",
		"bank":            "Ngân hàng",
		"va_number":       "Số tài khoản ảo",
		"holder":          "Chủ tài khoản",
		"account":         "Số tài khoản",
		"amount":          "Số tiền",
		"or_part":         "hoặc một phần",
		"memo":            "Nội dung chuyển khoản",
		"no_memo":         "Không cần: số tài khoản ảo đã xác định đơn hàng",
		"copy":            "Sao chép",
		"copied":          "Đã sao chép",
		"memo_note":       "Ghi đúng nội dung chuyển khoản để đơn hàng được xác nhận tự động.",
		"refresh_note":    "Trang tự cập nhật khi cửa hàng nhận được tiền.",
		"back_to_shop":    "Quay lại cửa hàng",
		"cancel":          "Huỷ thanh toán",
		"err_title":       "Không thể thanh toán",
		"err_link":        "Liên kết thanh toán không đúng hoặc đã hết hạn",
		"err_link_text":   "Hãy kiểm tra lại đường dẫn, hoặc quay lại cửa hàng để nhận liên kết mới. Đừng chuyển tiền theo một liên kết không mở được.",
		"err_request":     "Không thể bắt đầu thanh toán",
		"err_request_txt": "Cửa hàng đã gửi một yêu cầu thanh toán không hợp lệ. Hãy quay lại cửa hàng và thử lại; nếu vẫn lỗi, hãy báo cho cửa hàng.",
		"err_closed":      "Cửa hàng tạm thời không nhận thanh toán",
		"err_closed_text": "Hãy liên hệ cửa hàng để biết cách thanh toán khác.",
		"err_busy":        "Quá nhiều yêu cầu",
		"err_busy_text":   "Hãy thử lại sau ít phút.",
		"err_server":      "Đã xảy ra lỗi",
		"err_server_text": "Hệ thống thanh toán đang gặp sự cố. Hãy thử lại sau ít phút.",
		"err_details":     "Chi tiết kỹ thuật cho cửa hàng",
		"err_code":        "Mã lỗi",
	},
	"en": {
		"title":           "Pay for order",
		"other_lang":      "Tiếng Việt",
		"sandbox":         "Test mode: do not send real money",
		"pay_to":          "Pay to",
		"order":           "Order",
		"awaiting":        "Awaiting payment",
		"paid":            "Paid",
		"cancelled":       "Cancelled",
		"expired":         "Expired",
		"received":        "Received",
		"still_due":       "Still due",
		"expires_in":      "Expires in",
		"pay_by":          "Pay by",
		"days":            "days",
		"expired_text":    "This order can no longer be paid. Do not send money for it: go back to the shop to order again.",
		"cancelled_text":  "This order was cancelled. Do not send money for it.",
		"paid_text":       "The shop has received the full amount. Thank you!",
		"scan":            "Scan with your banking app",
		"save_qr":         "Save the QR",
		"open_app":        "Open your banking app",
		"open_app_note":   "These apps open the transfer with the account, amount and memo filled in. With another app: save the QR, then pick that image in the app's QR scanner.",
		"transfer":        "Bank transfer",
		"bank":            "Bank",
		"va_number":       "Virtual account number",
		"holder":          "Account holder",
		"account":         "Account number",
		"amount":          "Amount",
		"or_part":         "or part of it",
		"memo":            "Transfer memo",
		"no_memo":         "None needed: the virtual account names the order",
		"copy":            "Copy",
		"copied":          "Copied",
		"memo_note":       "Write the memo exactly so that the payment is confirmed automatically.",
		"refresh_note":    "This page updates itself when the shop receives the money.",
		"back_to_shop":    "Back to the shop",
		"cancel":          "Cancel the payment",
		"err_title":       "Payment not possible",
		"err_link":        "This payment link is wrong or has expired",
		"err_link_text":   "Check the link, or go back to the shop for a new one. Do not send money for a link that does not open.",
		"err_request":     "The payment could not start",
		"err_request_txt": "The shop sent a payment request that could not be accepted. Go back to the shop and try again; if it fails again, tell the shop.",
		"err_closed":      "The shop is not taking payments at the moment",
		"err_closed_text": "Contact the shop for another way to pay.",
		"err_busy":        "Too many requests",
		"err_busy_text":   "Try again in a few minutes.",
		"err_server":      "Something went wrong",
		"err_server_text": "The payment system has a problem. Try again in a few minutes.",
		"err_details":     "Technical details for the shop",
		"err_code":        "Error code",
	},
}

// pageLang is the language of a payer's page: ?lang=vi|en (remembered in
// a cookie for the next pages), else the cookie, else Vietnamese.
func pageLang(w http.ResponseWriter, r *http.Request) string {
	if l := r.URL.Query().Get("lang"); pageText[l] != nil {
		http.SetCookie(w, &http.Cookie{Name: langCookie, Value: l, Path: "/", MaxAge: 365 * 24 * 3600,
			HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
		return l
	}
	if c, err := r.Cookie(langCookie); err == nil && pageText[c.Value] != nil {
		return c.Value
	}
	return "vi"
}

// otherLang is the language the switch offers, and the page's URL in it.
func otherLang(r *http.Request, lang string) (string, string) {
	other := "en"
	if lang == "en" {
		other = "vi"
	}
	q := r.URL.Query()
	q.Set("lang", other)
	u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
	return other, u.String()
}
