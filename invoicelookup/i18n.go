package invoicelookup

import (
	"net/http"
	"strings"
)

// langOf is the page's language: ?lang= when it is one the page speaks,
// else the first of Accept-Language it speaks, else Vietnamese (as the
// OAuth pages choose theirs).
func langOf(r *http.Request) string {
	if l, ok := known(r.URL.Query().Get("lang")); ok {
		return l
	}
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		if l, ok := known(tag); ok {
			return l
		}
	}
	return "vi"
}

// known maps a language tag (vi, vi-VN, en-US...) to a language of the page.
func known(tag string) (string, bool) {
	base, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
	_, ok := messages[base]
	return base, ok
}

// messages are the page's words, Vietnamese and English.
var messages = map[string]map[string]string{
	"vi": {
		"title":            "Tra cứu hóa đơn",
		"intro":            "Nhập mã tra cứu in trên hóa đơn điện tử để xem và tải hóa đơn.",
		"code":             "Mã tra cứu",
		"submit":           "Tra cứu",
		"other_lang":       "English",
		"not_found":        "Không tìm thấy hóa đơn với mã tra cứu này. Hãy kiểm tra lại mã in trên hóa đơn.",
		"rate_limited":     "Bạn đã tra cứu quá nhiều lần. Hãy thử lại sau ít phút.",
		"error":            "Đã xảy ra lỗi. Hãy thử lại sau.",
		"seller":           "Đơn vị bán hàng",
		"tax_code":         "Mã số thuế",
		"buyer":            "Người mua hàng",
		"symbol":           "Ký hiệu",
		"number":           "Số hóa đơn",
		"date":             "Ngày lập",
		"total":            "Tổng tiền thanh toán",
		"status":           "Trạng thái",
		"cqt_code":         "Mã của cơ quan thuế",
		"download_pdf":     "Tải hóa đơn (PDF)",
		"download_xml":     "Tải hóa đơn (XML)",
		"status_pending":   "Đang gửi cơ quan thuế",
		"status_issued":    "Đã phát hành",
		"status_failed":    "Bị cơ quan thuế từ chối",
		"status_cancelled": "Đã hủy",
		"status_replaced":  "Đã bị thay thế",
		"status_adjusted":  "Đã bị điều chỉnh",
		"status_draft":     "Bản nháp",
		"invoice_vat":      "Hóa đơn giá trị gia tăng",
		"invoice_sales":    "Hóa đơn bán hàng",
		"cancel_reason":    "Lý do hủy",
		"relation":         "Liên quan",
		"test":             "Hóa đơn thử nghiệm (chế độ thử nghiệm của người bán): không có giá trị pháp lý.",
	},
	"en": {
		"title":            "Invoice lookup",
		"intro":            "Enter the lookup code printed on the e-invoice to see and download it.",
		"code":             "Lookup code",
		"submit":           "Look up",
		"other_lang":       "Tiếng Việt",
		"not_found":        "No invoice has this lookup code. Check the code printed on the invoice.",
		"rate_limited":     "Too many lookups. Try again in a few minutes.",
		"error":            "Something went wrong. Try again later.",
		"seller":           "Seller",
		"tax_code":         "Tax code",
		"buyer":            "Buyer",
		"symbol":           "Symbol",
		"number":           "Invoice number",
		"date":             "Date",
		"total":            "Total payment",
		"status":           "Status",
		"cqt_code":         "Tax authority's code",
		"download_pdf":     "Download the invoice (PDF)",
		"download_xml":     "Download the invoice (XML)",
		"status_pending":   "Being sent to the tax authority",
		"status_issued":    "Issued",
		"status_failed":    "Refused by the tax authority",
		"status_cancelled": "Cancelled",
		"status_replaced":  "Replaced",
		"status_adjusted":  "Adjusted",
		"status_draft":     "Draft",
		"invoice_vat":      "VAT invoice",
		"invoice_sales":    "Sales invoice",
		"cancel_reason":    "Reason for cancelling",
		"relation":         "Relation",
		"test":             "A test invoice (the seller's test mode): it has no legal value.",
	},
}
