package oauth

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/ory/fosite"

	"recon"
)

// lang is a language of the login and consent page and the error page:
// "vi" (the default) or "en" (docs/api.md, "The consent page").
type lang string

// langOf is the language of a page: the first of the authorization
// request's ui_locales (OpenID Connect Core §3.1.2.1: space-separated, in
// order of preference; the page keeps it in its hidden fields and its
// language links) the page speaks, else the first of Accept-Language it
// speaks, else Vietnamese.
func langOf(r *http.Request, form url.Values) lang {
	for _, tag := range strings.Fields(form.Get("ui_locales")) {
		if l, ok := known(tag); ok {
			return l
		}
	}
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		if l, ok := known(tag); ok {
			return l
		}
	}
	return "vi"
}

// known maps a language tag (vi, vi-VN, en-US...) to a language of the pages.
func known(tag string) (lang, bool) {
	base, _, _ := strings.Cut(strings.ToLower(tag), "-")
	l := lang(base)
	_, ok := messages[l]
	return l, ok
}

// T is the message key in the language (the key itself when missing, which
// TestConsentPageSpeaksBothLanguages forbids).
func (l lang) T(key string) string {
	if m, ok := messages[l][key]; ok {
		return m
	}
	return key
}

// messages are the words of the pages.
var messages = map[lang]map[string]string{
	"vi": {
		"title":          "Đăng nhập Recon",
		"heading":        "muốn truy cập tài khoản Recon của bạn",
		"intro":          "Nếu bạn cho phép, %s sẽ có thể:",
		"email":          "Địa chỉ e-mail",
		"password":       "Mật khẩu",
		"allow":          "Cho phép",
		"deny":           "Từ chối",
		"choose":         "Hãy chọn Cho phép hoặc Từ chối.",
		"wrong_login":    "Địa chỉ e-mail hoặc mật khẩu không đúng.",
		"throttled":      "Đăng nhập sai quá nhiều lần. Hãy thử lại sau %d giây.",
		"other_language": "English",
		"error_title":    "Recon – lỗi cấp quyền",
		"error_heading":  "Không thể hoàn tất yêu cầu đăng nhập này",
		"error_back":     "Hãy quay lại ứng dụng bạn vừa dùng và thử lại.",
		"error_detail":   "Chi tiết kỹ thuật (tiếng Anh):",
		"server_error":   "Máy chủ không xử lý được yêu cầu. Hãy thử lại sau.",
	},
	"en": {
		"title":          "Sign in to Recon",
		"heading":        "wants to access your Recon account",
		"intro":          "If you allow it, %s will be able to:",
		"email":          "E-mail",
		"password":       "Password",
		"allow":          "Allow",
		"deny":           "Deny",
		"choose":         "Choose Allow or Deny.",
		"wrong_login":    "The e-mail address or password is wrong.",
		"throttled":      "Too many failed sign-in attempts. Try again in %d seconds.",
		"other_language": "Tiếng Việt",
		"error_title":    "Recon – authorization error",
		"error_heading":  "This sign-in request cannot be completed",
		"error_back":     "Go back to the application you came from and try again.",
		"error_detail":   "Technical detail:",
		"server_error":   "The server could not handle the request. Please try again later.",
	},
}

// errorText says in the language what an error of the authorization
// endpoint means, by its RFC 6749 §4.1.2.1 code; fosite's own description
// is shown beside it as technical detail.
var errorText = map[lang]map[string]string{
	"vi": {
		"invalid_request":           "Yêu cầu cấp quyền không hợp lệ hoặc thiếu tham số.",
		"invalid_client":            "Không tìm thấy ứng dụng này, hoặc ứng dụng đã bị thu hồi.",
		"unauthorized_client":       "Ứng dụng này không được phép dùng cách cấp quyền này.",
		"access_denied":             "Yêu cầu đã bị từ chối.",
		"unsupported_response_type": "Ứng dụng yêu cầu một kiểu phản hồi không được hỗ trợ.",
		"unsupported_response_mode": "Ứng dụng yêu cầu một chế độ phản hồi không được hỗ trợ.",
		"invalid_scope":             "Ứng dụng yêu cầu quyền không hợp lệ hoặc không được phép.",
		"server_error":              "Máy chủ không xử lý được yêu cầu. Hãy thử lại sau.",
		"temporarily_unavailable":   "Máy chủ tạm thời không phục vụ được. Hãy thử lại sau.",
		"":                          "Yêu cầu cấp quyền không hợp lệ.",
	},
	"en": {
		"invalid_request":           "The authorization request is invalid or lacks a parameter.",
		"invalid_client":            "This application is unknown or has been revoked.",
		"unauthorized_client":       "This application may not use this kind of authorization.",
		"access_denied":             "The request was denied.",
		"unsupported_response_type": "The application asked for a response type that is not supported.",
		"unsupported_response_mode": "The application asked for a response mode that is not supported.",
		"invalid_scope":             "The application asked for a scope that is invalid or not allowed.",
		"server_error":              "The server could not handle the request. Please try again later.",
		"temporarily_unavailable":   "The server is temporarily unavailable. Please try again later.",
		"":                          "The authorization request is invalid.",
	},
}

// errorSummary is errorText for rfc's code.
func (l lang) errorSummary(rfc *fosite.RFC6749Error) string {
	if s, ok := errorText[l][rfc.ErrorField]; ok {
		return s
	}
	return errorText[l][""]
}

// scopeText says in plain words what each scope lets a client do
// (docs/api.md, "The consent page"). Every scope of recon.Scopes has its words in both
// languages (TestConsentPageSpeaksBothLanguages), so a new scope cannot
// reach the page undescribed.
var scopeText = map[string]map[lang]string{
	recon.ScopeCompany: {
		"vi": "Xem và thay đổi cài đặt của công ty bạn",
		"en": "See and change your company's settings",
	},
	recon.ScopeTransactionRead: {
		"vi": "Xem giao dịch ngân hàng, hàng đợi ngoại lệ và báo cáo đối soát của công ty bạn",
		"en": "See your company's bank transactions, its exception queue and its reconciliation report",
	},
	recon.ScopeTransactionWrite: {
		"vi": "Thêm giao dịch ngân hàng: đẩy từ nguồn dữ liệu ngân hàng, tải sao kê lên, chuyển khoản thử (sandbox)",
		"en": "Add bank transactions: bank-feed pushes, statement uploads and sandbox transfers",
	},
	recon.ScopeBankAccountRead: {
		"vi": "Xem tài khoản ngân hàng, số dư và các chỗ số dư không liên tục (số dư không khớp với số dư trước) của công ty bạn",
		"en": "See your company's bank accounts, their balances and balance discontinuities",
	},
	recon.ScopeWebhookRead: {
		"vi": "Xem cài đặt webhook của bạn",
		"en": "See your webhook settings",
	},
	recon.ScopeWebhookWrite: {
		"vi": "Thay đổi cài đặt webhook của bạn",
		"en": "Change your webhook settings",
	},
	recon.ScopeDeliveryRead: {
		"vi": "Xem các thông báo (IPN, webhook) đã gửi đi, nội dung và thống kê của chúng",
		"en": "See the notifications (IPN, webhooks) sent out, their payloads and their statistics",
	},
	recon.ScopeDeliveryWrite: {
		"vi": "Gửi lại thông báo và gửi thông báo thử",
		"en": "Resend notifications and send test notifications",
	},
	recon.ScopeHub: {
		"vi": "Dùng cổng liên kết ngân hàng: khách hàng của bạn, đường dẫn liên kết, tài khoản đã liên kết và giao dịch của chúng, webhook và nhận diện thương hiệu của trang liên kết",
		"en": "Use the bank-linking hub: your customers, link tokens, linked bank accounts and their transactions, its webhook and the link page's branding",
	},
	recon.ScopeExceptionWrite: {
		"vi": "Xử lý thủ công các giao dịch chưa khớp và các ngoại lệ khác, dưới tên bạn",
		"en": "Resolve unmatched and other exception transfers by hand, in your name",
	},
	recon.ScopeOrderRead: {
		"vi": "Xem đơn hàng của công ty bạn, tài khoản ảo và các khoản thanh toán của chúng",
		"en": "See your company's orders, their virtual accounts and their payments",
	},
	recon.ScopeOrderWrite: {
		"vi": "Tạo và huỷ đơn hàng và tài khoản ảo của chúng",
		"en": "Create and cancel orders and their virtual accounts",
	},
	recon.ScopeRefundRead: {
		"vi": "Xem các khoản hoàn tiền của công ty bạn",
		"en": "See your company's refunds",
	},
	recon.ScopeRefundWrite: {
		"vi": "Yêu cầu, huỷ và (với vai trò quản trị) duyệt hoặc từ chối hoàn tiền cho người trả",
		"en": "Request and cancel refunds to payers and (as an administrator) approve or reject them",
	},
	recon.ScopeInvoiceRead: {
		"vi": "Xem hóa đơn điện tử của công ty bạn, bản XML và PDF của chúng",
		"en": "See your company's e-invoices, their XML and PDF",
	},
	recon.ScopeInvoiceWrite: {
		"vi": "Lập, phát hành, thay thế, điều chỉnh và huỷ hóa đơn điện tử của công ty bạn",
		"en": "Create, issue, replace, adjust and cancel your company's e-invoices",
	},
	recon.ScopeProfile: {
		"vi": "Xem địa chỉ e-mail và vai trò của bạn",
		"en": "See your e-mail address and role",
	},
	recon.ScopeOfflineAccess: {
		"vi": "Giữ quyền truy cập cả khi bạn không dùng ứng dụng",
		"en": "Keep access when you are not using it",
	},
}

// scopeDescription is scopeText in the language, or the scope itself.
func (l lang) scopeDescription(scope string) string {
	if s, ok := scopeText[scope][l]; ok {
		return s
	}
	return scope
}
